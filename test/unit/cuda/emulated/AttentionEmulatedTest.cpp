//===- AttentionEmulatedTest.cpp - the CUDA attention kernels, emulated ---===//
//
// The device code of txrt_cuda_attention_{fwd,bwd}
// (runtime/cuda/kernels/Attention{,TensorCore}Kernels.cuh): the tensor-core
// kernels (their mma.sync emulated), the tiled CUDA-core kernels and the
// per-row ones, run on the host under CudaEmulation.h with the launches
// Attention.cu makes, and
// compared with the CPU kernel (txrt_attention_*): O, lse, dq, dk, dv at
// 1e-5. No GPU is needed, so every build checks the kernels' indexing,
// tiling, masks, fills, causal limits, grouped-query heads and dropout; a
// GPU machine runs the same cases on the device (CudaAttentionTest).
//
//===----------------------------------------------------------------------===//
#include "CudaEmulation.h"

#include "TestUtil.h"
#include "kernels/AttentionTensorCoreKernels.cuh"

#include "txrt/txrt.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

using namespace txrt::cuda;
using namespace txrt::cuda::attention;

namespace {

using Floats = std::vector<float>;

const float kInf = std::numeric_limits<float>::infinity();

struct Case {
  const char *name;
  int64_t batch, heads, kvHeads, tq, tk, headDim;
  bool padding, causal;
  float fill, dropout;
};

using txrt_test::randomFloats;

/// Equal within `tolerance` relative to the larger magnitude (at least 1);
/// -inf equals -inf.
void expectNear(const Floats &got, const Floats &want, const std::string &what,
                float tolerance = 1e-5f) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == -kInf && got[i] == -kInf)
      continue;
    const float scale = std::max(1.0f, std::fabs(want[i]));
    if (!(std::fabs(got[i] - want[i]) <= tolerance * scale) && reported++ < 5)
      ADD_FAILURE() << what << "[" << i << "]: " << got[i] << " vs " << want[i];
  }
}

/// The inputs of a case, rows wider than the heads (a packed projection).
struct Inputs {
  explicit Inputs(const Case &c)
      : ldq(c.heads * c.headDim + 3), ldkv(c.kvHeads * c.headDim + 5),
        ldo(c.heads * c.headDim), q(randomFloats(c.batch * c.tq * ldq, 70)),
        k(randomFloats(c.batch * c.tk * ldkv, 71)),
        v(randomFloats(c.batch * c.tk * ldkv, 72)),
        dO(randomFloats(c.batch * c.tq * ldo, 73)), mask(c.batch * c.tk) {
    // Padding: batch b sees its first tk - b keys; the last batch none.
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t j = 0; j < c.tk; ++j)
        mask[b * c.tk + j] = b == c.batch - 1 && c.batch > 1 ? 0 : j < c.tk - b;
  }
  int64_t ldq, ldkv, ldo;
  Floats q, k, v, dO;
  std::vector<uint8_t> mask;
};

struct Outputs {
  Floats o, lse, dq, dk, dv;
};

/// Attention.cu's three forms (TXRT_CUDA_ATTENTION): the default
/// tensor-core kernels (3xTF32, or 1xTF32 where the context allows TF32),
/// `simt` the tiled CUDA-core ones, `rows` the per-row reference.
enum class Kernels { TensorCore, TensorCoreTf32, Tiled, Rows };

const char *nameOf(Kernels kernels) {
  switch (kernels) {
  case Kernels::TensorCore:
    return "tensor cores";
  case Kernels::TensorCoreTf32:
    return "tensor cores, 1xTF32";
  case Kernels::Tiled:
    return "tiled";
  case Kernels::Rows:
    return "rows";
  }
  return "?";
}

const uint64_t kSeed = 99;
const int64_t kStep = 5, kSite = 31;

/// Sets every column of `rows` rows `ld` apart below `width` to `value`.
void fillRows(Floats &data, int64_t rows, int64_t ld, int64_t width,
              float value) {
  for (int64_t r = 0; r < rows; ++r)
    std::fill(data.begin() + r * ld, data.begin() + r * ld + width, value);
}

