//===- TextCorpus.h - plain text for language models: documents, blocks -*- C++ -*-===//
//
// `train --text FILE.txt` reads UTF-8 text in which a blank line (only
// whitespace) separates documents. The words of every document (splitWords,
// the same tokenizer as the parallel text) are encoded and joined into one
// stream, each document followed by [EOS] (the end-of-text id):
//
//   doc 1 ids, [EOS], doc 2 ids, [EOS], ...
//
// With a SentencePiece tokenizer each document's text as written (its
// lines joined by spaces) is encoded instead of its words.
//
// The stream is cut into blocks of `block` positions (the T bound, or
// --block N). Block i reads stream[i*block .. i*block + block) and its
// targets are the same positions shifted by one; the last block, when the
// stream does not fill it, is right-padded (input and target pad). The
// stream's final position has no target: it is padded too (its [EOS] is
// not an input).
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_TEXTCORPUS_H
#define TXRT_DRIVER_TEXTCORPUS_H

#include "core/Tensor.h"
#include "data/Tokenizer.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace txrt::driver {

struct TextCorpus {
  std::string path;
  std::vector<std::vector<std::string>> documents; ///< words
  /// Each document's lines as written (no '\r', no byte order mark),
  /// joined by spaces: what a SentencePiece tokenizer encodes.
  std::vector<std::string> texts;
  uint64_t hash = 0; ///< FNV-1a of the file's bytes
};

/// Parses text (`path` names it in errors): invalid UTF-8 is an InputError
/// naming FILE:LINE; a text without words is one too.
TextCorpus parseTextCorpus(std::string_view content, const std::string &path);
TextCorpus readTextCorpus(const std::string &path);

/// The token stream: each document's ids, then [EOS].
std::vector<int32_t> encodeCorpus(const TextCorpus &corpus,
                                  const Vocabulary &vocabulary);
/// The same with `tokenizer`: its words, or with a SentencePiece model the
/// pieces of each document's text as written.
std::vector<int32_t> encodeCorpus(const TextCorpus &corpus,
                                  const Tokenizer &tokenizer);

/// Next-token blocks of a token stream.
class TokenBlocks {
public:
  /// Throws std::invalid_argument when block < 1.
  TokenBlocks(std::vector<int32_t> stream, int64_t block, int32_t pad);

  int64_t size() const { return count_; }
  int64_t blockLength() const { return block_; }
  int64_t streamLength() const { return int64_t(stream_.size()); }
  /// [rows, block] tokens and targets of the blocks `indices`.
  Tensor tokens(const std::vector<size_t> &indices) const;
  Tensor targets(const std::vector<size_t> &indices) const;
  /// The non-pad targets of those blocks.
  int64_t targetCount(const std::vector<size_t> &indices) const;

private:
  Tensor gather(const std::vector<size_t> &indices, int64_t shift) const;

  std::vector<int32_t> stream_;
  int64_t block_;
  int32_t pad_;
  int64_t count_;
};

} // namespace txrt::driver

#endif // TXRT_DRIVER_TEXTCORPUS_H
