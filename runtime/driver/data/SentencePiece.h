//===- SentencePiece.h - subword vocabularies with SentencePiece -*- C++ -*-===//
//
// Subword tokenization for real corpora (issue 16), on Debian's
// libsentencepiece (0.1.97): a unigram or BPE model trained from sentences
// in memory, saved and loaded as SentencePiece's own `.model` file (which
// spm_encode / spm_decode and Python's sentencepiece read too), encoding
// text to ids and decoding ids back to text (detokenized: SentencePiece
// marks word starts with U+2581, so decode(encode(s)) == s for text in its
// normal form: NFKC, single spaces, no leading or trailing space).
//
// The specials follow Tokenizer.h's rule: [PAD] at the model's config `pad`
// id, [UNK] [SOS] [EOS] in that order around it in ids 0..3 (pad = 0:
// [PAD] 0, [UNK] 1, [SOS] 2, [EOS] 3), as SentencePiece's pad_id, unk_id,
// bos_id and eos_id with those piece names. Encoding adds neither [SOS]
// nor [EOS]; decoding drops [PAD], [SOS] and everything from [EOS] on.
//
// Training is deterministic: one thread, every input sentence used in its
// order (0.1.97 has no seed option; nothing in training is random then), so
// the same sentences and options give byte-identical .model files.
//
// The driver uses it through Tokenizer::fromSentencePiece (Tokenizer.h):
// train --tokenizer spm trains one model for both sides.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_SENTENCEPIECE_H
#define TXRT_DRIVER_SENTENCEPIECE_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace txrt::driver {

struct SentencePieceOptions {
  enum class Algorithm { Unigram, Bpe };
  Algorithm algorithm = Algorithm::Unigram;
  int32_t vocabSize = 8000; ///< pieces, the four specials included
  int32_t padId = 0;        ///< 0..3; the other specials fill the rest
  double characterCoverage = 1.0;
};

class SentencePieceModel {
public:
  SentencePieceModel(SentencePieceModel &&) noexcept;
  SentencePieceModel &operator=(SentencePieceModel &&) noexcept;
  ~SentencePieceModel();

  /// Trains on `sentences` (UTF-8, one sentence each); throws InputError
  /// when SentencePiece refuses (e.g. a vocabulary larger than the text
  /// allows) and std::invalid_argument for options out of range.
  static SentencePieceModel train(const std::vector<std::string> &sentences,
                                  const SentencePieceOptions &options);

  /// Reads a .model file; InputError naming `path` when it is missing,
  /// not a SentencePiece model, or lacks [PAD] / [SOS] / [EOS].
  static SentencePieceModel load(const std::string &path);
  /// The same from the file's bytes; `origin` names them in errors.
  static SentencePieceModel fromBytes(std::string bytes,
                                      const std::string &origin);

  /// Writes the .model file atomically.
  void save(const std::string &path) const;
  /// The serialized model (the .model file's bytes).
  const std::string &bytes() const { return bytes_; }

  std::vector<int32_t> encode(std::string_view text) const;
  std::string decode(const std::vector<int32_t> &ids) const;
  /// The piece of `id` ("▁hello", "[PAD]").
  std::string piece(int32_t id) const;

  /// How the model was trained (its trainer_spec's model_type); nullopt
  /// for another type (word, char) or bytes this reader cannot follow.
  std::optional<SentencePieceOptions::Algorithm> algorithm() const;

  int32_t size() const;
  int32_t padId() const;
  int32_t unkId() const;
  int32_t sosId() const;
  int32_t eosId() const;

private:
  SentencePieceModel();
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
  std::string bytes_;
};

} // namespace txrt::driver

#endif // TXRT_DRIVER_SENTENCEPIECE_H