/// Compares the first `width` columns of each row.
void expectRowsNear(const Floats &got, const Floats &want, int64_t ld,
                    int64_t width, const std::string &what) {
  Floats a, b;
  for (size_t r = 0; r * ld < want.size(); ++r) {
    a.insert(a.end(), got.begin() + r * ld, got.begin() + r * ld + width);
    b.insert(b.end(), want.begin() + r * ld, want.begin() + r * ld + width);
  }
  expectNear(a, b, what);
}

/// The GPU test's norm-wise measure (CudaTestUtil.h): ||got - want|| /
/// ||want|| over the `width` first columns of rows `ld` apart.
double rowsNormError(const Floats &got, const Floats &want, int64_t ld,
                     int64_t width) {
  double diffNorm = 0.0, refNorm = 0.0;
  for (size_t r = 0; r * ld < want.size(); ++r)
    for (int64_t d = 0; d < width; ++d) {
      const double x = got[r * ld + d], y = want[r * ld + d];
      diffNorm += (x - y) * (x - y);
      refNorm += y * y;
    }
  return std::sqrt(diffNorm / (refNorm > 0.0 ? refNorm : 1.0));
}

void expectRowsNormNear(const Floats &got, const Floats &want, int64_t ld,
                        int64_t width, double rel, const std::string &what) {
  EXPECT_LE(rowsNormError(got, want, ld, width), rel)
      << what << ": ||gpu - cpu|| / ||cpu||";
}

/// withDims of the tensor-core kernels in 3xTF32 (Strict) or 1xTF32.
template <template <int> class Strict, template <int> class Tf32, typename F>
void withPasses(bool tf32, int64_t headDim, F &&f) {
  if (tf32)
    withDims<Tf32>(headDim, f);
  else
    withDims<Strict>(headDim, f);
}

class AttentionEmulatedTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(txrt_context_create_with_threads(2, &cpu_), TXRT_OK);
  }
  void TearDown() override { txrt_context_destroy(cpu_); }

  Outputs runCpu(const Case &c, const Inputs &in) {
    Outputs out;
    const int64_t hd = c.headDim;
    const uint8_t *mask = c.padding ? in.mask.data() : nullptr;
    const float scale = 1.0f / std::sqrt(float(hd));
    out.o.assign(c.batch * c.tq * in.ldo, 0.0f);
    out.lse.assign(c.batch * c.heads * c.tq, 0.0f);
    EXPECT_EQ(txrt_attention_fwd(
                  cpu_, kSite, c.batch, c.heads, c.kvHeads, c.tq, c.tk, hd,
                  in.q.data(), in.ldq, in.k.data(), in.ldkv, in.v.data(),
                  in.ldkv, out.o.data(), in.ldo, out.lse.data(), mask, c.tk, 0,
                  0, 1, c.causal, scale, c.fill, c.dropout, kSeed, kStep),
              TXRT_OK)
        << txrt_last_error(cpu_);
    out.dq.assign(c.batch * c.tq * in.ldq, 0.0f);
    out.dk.assign(c.batch * c.tk * in.ldkv, 0.0f);
    out.dv.assign(c.batch * c.tk * in.ldkv, 0.0f);
    EXPECT_EQ(txrt_attention_bwd(
                  cpu_, kSite + 1, kSite, c.batch, c.heads, c.kvHeads, c.tq,
                  c.tk, hd, in.q.data(), in.ldq, in.k.data(), in.ldkv,
                  in.v.data(), in.ldkv, out.o.data(), in.ldo, out.lse.data(),
                  in.dO.data(), in.ldo, out.dq.data(), in.ldq, out.dk.data(),
                  in.ldkv, out.dv.data(), in.ldkv, mask, c.tk, 0, 0, 1,
                  c.causal, scale, c.fill, c.dropout, kSeed, kStep),
              TXRT_OK)
        << txrt_last_error(cpu_);
    return out;
  }

  /// The CUDA kernels as Attention.cu launches them; `firstRow` of
  /// `batchRows`: txrt_cuda_context_set_batch_rows.
  /// `state` (a captured step's launch): the kernels derive the key from
  /// the training state it points at; the host key is left zero.
  Outputs runEmulated(const Case &c, const Inputs &in, Kernels kernels,
                      int64_t firstRow = 0, int64_t batchRows = 0,
                      const DeviceTrainState *state = nullptr) {
    const int64_t hd = c.headDim;
    Attention a = makeAttention(c.heads, c.kvHeads, c.tq, c.tk, hd,
                                c.padding ? in.mask.data() : nullptr, c.tk, 0,
                                0, 1, c.causal, 1.0f / std::sqrt(float(hd)),
                                c.fill, c.dropout, kSeed, kStep, kSite);
    if (state) {
      a.state = state;
      a.key = PhiloxStream{};
    }
    const int64_t n = c.batch * c.heads * c.tq * c.tk;
    a.offset = batchRows > 0 ? firstRow * (n / batchRows) : 0;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    Outputs out;
    out.o.assign(c.batch * c.tq * in.ldo, nan);
    out.lse.assign(c.batch * c.heads * c.tq, nan);
    const float *q = in.q.data(), *k = in.k.data(), *v = in.v.data(),
                *dO = in.dO.data();
    float *o = out.o.data(), *lse = out.lse.data();
    const int64_t ldq = in.ldq, ldkv = in.ldkv, ldo = in.ldo;
    const bool mma =
        kernels == Kernels::TensorCore || kernels == Kernels::TensorCoreTf32;
    const bool tf32 = kernels == Kernels::TensorCoreTf32;
    if (mma) {
      const Launch launch = mmaForwardLaunch(c.batch, a);
      withPasses<Mma<3>::Forward, Mma<1>::Forward>(tf32, hd, [&](auto kernel) {
        emu::launch(grid(launch), {launch.threads}, launch.sharedBytes,
                    [&] { kernel(a, q, ldq, k, ldkv, v, ldkv, o, ldo, lse); });
      });
    } else if (kernels == Kernels::Tiled) {
      const Launch launch = tiledForwardLaunch(c.batch, a);
      withDims<ForwardTiled>(hd, [&](auto kernel) {
        emu::launch(grid(launch), {launch.threads}, launch.sharedBytes,
                    [&] { kernel(a, q, ldq, k, ldkv, v, ldkv, o, ldo, lse); });
      });
    } else {
      const Launch launch = rowForwardLaunch(c.batch, a);
      emu::launch(grid(launch), {launch.threads}, launch.sharedBytes, [&] {
        attentionForward(a, q, ldq, k, ldkv, v, ldkv, o, ldo, lse);
      });
    }
    // The backward reads the CPU's O and lse, as the GPU test's does its
    // own: each direction is compared on its own.
    Outputs cpu = runCpu(c, in);
    const float *oIn = cpu.o.data(), *lseIn = cpu.lse.data();
    out.dq.assign(c.batch * c.tq * ldq, 0.0f);
    fillRows(out.dq, c.batch * c.tq, ldq, c.heads * hd, nan);
    // txrt_cuda_attention_bwd zeroes dk and dv's rows first.
    out.dk.assign(c.batch * c.tk * ldkv, 0.0f);
    out.dv.assign(c.batch * c.tk * ldkv, 0.0f);
    float *dq = out.dq.data(), *dk = out.dk.data(), *dv = out.dv.data();
    // As txrt_cuda_attention_bwd: the per-row values first, D for the
    // tensor-core kernels, with a finite fill the masked keys' exact
    // probabilities, and the rows' factors on P (rowScale), for the
    // tensor-core kernels from attentionBackwardRowScalesMma.
    const int64_t rows = c.batch * c.heads * c.tq;
    const bool finiteFill = c.fill != -kInf && c.tk > 0;
    std::vector<float> rowD(size_t(rows), nan), maskedP(size_t(rows), nan),
        rowScale(size_t(rows), nan);
    float *d = mma ? rowD.data() : nullptr;
    float *masked = finiteFill ? maskedP.data() : nullptr;
    a.rowD = d;
    a.maskedP = masked;
    const KernelLaunch pre = backwardRowsLaunch(rows);
    emu::launch({pre.blocks}, {pre.threads}, 0, [&] {
      attentionBackwardRows(a, q, ldq, k, ldkv, oIn, ldo, dO, ldo, lseIn, d,
                            masked, mma ? nullptr : rowScale.data(), rows);
    });
    if (mma) {
      const Launch scales = mmaRowScalesLaunch(c.batch, a);
      withPasses<Mma<3>::RowScales, Mma<1>::RowScales>(
          tf32, hd, [&](auto kernel) {
            emu::launch(
                grid(scales), {scales.threads}, scales.sharedBytes,
                [&] { kernel(a, q, ldq, k, ldkv, lseIn, rowScale.data()); });
          });
    }
    a.rowScale = rowScale.data();
    if (kernels != Kernels::Rows) {
      // Poison instead: the tiled dk / dv kernels write every element.
      fillRows(out.dk, c.batch * c.tk, ldkv, c.kvHeads * hd, nan);
      fillRows(out.dv, c.batch * c.tk, ldkv, c.kvHeads * hd, nan);
    }
    if (mma) {
      const Launch query = mmaQueryLaunch(c.batch, a);
      withPasses<Mma<3>::Query, Mma<1>::Query>(tf32, hd, [&](auto kernel) {
        emu::launch(grid(query), {query.threads}, query.sharedBytes, [&] {
          kernel(a, q, ldq, k, ldkv, v, ldkv, lseIn, dO, ldo, dq, ldq);
        });
      });
      const Launch keys = mmaKeysLaunch(c.batch, a);
      withPasses<Mma<3>::Keys, Mma<1>::Keys>(tf32, hd, [&](auto kernel) {
        emu::launch(grid(keys), {keys.threads}, keys.sharedBytes, [&] {
          kernel(a, q, ldq, k, ldkv, v, ldkv, lseIn, dO, ldo, dk, ldkv, dv,
                 ldkv);
        });
      });
    } else if (kernels == Kernels::Tiled) {
      const Launch query = tiledQueryLaunch(c.batch, a);
      withDims<QueryTiled>(hd, [&](auto kernel) {
        emu::launch(grid(query), {query.threads}, query.sharedBytes, [&] {
          kernel(a, q, ldq, k, ldkv, v, ldkv, oIn, ldo, lseIn, dO, ldo, dq,
                 ldq);
        });
      });
      const Launch keys = tiledKeysLaunch(c.batch, a);
      withDims<KeysTiled>(hd, [&](auto kernel) {
        emu::launch(grid(keys), {keys.threads}, keys.sharedBytes, [&] {
          kernel(a, q, ldq, k, ldkv, v, ldkv, oIn, ldo, lseIn, dO, ldo, dk,
                 ldkv, dv, ldkv);
        });
      });
    } else {
      const Launch launch = rowBackwardLaunch(c.batch, a);
      emu::launch(grid(launch), {launch.threads}, launch.sharedBytes, [&] {
        attentionBackward(a, q, ldq, k, ldkv, v, ldkv, oIn, ldo, lseIn, dO, ldo,
                          dq, ldq, dk, ldkv, dv, ldkv);
      });
    }
    return out;
  }

  static emu::Dim3 grid(const Launch &launch) {
    return {unsigned(launch.gridX), unsigned(launch.gridY), 1};
  }

  /// `keyOffset`: added to every key (a constant in each row of S).
  void check(const Case &c, int64_t firstRow = 0, int64_t batchRows = 0,
             float keyOffset = 0.0f) {
    if (batchRows > 0)
      txrt_context_set_batch_rows(cpu_, firstRow, batchRows);
    Inputs in(c);
    for (float &x : in.k)
      x += keyOffset;
    Outputs cpu = runCpu(c, in);
    for (Kernels kernels :
         {Kernels::TensorCore, Kernels::Tiled, Kernels::Rows}) {
      const bool rows = kernels == Kernels::Rows;
      if (!rows && c.headDim > kMaxTiledHeadDim)
        continue; // Attention.cu launches the per-row kernels there
      if (rows && c.tk > 200 && keyOffset == 0.0f)
        continue; // the per-row kernel: one block per row, slow emulated
      const std::string name =
          std::string(c.name) + " (" + nameOf(kernels) + ")";
      Outputs gpu = runEmulated(c, in, kernels, firstRow, batchRows);
      const int64_t hd = c.headDim;
      expectNear(gpu.o, cpu.o, name + " o");
      expectNear(gpu.lse, cpu.lse, name + " lse");
      expectRowsNear(gpu.dq, cpu.dq, in.ldq, c.heads * hd, name + " dq");
      expectRowsNear(gpu.dk, cpu.dk, in.ldkv, c.kvHeads * hd, name + " dk");
      expectRowsNear(gpu.dv, cpu.dv, in.ldkv, c.kvHeads * hd, name + " dv");
    }
  }

  txrt_context *cpu_ = nullptr;
};

