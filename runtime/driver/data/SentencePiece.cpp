//===- SentencePiece.cpp - subword vocabularies with SentencePiece --------===//
#include "data/SentencePiece.h"
#include "core/Error.h"
#include "data/Tokenizer.h"
#include "formats/FileIO.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

namespace txrt::driver {

namespace {

/// Feeds in-memory sentences to the trainer.
class SentenceList : public sentencepiece::SentenceIterator {
public:
  explicit SentenceList(const std::vector<std::string> &sentences)
      : sentences_(sentences) {}
  bool done() const override { return next_ >= sentences_.size(); }
  void Next() override { ++next_; }
  const std::string &value() const override { return sentences_[next_]; }
  sentencepiece::util::Status status() const override { return {}; }

private:
  const std::vector<std::string> &sentences_;
  size_t next_ = 0;
};

/// A reader of the protobuf wire format, just enough to find one field of
/// ModelProto (sentencepiece_model.proto; the library's headers do not
/// expose it): each call takes the next field, false at the end or on
/// bytes that are not well formed (then failed() is true).
class ProtoFields {
public:
  explicit ProtoFields(std::string_view bytes) : rest_(bytes) {}
  struct Field {
    uint64_t number = 0, varint = 0;
    std::string_view bytes; ///< a length-delimited field's content
  };
  bool next(Field &field) {
    if (rest_.empty() || failed_)
      return false;
    if (!readField(field)) {
      failed_ = true;
      return false;
    }
    return true;
  }
  bool failed() const { return failed_; }

private:
  bool readField(Field &field) {
    uint64_t key = 0;
    if (!readVarint(key))
      return false;
    field = Field{key >> 3, 0, {}};
    switch (key & 7) {
    case 0:
      return readVarint(field.varint);
    case 1:
      return skip(8);
    case 2: {
      uint64_t length = 0;
      if (!readVarint(length) || length > rest_.size())
        return false;
      field.bytes = rest_.substr(0, size_t(length));
      return skip(size_t(length));
    }
    case 5:
      return skip(4);
    default:
      return false; // groups (deprecated) and invalid wire types
    }
  }
  bool readVarint(uint64_t &value) {
    value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (rest_.empty())
        return false;
      uint8_t byte = uint8_t(rest_.front());
      rest_.remove_prefix(1);
      value |= uint64_t(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return true;
    }
    return false;
  }
  bool skip(size_t count) {
    if (count > rest_.size())
      return false;
    rest_.remove_prefix(count);
    return true;
  }
  std::string_view rest_;
  bool failed_ = false;
};

/// SentencePiece's trainer skips, with only a log line (silenced here),
/// every sentence longer than max_sentence_length bytes (4192 by default):
/// a language model's documents, trained on as one line each, were
/// dropped whole. Cut such text into pieces of at most kTrainingChunkBytes
/// at whitespace, where SentencePiece splits anyway (each piece's start
/// gets the dummy U+2581 prefix a word after a blank has), so no word
/// changes; a run of more bytes without a blank is cut at a character
/// boundary.
constexpr size_t kTrainingChunkBytes = 4096;

bool isBlank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}

std::vector<std::string>
trainingChunks(const std::vector<std::string> &sentences) {
  std::vector<std::string> chunks;
  chunks.reserve(sentences.size());
  for (const std::string &sentence : sentences) {
    std::string_view rest = sentence;
    while (rest.size() > kTrainingChunkBytes) {
      size_t cut = kTrainingChunkBytes;
      while (cut > 0 && !isBlank(rest[cut]))
        --cut;
      if (cut == 0) { // no blank: the last UTF-8 character start
        cut = kTrainingChunkBytes;
        while (cut > 0 && (uint8_t(rest[cut]) & 0xC0) == 0x80)
          --cut;
        if (cut == 0)
          cut = kTrainingChunkBytes; // not UTF-8: any byte
      }
      chunks.emplace_back(rest.substr(0, cut));
      rest.remove_prefix(cut);
      while (!rest.empty() && isBlank(rest.front()))
        rest.remove_prefix(1);
    }
    if (!rest.empty() || sentence.empty())
      chunks.emplace_back(rest);
  }
  return chunks;
}

} // namespace

SentencePieceModel::SentencePieceModel()
    : processor_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {}
SentencePieceModel::SentencePieceModel(SentencePieceModel &&) noexcept =
    default;
SentencePieceModel &
SentencePieceModel::operator=(SentencePieceModel &&) noexcept = default;
SentencePieceModel::~SentencePieceModel() = default;

