//===- TextCorpus.cpp - plain text for language models: documents, blocks ===//
#include "data/TextCorpus.h"
#include "core/Error.h"
#include "core/Init.h"
#include "data/TabbedLines.h"
#include "formats/FileIO.h"

#include <algorithm>
#include <stdexcept>

namespace txrt::driver {

TextCorpus parseTextCorpus(std::string_view content, const std::string &path) {
  TextCorpus corpus;
  corpus.path = path;
  corpus.hash = fnv1a64(content);
  std::vector<std::string> document;
  std::string text;
  auto endDocument = [&] {
    if (!document.empty()) {
      corpus.documents.push_back(std::move(document));
      corpus.texts.push_back(std::move(text));
    }
    document.clear();
    text.clear();
  };
  int64_t lineNumber = 0;
  size_t start = 0;
  ProblemList problems; // every bad line, as predict and --data name them
  while (start < content.size()) {
    // A line ends at LF, CRLF or a lone CR (old Mac files, as Python's
    // universal newlines read them): a file with CR line ends was one line,
    // its blank lines no document boundaries, without a word.
    size_t end = content.find_first_of("\r\n", start);
    if (end == std::string_view::npos)
      end = content.size();
    std::string_view line = content.substr(start, end - start);
    start = end + 1;
    if (end < content.size() && content[end] == '\r' &&
        start < content.size() && content[start] == '\n')
      ++start;
    ++lineNumber;
    // A UTF-8 byte order mark (Windows editors write one) is no text.
    if (lineNumber == 1 && line.substr(0, 3) == kUtf8ByteOrderMark)
      line.remove_prefix(3);
    if (std::string problem = textProblem(line, lineNumber == 1);
        !problem.empty()) {
      problems.add(path + ":" + std::to_string(lineNumber) + ": " + problem +
                   " (the text must be UTF-8)");
      continue;
    }
    if (line.find_first_not_of(" \t\v\f\r") == std::string_view::npos) {
      endDocument();
      continue;
    }
    for (std::string &word : splitWords(line))
      document.push_back(std::move(word));
    text += (text.empty() ? "" : " ") + std::string(line);
  }
  endDocument();
  problems.throwIfAny("lines that are not UTF-8 text");
  if (corpus.documents.empty())
    throw InputError("'" + path + "' holds no words");
  return corpus;
}

TextCorpus readTextCorpus(const std::string &path) {
  return parseTextCorpus(readWholeFile(path), path);
}

std::vector<int32_t> encodeCorpus(const TextCorpus &corpus,
                                  const Vocabulary &vocabulary) {
  std::vector<int32_t> stream;
  for (const auto &document : corpus.documents) {
    std::vector<int32_t> ids = vocabulary.encode(document);
    stream.insert(stream.end(), ids.begin(), ids.end());
    stream.push_back(vocabulary.eosId());
  }
  return stream;
}

std::vector<int32_t> encodeCorpus(const TextCorpus &corpus,
                                  const Tokenizer &tokenizer) {
  if (!tokenizer.subwords)
    return encodeCorpus(corpus, tokenizer.source);
  std::vector<int32_t> stream;
  for (const std::string &text : corpus.texts) {
    std::vector<int32_t> ids = tokenizer.encodeSource(text);
    stream.insert(stream.end(), ids.begin(), ids.end());
    stream.push_back(tokenizer.source.eosId());
  }
  return stream;
}

TokenBlocks::TokenBlocks(std::vector<int32_t> stream, int64_t block,
                         int32_t pad)
    : stream_(std::move(stream)), block_(block), pad_(pad) {
  if (block < 1)
    throw std::invalid_argument("block length must be positive");
  // Positions with a next token: stream size - 1.
  int64_t predicted = std::max<int64_t>(int64_t(stream_.size()) - 1, 0);
  count_ = (predicted + block_ - 1) / block_;
}

Tensor TokenBlocks::gather(const std::vector<size_t> &indices,
                           int64_t shift) const {
  Tensor tensor(DType::I32, {int64_t(indices.size()), block_});
  int32_t *out = tensor.as<int32_t>();
  const int64_t predicted = int64_t(stream_.size()) - 1;
  for (size_t row = 0; row < indices.size(); ++row) {
    int64_t begin = int64_t(indices[row]) * block_;
    for (int64_t position = 0; position < block_; ++position) {
      // Input position p exists when it has a target: p < predicted.
      bool present = begin + position < predicted;
      out[int64_t(row) * block_ + position] =
          present ? stream_[size_t(begin + position + shift)] : pad_;
    }
  }
  return tensor;
}

Tensor TokenBlocks::tokens(const std::vector<size_t> &indices) const {
  return gather(indices, 0);
}

Tensor TokenBlocks::targets(const std::vector<size_t> &indices) const {
  return gather(indices, 1);
}

int64_t TokenBlocks::targetCount(const std::vector<size_t> &indices) const {
  const int64_t predicted = int64_t(stream_.size()) - 1;
  int64_t count = 0;
  for (size_t index : indices)
    count += std::clamp<int64_t>(predicted - int64_t(index) * block_, 0,
                                 block_);
  return count;
}

} // namespace txrt::driver