TEST_F(AttentionEmulatedTest, GroupedQueryPaddingMask) {
  check({"gqa padding", 3, 4, 2, 5, 7, 16, true, false, -kInf, 0.0f});
}

TEST_F(AttentionEmulatedTest, CausalWithDropout) {
  check({"causal dropout", 2, 2, 2, 6, 6, 32, false, true, -kInf, 0.1f});
}

// Inside a captured step the kernels take the Philox key from the device's
// training state: the same masks, so the same outputs bit for bit as the
// host-keyed launch, tiled and per row.
TEST_F(AttentionEmulatedTest, DropoutKeyFromTheDeviceStateIsTheHostsKey) {
  const Case c{"state dropout", 2, 2, 2, 6, 6, 32, false, true, -kInf, 0.3f};
  Inputs in(c);
  const DeviceTrainState state{kSeed, kStep};
  for (Kernels kernels : {Kernels::TensorCore, Kernels::Tiled, Kernels::Rows}) {
    Outputs host = runEmulated(c, in, kernels);
    Outputs device = runEmulated(c, in, kernels, 0, 0, &state);
    for (auto [got, want, what] : {std::tuple{&device.o, &host.o, "o"},
                                   {&device.dq, &host.dq, "dq"},
                                   {&device.dk, &host.dk, "dk"},
                                   {&device.dv, &host.dv, "dv"}})
      EXPECT_EQ(
          std::memcmp(got->data(), want->data(), want->size() * sizeof(float)),
          0)
          << what << " (" << nameOf(kernels) << ")";
  }
  // Another step in the state: other masks (the key really is read).
  const DeviceTrainState later{kSeed, kStep + 1};
  Outputs host = runEmulated(c, in, Kernels::TensorCore);
  Outputs device = runEmulated(c, in, Kernels::TensorCore, 0, 0, &later);
  EXPECT_NE(std::memcmp(device.o.data(), host.o.data(),
                        host.o.size() * sizeof(float)),
            0);
}

