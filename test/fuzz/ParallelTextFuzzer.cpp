//===- ParallelTextFuzzer.cpp - fuzz the TSV parallel text loader ---------===//
//
// One input is the content of a `--data FILE` (source<TAB>target lines), run
// through what `train` does with it before the first step:
//  - parseParallelText checks every line; every failure must be an
//    InputError;
//  - a vocabulary per side is built from the words (min_freq 1, pad 0), the
//    tokenizer written as JSON must read back as itself;
//  - the pairs are encoded against bounds S = 16, T = 16 (too long a
//    sentence is an InputError), cut into the batches of two epochs
//    (batch 4) and padded into [b, len] tensors whose shapes and token counts
//    are checked against the sentences.
//
//===----------------------------------------------------------------------===//
#include "data/Batching.h"
#include "core/Error.h"
#include "data/ParallelText.h"
#include "data/Tokenizer.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

using namespace txrt::driver;

namespace {

[[noreturn]] void fail(const char *what) {
  std::fprintf(stderr, "fuzz-parallel-text: %s\n", what);
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view content(reinterpret_cast<const char *>(data), size);
  ParallelText text;
  try {
    text = parseParallelText(content, "fuzz.tsv");
  } catch (const InputError &) {
    return 0;
  }
  if (text.pairs.empty())
    fail("parseParallelText accepted a file without pairs");
  std::vector<std::vector<std::string>> sources, targets;
  for (const SentencePair &pair : text.pairs) {
    // A side of only invisible blanks (U+FEFF, which splitWords drops)
    // passes the parse's blank check, and the sequence-length check
    // refuses it before any use ("the target side is empty: it gives no
    // words"): not a bug of the parse.
    if (pair.source.empty() || pair.target.empty())
      return 0;
    sources.push_back(pair.source);
    targets.push_back(pair.target);
  }
  Tokenizer tokenizer;
  tokenizer.source = Vocabulary::build(sources, 1, 0);
  tokenizer.target = Vocabulary::build(targets, 1, 0);
  Tokenizer again;
  try {
    again = Tokenizer::fromJson(tokenizer.toJson(), "'written.json'");
  } catch (const InputError &error) {
    std::fprintf(stderr, "%s\n", error.what());
    fail("the tokenizer built from the data does not read back");
  }
  if (!again.sameVocabularies(tokenizer))
    fail("the tokenizer built from the data reads back differently");

  SequenceBounds bounds;
  bounds.batch = {"B", 4, "batch"};
  bounds.source = {"S", 16, "max_len"};
  bounds.target = {"T", 16, "max_len"};
  std::vector<EncodedPair> encoded;
  try {
    encoded = encodeParallelText(text, tokenizer, bounds);
  } catch (const InputError &) {
    return 0;
  }
  if (encoded.size() != text.pairs.size())
    fail("encodeParallelText lost or added pairs");
  std::vector<std::pair<int64_t, int64_t>> lengths;
  for (const EncodedPair &pair : encoded) {
    if (int64_t(pair.source.size()) > bounds.source.bound ||
        int64_t(pair.target.size()) > bounds.target.bound - 1)
      fail("a sentence longer than its bound was encoded");
    lengths.emplace_back(pair.source.size(), pair.target.size());
  }
  BatchPlan plan(lengths, bounds.batch.bound, /*seed=*/1);
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    size_t examples = 0;
    for (const std::vector<size_t> &indices : plan.epoch(epoch)) {
      if (indices.empty() || int64_t(indices.size()) > bounds.batch.bound)
        fail("a batch is empty or larger than the batch size");
      examples += indices.size();
      Batch batch = makeBatch(encoded, indices, tokenizer.target, 0);
      int64_t rows = int64_t(indices.size());
      if (batch.src.shape.size() != 2 || batch.src.shape[0] != rows ||
          batch.src.shape[1] > bounds.source.bound ||
          batch.tgtIn.shape != batch.tgtOut.shape ||
          batch.tgtIn.shape[0] != rows ||
          batch.tgtIn.shape[1] > bounds.target.bound)
        fail("a batch tensor has the wrong shape");
      int64_t targetTokens = 0;
      for (size_t i : indices)
        targetTokens += int64_t(encoded[i].target.size()) + 1; // + [EOS]
      if (batch.targetTokens != targetTokens)
        fail("a batch counts the wrong number of target tokens");
    }
    if (examples != encoded.size())
      fail("an epoch does not visit every example once");
  }
  return 0;
}