SentencePieceModel
SentencePieceModel::train(const std::vector<std::string> &sentences,
                          const SentencePieceOptions &options) {
  if (options.padId < 0 || options.padId >= kNumSpecialTokens)
    throw std::invalid_argument("the pad id " + std::to_string(options.padId) +
                                " is not one of the special ids 0..3");
  if (options.vocabSize <= kNumSpecialTokens)
    throw std::invalid_argument("a vocabulary of " +
                                std::to_string(options.vocabSize) +
                                " pieces has no room beside the 4 specials");
  // [UNK] [SOS] [EOS] in order in the ids 0..3 that [PAD] leaves.
  int32_t ids[3], next = 0;
  for (int32_t &id : ids) {
    if (next == options.padId)
      ++next;
    id = next++;
  }
  std::unordered_map<std::string, std::string> args = {
      {"model_type", options.algorithm == SentencePieceOptions::Algorithm::Bpe
                         ? "bpe"
                         : "unigram"},
      {"vocab_size", std::to_string(options.vocabSize)},
      {"character_coverage", std::to_string(options.characterCoverage)},
      {"pad_id", std::to_string(options.padId)},
      {"unk_id", std::to_string(ids[0])},
      {"bos_id", std::to_string(ids[1])},
      {"eos_id", std::to_string(ids[2])},
      {"pad_piece", kPadToken},
      {"unk_piece", kUnkToken},
      {"bos_piece", kSosToken},
      {"eos_piece", kEosToken},
      {"num_threads", "1"},
      {"input_sentence_size", "0"},
      {"shuffle_input_sentence", "false"},
      {"minloglevel", "2"},
  };
  const std::vector<std::string> chunks = trainingChunks(sentences);
  SentenceList list(chunks);
  std::string bytes;
  sentencepiece::util::Status status =
      sentencepiece::SentencePieceTrainer::Train(args, &list, &bytes);
  if (!status.ok())
    throw InputError(std::string("SentencePiece could not train a ") +
                     std::to_string(options.vocabSize) +
                     "-piece model on " + std::to_string(sentences.size()) +
                     " sentences: " + status.message());
  return fromBytes(std::move(bytes), "the trained SentencePiece model");
}

SentencePieceModel SentencePieceModel::fromBytes(std::string bytes,
                                                 const std::string &origin) {
  SentencePieceModel model;
  sentencepiece::util::Status status =
      model.processor_->LoadFromSerializedProto(bytes);
  if (!status.ok())
    throw InputError(origin + " is not a SentencePiece model: " +
                     status.message());
  for (auto [id, name] : {std::pair{model.padId(), kPadToken},
                          std::pair{model.sosId(), kSosToken},
                          std::pair{model.eosId(), kEosToken}})
    if (id < 0)
      throw InputError(origin + " has no " + name +
                       " piece (train it with pad_id, bos_id and eos_id)");
  model.bytes_ = std::move(bytes);
  return model;
}

SentencePieceModel SentencePieceModel::load(const std::string &path) {
  return fromBytes(readWholeFile(path), "'" + path + "'");
}

void SentencePieceModel::save(const std::string &path) const {
  AtomicFileWriter writer(path);
  writer.write(bytes_);
  writer.commit();
}

std::vector<int32_t> SentencePieceModel::encode(std::string_view text) const {
  std::vector<int> ids;
  sentencepiece::util::Status status = processor_->Encode(
      std::string(text), &ids);
  if (!status.ok())
    throw InputError(std::string("SentencePiece could not encode '") +
                     std::string(text) + "': " + status.message());
  return std::vector<int32_t>(ids.begin(), ids.end());
}

std::string SentencePieceModel::decode(const std::vector<int32_t> &ids) const {
  std::vector<int> kept;
  for (int32_t id : ids) {
    if (id == eosId())
      break;
    if (id < 0 || id >= size() || id == padId() || id == sosId())
      continue;
    kept.push_back(id);
  }
  std::string text;
  sentencepiece::util::Status status = processor_->Decode(kept, &text);
  if (!status.ok())
    throw InputError(std::string("SentencePiece could not decode: ") +
                     status.message());
  return text;
}

std::string SentencePieceModel::piece(int32_t id) const {
  return processor_->IdToPiece(id);
}
std::optional<SentencePieceOptions::Algorithm>
SentencePieceModel::algorithm() const {
  // ModelProto field 2 is trainer_spec; TrainerSpec field 3 is model_type
  // (UNIGRAM = 1, the default when absent; BPE = 2; WORD = 3; CHAR = 4).
  ProtoFields model(bytes_);
  ProtoFields::Field field;
  while (model.next(field)) {
    if (field.number != 2)
      continue;
    uint64_t type = 1;
    ProtoFields spec(field.bytes);
    ProtoFields::Field inner;
    while (spec.next(inner))
      if (inner.number == 3)
        type = inner.varint;
    if (spec.failed())
      return std::nullopt;
    if (type == 1)
      return SentencePieceOptions::Algorithm::Unigram;
    if (type == 2)
      return SentencePieceOptions::Algorithm::Bpe;
    return std::nullopt;
  }
  return std::nullopt;
}

int32_t SentencePieceModel::size() const { return processor_->GetPieceSize(); }
int32_t SentencePieceModel::padId() const { return processor_->pad_id(); }
int32_t SentencePieceModel::unkId() const { return processor_->unk_id(); }
int32_t SentencePieceModel::sosId() const { return processor_->bos_id(); }
int32_t SentencePieceModel::eosId() const { return processor_->eos_id(); }

} // namespace txrt::driver