TEST_F(AttentionEmulatedTest, APieceOfTheBatchDrawsItsRowsDropout) {
  check({"piece dropout", 2, 2, 2, 6, 6, 32, false, true, -kInf, 0.3f}, 3, 2);
}

TEST_F(AttentionEmulatedTest, DecodingWithACacheIsCausalOnTheLastRows) {
  check({"cache", 2, 4, 1, 3, 9, 8, true, true, -kInf, 0.0f});
  check({"one row", 3, 4, 2, 1, 70, 64, true, true, -kInf, 0.0f});
}

TEST_F(AttentionEmulatedTest, FiniteFillCountsMaskedKeys) {
  check({"finite fill", 3, 2, 1, 4, 6, 16, true, false, -3.0f, 0.0f});
  check({"finite fill causal", 2, 2, 1, 20, 37, 128, true, true, -2.0f, 0.0f});
}

// masked_fill's -1e9 under a causal mask: the keys past a block's causal
// limit have probability exactly 0, so the tensor-core kernels skip them;
// with a fill close to the scores (-2), or rows whose every key is masked
// (tq > tk), they count and the kernels take them after all.
TEST_F(AttentionEmulatedTest, CausalFiniteFillSkipsOnlyKeysThatCannotCount) {
  check({"causal -1e9", 2, 2, 1, 130, 130, 32, true, true, -1e9f, 0.1f});
  check({"causal -2", 1, 2, 1, 100, 100, 16, false, true, -2.0f, 0.0f});
  check({"causal -1e9, rows with no key", 1, 2, 1, 80, 40, 16, false, true,
         -1e9f, 0.0f});
}

