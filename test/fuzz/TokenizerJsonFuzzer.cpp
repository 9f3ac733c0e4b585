//===- TokenizerJsonFuzzer.cpp - fuzz the tokenizer JSON reader -----------===//
//
// One input is the text of a tokenizer file (`--tokenizer FILE`, the copy
// beside a checkpoint, or the "tokenizer" string inside one):
//  - Tokenizer::fromJson parses it (strict JSON, Json.h); every failure must
//    be an InputError;
//  - a tokenizer it accepts must write (toJson) a file that reads back as
//    the same vocabularies, and every word must encode to its own id and
//    decode back to itself;
//  - the same text as one side of a Hugging Face pair
//    (Vocabulary::fromHuggingFaceJson): failures are InputErrors, and an
//    accepted vocabulary writes (toHuggingFaceJson) a file that reads back
//    as the same words.
//
//===----------------------------------------------------------------------===//
#include "core/Error.h"
#include "data/Tokenizer.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

using namespace txrt::driver;

namespace {

[[noreturn]] void fail(const char *what) {
  std::fprintf(stderr, "fuzz-tokenizer-json: %s\n", what);
  std::abort();
}

void checkVocabulary(const Vocabulary &vocab) {
  for (int32_t id = 0; id < vocab.size(); ++id) {
    const std::string &word = vocab.word(id);
    if (vocab.id(word) != id)
      fail("a word does not map back to its id");
    std::vector<std::string> decoded = vocab.decode({id});
    bool shown = !vocab.isSpecial(id) || id == vocab.unkId();
    if (decoded.size() != (shown ? 1u : 0u) ||
        (shown && decoded[0] != word))
      fail("a word does not decode to itself");
  }
}

void checkHuggingFace(std::string_view text) {
  Vocabulary vocab;
  try {
    vocab = Vocabulary::fromHuggingFaceJson(text, "'fuzz.json'");
  } catch (const InputError &) {
    return;
  }
  checkVocabulary(vocab);
  try {
    if (Vocabulary::fromHuggingFaceJson(vocab.toHuggingFaceJson(),
                                        "'written.json'")
            .words() != vocab.words())
      fail("a Hugging Face file does not read back as the one written");
  } catch (const InputError &error) {
    std::fprintf(stderr, "%s\n", error.what());
    fail("a file written by toHuggingFaceJson does not read back");
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  checkHuggingFace(text);
  Tokenizer tokenizer;
  try {
    tokenizer = Tokenizer::fromJson(text, "'fuzz.json'");
  } catch (const InputError &) {
    return 0;
  }
  checkVocabulary(tokenizer.source);
  checkVocabulary(tokenizer.target);
  std::string json = tokenizer.toJson();
  Tokenizer again;
  try {
    again = Tokenizer::fromJson(json, "'written.json'");
  } catch (const InputError &error) {
    std::fprintf(stderr, "%s\n", error.what());
    fail("a tokenizer written by toJson does not read back");
  }
  if (!again.sameVocabularies(tokenizer) || again.minFreq != tokenizer.minFreq)
    fail("a tokenizer does not read back as the one written");
  return 0;
}
