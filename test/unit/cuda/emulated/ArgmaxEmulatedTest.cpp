//===- ArgmaxEmulatedTest.cpp - greedy decoding's choice on the device ----===//
//
// The device code of txrt_cuda_argmax_rows (runtime/cuda/kernels/
// ArgmaxKernels.cuh, greedy decoding's choice on a GPU) run on the host
// under CudaEmulation.h with Argmax.cu's launch, against the driver's host
// search: AllowedIds::choose (runtime/driver/decoding/Decoding.h) and, for
// the rule itself, AllowedIds::apply followed by std::max_element, which is
// how the search chose before. Rows wider and narrower than a block, ties
// within a thread, across warps and across the block, NaN (the first wins,
// as in torch.argmax) at id 0 and elsewhere, rows of -infinity, the emittable
// bound and excluded ids holding the largest logit, rows a stride apart
// (lm_step's last position of several), and choices from non-finite logits
// flagged as -1 - id for the caller to refuse.
//
//===----------------------------------------------------------------------===//
#include "EmulatedTestUtil.h"

#include "kernels/ArgmaxKernels.cuh"

#include "decoding/Decoding.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace emu_test;
using namespace txrt::cuda;
using namespace txrt::cuda::argmax;

namespace {

const float kInf = std::numeric_limits<float>::infinity();

/// The kernel's ids for `rows` rows of `vocab` logits `stride` apart.
Ints kernelIds(const Floats &logits, int64_t rows, int64_t vocab,
               int64_t stride, const txrt::driver::AllowedIds &allowed) {
  AllowedIds device{allowed.emittable, int32_t(allowed.excluded.size()), {}};
  std::copy(allowed.excluded.begin(), allowed.excluded.end(),
            device.excluded);
  Ints ids(size_t(rows), -1);
  launch(argmaxLaunch(rows), [&] {
    argmaxRowsKernel(logits.data(), vocab, stride, device, ids.data());
  });
  return ids;
}

/// torch.argmax over apply()'s row: the first NaN, else the first largest
/// (std::max_element over a row without NaN).
int32_t appliedMaxElement(const float *row, int64_t vocab,
                          const txrt::driver::AllowedIds &allowed) {
  Floats copy(row, row + vocab);
  allowed.apply(copy.data(), 1, vocab);
  auto nan = std::find_if(copy.begin(), copy.end(),
                          [](float v) { return std::isnan(v); });
  if (nan != copy.end())
    return int32_t(nan - copy.begin());
  return int32_t(std::max_element(copy.begin(), copy.end()) - copy.begin());
}

void expectSameChoices(const Floats &logits, int64_t rows, int64_t vocab,
                       int64_t stride, const txrt::driver::AllowedIds &allowed,
                       const std::string &what) {
  const Ints got = kernelIds(logits, rows, vocab, stride, allowed);
  for (int64_t row = 0; row < rows; ++row) {
    const float *values = logits.data() + row * stride;
    const int32_t expected = appliedMaxElement(values, vocab, allowed);
    EXPECT_EQ(allowed.choose(values, vocab), expected)
        << what << ": AllowedIds::choose, row " << row;
    // A choice whose logit is not finite comes back as -1 - id.
    const int32_t raw = got[size_t(row)];
    const int32_t id = raw < 0 ? -1 - raw : raw;
    EXPECT_EQ(id, expected) << what << ": kernel, row " << row;
    EXPECT_EQ(raw < 0, !std::isfinite(values[expected]))
        << what << ": kernel, row " << row << " (" << raw << ")";
  }
}

TEST(ArgmaxEmulatedTest, RandomRowsWiderAndNarrowerThanABlock) {
  for (int64_t vocab : {1, 7, 255, 256, 1000, 8003}) {
    const int64_t rows = 5;
    Floats logits = randomFloats(rows * vocab, 90 + uint32_t(vocab), -8, 8);
    expectSameChoices(logits, rows, vocab, vocab, {},
                      "vocab " + std::to_string(vocab));
  }
}

TEST(ArgmaxEmulatedTest, TiesGoToTheLowestId) {
  const int64_t vocab = 3000;
  // Row 0: the same thread (ids 256 apart); row 1: two warps; row 2: the
  // block's first and last thread; row 3: everything equal.
  Floats logits(4 * vocab, 0.0f);
  logits[0 * vocab + 300] = logits[0 * vocab + 556] = 5.0f;
  logits[1 * vocab + 2900] = logits[1 * vocab + 40] = 5.0f;
  logits[2 * vocab + 2047] = logits[2 * vocab + 1792] = 5.0f;
  std::fill(logits.begin() + 3 * vocab, logits.end(), 1.0f);
  expectSameChoices(logits, 4, vocab, vocab, {}, "ties");
  EXPECT_EQ(kernelIds(logits, 4, vocab, vocab, {}), (Ints{300, 40, 1792, 0}));
}

// The first NaN wins, as in torch.argmax, and is flagged: greedy decoding
// chose past a NaN that was not the largest logit (row 1's 9.0 at id 18),
// where sampling and beam search refuse the row.
TEST(ArgmaxEmulatedTest, TheFirstNaNWins) {
  const int64_t vocab = 600;
  Floats logits = randomFloats(4 * vocab, 91, -1, 1);
  logits[0 * vocab + 0] = kNaN;  // NaN first
  logits[1 * vocab + 17] = kNaN; // NaN later
  logits[1 * vocab + 18] = 9.0f;
  std::fill(logits.begin() + 2 * vocab, logits.begin() + 3 * vocab, kNaN);
  std::fill(logits.begin() + 3 * vocab, logits.end(), kNaN); // NaN but two
  logits[3 * vocab + 0] = -kInf;
  logits[3 * vocab + 599] = -1.0f;
  expectSameChoices(logits, 4, vocab, vocab, {}, "NaN");
  // Every row chooses a NaN: -1 - id, refused by the caller.
  EXPECT_EQ(kernelIds(logits, 4, vocab, vocab, {}), (Ints{-1, -18, -1, -2}));
  // Across threads, warps and the block: the lowest id of several NaNs.
  Floats spread = randomFloats(3000, 94, -1, 1);
  spread[2999] = spread[1791] = spread[300] = kNaN;
  expectSameChoices(spread, 1, 3000, 3000, {}, "NaNs apart");
  EXPECT_EQ(kernelIds(spread, 1, 3000, 3000, {})[0], -301);
}

TEST(ArgmaxEmulatedTest, MaskedIdsNeverWin) {
  const int64_t vocab = 1000;
  Floats logits = randomFloats(3 * vocab, 92, -1, 1);
  logits[0 * vocab + 950] = 50.0f; // past emittable
  logits[1 * vocab + 1] = 50.0f;   // excluded
  logits[1 * vocab + 2] = 40.0f;   // excluded
  logits[2 * vocab + 3] = 30.0f;
  txrt::driver::AllowedIds allowed{900, {1, 2}};
  expectSameChoices(logits, 3, vocab, vocab, allowed, "masked");
  EXPECT_EQ(kernelIds(logits, 3, vocab, vocab, allowed)[2], 3);
  // Every id masked but 0 and 5, and those -infinity: the search takes 0.
  Floats masked(vocab, -kInf);
  masked[950] = 1.0f;
  masked[1] = 2.0f;
  expectSameChoices(masked, 1, vocab, vocab, {900, {1}}, "all masked");
  // An excluded NaN at id 0 reads as -infinity, so it no longer wins.
  Floats first = randomFloats(vocab, 93, -1, 1);
  first[0] = kNaN;
  expectSameChoices(first, 1, vocab, vocab, {0, {0}}, "excluded NaN at 0");
  // emittable >= vocab or 0: no bound.
  expectSameChoices(logits, 3, vocab, vocab, {vocab, {}}, "emittable vocab");
  expectSameChoices(logits, 3, vocab, vocab, {5000, {7}}, "emittable past");
}

TEST(ArgmaxEmulatedTest, NonFiniteChoicesAreFlagged) {
  // Greedy decoding on a GPU printed tokens chosen from an infinite logit
  // or a row of NaN (the host search refuses them): such a choice now
  // comes back as -1 - id.
  const int64_t vocab = 300;
  Floats logits = randomFloats(4 * vocab, 95, -1, 1);
  logits[0 * vocab + 7] = kInf; // +inf wins
  std::fill(logits.begin() + vocab, logits.begin() + 2 * vocab, -kInf); // none
  logits[2 * vocab + 200] = kNaN; // a NaN past id 0 wins over a larger 5
  logits[2 * vocab + 201] = 5.0f;
  logits[3 * vocab + 0] = kNaN; // a NaN at id 0 wins
  EXPECT_EQ(kernelIds(logits, 4, vocab, vocab, {}), (Ints{-8, -1, -201, -1}));
  expectSameChoices(logits, 4, vocab, vocab, {}, "non-finite");
}

TEST(ArgmaxEmulatedTest, RowsAStrideApart) {
  // lm_step's logits [rows, fresh, vocab]: each row's last position.
  const int64_t rows = 3, fresh = 4, vocab = 513;
  Floats logits = randomFloats(rows * fresh * vocab, 94, -3, 3);
  const Floats last(logits.begin() + (fresh - 1) * vocab, logits.end());
  expectSameChoices(last, rows, vocab, fresh * vocab, {0, {3}}, "strided");
}

} // namespace