TEST_F(AttentionEmulatedTest, MoreRowsAndKeysThanOneTile) {
  check({"tiles", 2, 3, 3, 35, 70, 48, true, true, -kInf, 0.2f});
  check({"more queries than keys", 1, 2, 1, 40, 33, 24, false, true, -kInf,
         0.0f});
  // Several of the tensor-core kernels' 64-row and 64-key blocks.
  check({"blocks", 1, 2, 1, 130, 75, 32, true, true, -kInf, 0.1f});
}

TEST_F(AttentionEmulatedTest, HeadDimensionsThatEndALaneGroupPartWay) {
  check({"head dim 7", 2, 3, 3, 17, 33, 7, true, false, -kInf, 0.0f});
  check({"head dim 100", 2, 6, 2, 20, 45, 100, true, true, -kInf, 0.1f});
}

TEST_F(AttentionEmulatedTest, HeadsWiderThanTheTilesUseTheRowKernels) {
  // Attention.cu launches the per-row kernels over 128 dimensions.
  check({"head dim 160", 1, 2, 2, 5, 37, 160, true, true, -kInf, 0.1f});
}

// Keys with a common offset (+100 in every element) give each row of S a
// large constant (about +-60 here) the softmax cancels, and the exact dq
// has no component along the offset (rowsum(dS) = 0); in float32 the
// rounding of rowsum(dS) reaches dq multiplied by scale * 100. Against a
// float64 reference: the CPU kernel, which normalizes P per row and takes
// D from its P and dP tiles where a key block holds the row
// (AttentionTest.BackwardCancelsAConstantInTheScores), stays within 1e-4
// of the largest dq; the CUDA kernels take D = dO . O, whose rounding
// against sum_j P dP leaves about 1e-3 (docs/cuda.md, "Accuracy"). The
// bound keeps that from growing; the figures print.
TEST_F(AttentionEmulatedTest, AConstantInTheScoresCancels) {
  for (int64_t tk : {16, 150, 300}) {
    const Case c{"key offset", 1, 2, 2, 16, tk, 16, false, false, -kInf, 0.0f};
    Inputs in(c);
    const float offset = 100.0f;
    for (float &x : in.k)
      x += offset;
    const int64_t hd = c.headDim, width = c.heads * hd;
    const double scale = 1.0 / std::sqrt(double(hd));
    std::vector<double> want(size_t(c.tq * in.ldq), 0.0);
    for (int64_t h = 0; h < c.heads; ++h)
      for (int64_t i = 0; i < c.tq; ++i) {
        const float *q = &in.q[size_t(i * in.ldq + h * hd)];
        const float *dO = &in.dO[size_t(i * in.ldo + h * hd)];
        std::vector<double> p(static_cast<size_t>(tk)),
            dP(static_cast<size_t>(tk));
        double top = -INFINITY, sum = 0.0, rowD = 0.0;
        for (int64_t j = 0; j < tk; ++j) {
          double s = 0.0;
          for (int64_t d = 0; d < hd; ++d)
            s += double(q[d]) * in.k[size_t(j * in.ldkv + h * hd + d)];
          p[size_t(j)] = s * scale;
          top = std::max(top, p[size_t(j)]);
        }
        for (double &x : p)
          sum += (x = std::exp(x - top));
        for (int64_t j = 0; j < tk; ++j) {
          p[size_t(j)] /= sum;
          double dp = 0.0;
          for (int64_t d = 0; d < hd; ++d)
            dp += double(dO[d]) * in.v[size_t(j * in.ldkv + h * hd + d)];
          dP[size_t(j)] = dp;
          rowD += p[size_t(j)] * dp;
        }
        // The keys without their offset: rowsum(dS) = 0 exactly.
        for (int64_t d = 0; d < hd; ++d) {
          double acc = 0.0;
          for (int64_t j = 0; j < tk; ++j)
            acc += p[size_t(j)] * (dP[size_t(j)] - rowD) *
                   (double(in.k[size_t(j * in.ldkv + h * hd + d)]) - offset);
          want[size_t(i * in.ldq + h * hd + d)] = scale * acc;
        }
      }
    auto relativeError = [&](const Floats &got) {
      double worst = 0.0, largest = 0.0;
      for (int64_t i = 0; i < c.tq; ++i)
        for (int64_t d = 0; d < width; ++d) {
          const size_t at = size_t(i * in.ldq + d);
          worst = std::max(worst, std::fabs(double(got[at]) - want[at]));
          largest = std::max(largest, std::fabs(want[at]));
        }
      return worst / largest;
    };
    EXPECT_LT(relativeError(runCpu(c, in).dq), 1e-4) << "tk " << tk;
    for (Kernels kernels :
         {Kernels::TensorCore, Kernels::Tiled, Kernels::Rows}) {
      const double error = relativeError(runEmulated(c, in, kernels).dq);
      EXPECT_LT(error, 2.5e-3) << "tk " << tk << " (" << nameOf(kernels) << ")";
      std::printf("tk %lld, %s: dq within %.2e of the largest\n",
                  static_cast<long long>(tk), nameOf(kernels), error);
    }
  }
}

// The tensor cores truncate their sums (CudaEmulation.h's mmaTf32): an
// accumulator carried through every key tile's mma.sync calls drifts with
// the number of tiles (5e-5 at 9000 keys on an H200). Each tile's product
// starts from zero and is added on the CUDA cores, rounded to nearest.
TEST_F(AttentionEmulatedTest, TensorCoreSumsOverManyKeysKeepTheNormwiseBound) {
  const Case c{"9000 keys", 1, 2, 1, 3, 9000, 32, false, false, -kInf, 0.0f};
  Inputs in(c);
  Outputs cpu = runCpu(c, in);
  Outputs gpu = runEmulated(c, in, Kernels::TensorCore, 0, 0);
  const int64_t width = c.heads * c.headDim;
  expectRowsNormNear(gpu.o, cpu.o, in.ldo, width, 1e-5, "o");
  expectRowsNormNear(gpu.dq, cpu.dq, in.ldq, width, 1e-5, "dq");
  expectRowsNormNear(gpu.dk, cpu.dk, in.ldkv, c.kvHeads * c.headDim, 1e-5,
                     "dk");
  expectRowsNormNear(gpu.dv, cpu.dv, in.ldkv, c.kvHeads * c.headDim, 1e-5,
                     "dv");
}

// Where the user allowed TF32 (--allow-tf32), the tensor-core kernels take
// each product once in TF32 (the big parts), a third of 3xTF32's: the
// stated bound is the GEMMs' under TF32, 5e-3 norm-wise of each output
// (CudaLinearTest.Tf32OnlyUnderTheOptionWithinItsBound). Their error is
// also well above 3xTF32's, so these are the 1-pass kernels.
TEST_F(AttentionEmulatedTest, Tf32KernelsWhereAllowedKeepTheirBound) {
  for (const Case &c : {Case{"tf32 gqa causal dropout", 2, 4, 2, 70, 70, 64,
                             true, true, -kInf, 0.1f},
                        Case{"tf32 finite fill", 1, 2, 1, 33, 100, 24, true,
                             false, -2.0f, 0.0f}}) {
    Inputs in(c);
    Outputs cpu = runCpu(c, in);
    Outputs one = runEmulated(c, in, Kernels::TensorCoreTf32);
    Outputs three = runEmulated(c, in, Kernels::TensorCore);
    const int64_t qWidth = c.heads * c.headDim, kvWidth = c.kvHeads * c.headDim;
    for (auto [got, strict, want, ld, width, what] :
         {std::tuple{&one.o, &three.o, &cpu.o, in.ldo, qWidth, "o"},
          {&one.dq, &three.dq, &cpu.dq, in.ldq, qWidth, "dq"},
          {&one.dk, &three.dk, &cpu.dk, in.ldkv, kvWidth, "dk"},
          {&one.dv, &three.dv, &cpu.dv, in.ldkv, kvWidth, "dv"}}) {
      const double error = rowsNormError(*got, *want, ld, width);
      const double strictError = rowsNormError(*strict, *want, ld, width);
      EXPECT_LE(error, 5e-3) << c.name << " " << what;
      EXPECT_GT(error, 10 * strictError) << c.name << " " << what;
      std::printf("%s %s: 1xTF32 %.2e, 3xTF32 %.2e norm-wise\n", c.name, what,
                  error, strictError);
    }
  }
}

TEST_F(AttentionEmulatedTest, LongerKeysThanOneBlock) {
  check({"long", 1, 2, 2, 3, 700, 64, false, true, -kInf, 0.2f});
}

// dV = P^T dO took P = exp(S - lse) with the saved lse's rounding as a
// common factor of up to 1 + eps |lse| on the row, which the softmax's
// normalization removes: the sum of dV over the keys (what a bias of V
// gets) is sum_i dO_i rowsum(P_i) = sum_i dO_i. Rows with |lse| >= 16 are
// normalized by their sums of exp(S - lse) over the keys, computed with the
// products of the kernel that forms dV (attentionBackwardRows,
// attentionBackwardRowScalesMma), as on the CPU
// (AttentionTest.BackwardDvCancelsAConstantInLongRows). The worst error of
// each form prints, relative to sum |dO| of its column.
TEST_F(AttentionEmulatedTest, BackwardDvCancelsAConstantInLongRows) {
  for (int64_t tk : {300, 700})
    for (float offset : {60.0f, 3000.0f, 1e5f}) {
      const Case c{"long rows", 1, 2, 2, 16, tk, 16, false, false, -kInf, 0.0f};
      Inputs in(c);
      for (float &x : in.k)
        x += offset;
      for (Kernels kernels :
           {Kernels::TensorCore, Kernels::Tiled, Kernels::Rows}) {
        const Outputs gpu = runEmulated(c, in, kernels);
        double worst = 0.0;
        for (int64_t h = 0; h < c.heads; ++h)
          for (int64_t col = 0; col < c.headDim; ++col) {
            double dv = 0.0, dO = 0.0, scale = 0.0;
            for (int64_t j = 0; j < c.tk; ++j)
              dv += gpu.dv[size_t(j * in.ldkv + h * c.headDim + col)];
            for (int64_t i = 0; i < c.tq; ++i) {
              const float x = in.dO[size_t(i * in.ldo + h * c.headDim + col)];
              dO += x;
              scale += std::fabs(x);
            }
            EXPECT_LT(std::fabs(dv - dO), 1e-6 * scale)
                << "tk " << tk << ", offset " << offset << " ("
                << nameOf(kernels) << "), head " << h << " column " << col
                << ": " << dv << " against " << dO;
            worst = std::max(worst, std::fabs(dv - dO) / scale);
          }
        std::printf("tk %lld, offset %g, %s: sum of dV within %.2e of sum "
                    "|dO|\n",
                    static_cast<long long>(tk), offset, nameOf(kernels), worst);
      }
    }
}

// The rows' factors (rowScale) under every mask form: rows longer than the
// CPU's key block (256) with |lse| >= 16 (keys offset by 25: scores about
// +-20), causal, padded (the last batch sees no key), grouped-query heads,
// dropout, a -inf fill and masked_fill's -1e9; against the CPU kernel, which
// normalizes the same rows, at 1e-5.
TEST_F(AttentionEmulatedTest, LongRowsWithALargeLseUnderEveryMaskForm) {
  check({"long rows -inf", 2, 4, 2, 20, 300, 16, true, true, -kInf, 0.2f}, 0, 0,
        25.0f);
  check({"long rows -1e9", 2, 2, 1, 20, 300, 16, true, true, -1e9f, 0.0f}, 0, 0,
        25.0f);
}

} // namespace
