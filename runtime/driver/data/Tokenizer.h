//===- Tokenizer.h - word-level vocabularies built from the data -*- C++ -*-===//
//
// The seeds tokenize the toy EN->ES pairs by lowercase words; so does this:
//
//   splitWords   ASCII letters are lowercased (other bytes, e.g. UTF-8 "tú",
//                are kept as they are); whitespace separates words; every
//                ASCII punctuation character except the apostrophe and the
//                hyphen is a word of its own ("hello, world!" -> hello , world
//                !; "don't" and "well-known" stay one word). Output words are
//                joined with single spaces.
//
// A Vocabulary maps words to ids: the specials [UNK] [PAD] [SOS] [EOS] come
// first, [PAD] at the model's config `pad` id and the others in that order
// around it (pad = 0: [PAD] 0, [UNK] 1, [SOS] 2, [EOS] 3); then every word
// seen at least min_freq times, by descending frequency, ties alphabetically
// (byte order). A word the vocabulary lacks maps to [UNK].
//
// A Tokenizer is one vocabulary per side (source and target), saved as JSON
// inside the checkpoint (Checkpoint.h) and as a copy beside it
// (ckpt.safetensors -> ckpt.tokenizer.json):
//   {"format": "txc-tokenizer", "version": 1, "lowercase": true,
//    "min_freq": 1, "source": ["[PAD]", "[UNK]", ...], "target": [...]}
// where a word's position in its list is its id. Words are UTF-8 (JSON
// strings are), so the data they come from must be.
//
// For other tools each vocabulary is also written as a Hugging Face
// `tokenizers` file (tokenizer.json, loadable with
// tokenizers.Tokenizer.from_file), one per side: CKPT.source.tokenizer.json
// and CKPT.target.tokenizer.json:
//   {"version": "1.0", "truncation": null, "padding": null,
//    "added_tokens": [{"id": 0, "content": "[PAD]", "single_word": false,
//        "lstrip": false, "rstrip": false, "normalized": false,
//        "special": true}, ...the four specials by id],
//    "normalizer": {"type": "Lowercase"},
//    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
//        {"type": "WhitespaceSplit"},
//        {"type": "Split", "pattern": {"Regex": "[!-&(-,./:-@\\[-`{-~]"},
//         "behavior": "Isolated", "invert": false}]},
//    "post_processor": null, "decoder": null,
//    "model": {"type": "WordLevel", "vocab": {"[PAD]": 0, ...},
//              "unk_token": "[UNK]"}}
// The same split as splitWords for ASCII text. For other text the two
// differ: Lowercase lowercases every letter ("Ú" -> "ú", which splitWords
// keeps), and WhitespaceSplit also splits at non-ASCII spaces (U+00A0...).
// Tokenizer::load reads either format: a Hugging Face file is one side, and
// the other side is read from its sibling (X.source.tokenizer.json <->
// X.target.tokenizer.json).
//
// Subwords (train --tokenizer spm, docs/data.md): a Tokenizer may instead
// hold ONE SentencePiece model (SentencePiece.h) for both sides. Joint, not
// one per side: English and Spanish share most subwords (names, numbers,
// Latin stems), one vocabulary serves the encoder and the decoder, and
// `translate` needs one file. Then source and target are both the model's
// pieces in id order (so every size and [PAD] check above applies
// unchanged), text is encoded and decoded by SentencePiece (cased, no word
// split, detokenized output), and the JSON above carries the .model bytes
// too: "sentencepiece": "<base64>".
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_TOKENIZER_H
#define TXRT_DRIVER_TOKENIZER_H

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace txrt::driver {

class SentencePieceModel;

constexpr const char *kUnkToken = "[UNK]";
constexpr const char *kPadToken = "[PAD]";
constexpr const char *kSosToken = "[SOS]";
constexpr const char *kEosToken = "[EOS]";
constexpr int32_t kNumSpecialTokens = 4;

/// The names of a Hugging Face tokenizer pair: STEM + suffix.
constexpr const char *kSourceTokenizerSuffix = ".source.tokenizer.json";
constexpr const char *kTargetTokenizerSuffix = ".target.tokenizer.json";

/// Splits and lowercases a sentence as documented above.
std::vector<std::string> splitWords(std::string_view text);

/// Joins words with single spaces.
std::string joinWords(const std::vector<std::string> &words);

/// The offset of the first byte of `text` that is not part of well-formed
/// UTF-8 (overlong forms, surrogates and code points above U+10FFFF are
/// not), or std::string_view::npos when it all is.
size_t findInvalidUtf8(std::string_view text);

/// The UTF-8 byte order mark; the text readers drop it at a file's start.
constexpr std::string_view kUtf8ByteOrderMark = "\xEF\xBB\xBF";

/// Why the text readers refuse `line` (its line end removed), or "" when
/// they take it: a byte that is not UTF-8 ("invalid UTF-8 at byte 3 of the
/// line") or a NUL byte (U+0000 is UTF-8, but text never holds one: a
/// binary or UTF-16 file does). `unit` names what `line` is ("line",
/// "text"); on the `firstLine` of a file a UTF-16 byte order mark is named
/// (Windows PowerShell writes UTF-16 by default).
std::string textProblem(std::string_view line, bool firstLine,
                        const char *unit = "line");

/// Occurrences of each word.
using WordCounts = std::unordered_map<std::string, int64_t>;

class Vocabulary {
public:
  Vocabulary() = default;

  /// Counts the words of `sentences` and orders them as documented; throws
  /// std::invalid_argument when padId is negative or leaves a gap.
  static Vocabulary build(const std::vector<std::vector<std::string>> &sentences,
                          int64_t minFreq, int32_t padId);
  /// The same from counted words.
  static Vocabulary fromCounts(const WordCounts &counts, int64_t minFreq,
                               int32_t padId);

  /// From the id-ordered word list; throws std::invalid_argument when a
  /// special is missing or a word repeats.
  static Vocabulary fromWords(std::vector<std::string> words);

  int32_t size() const { return int32_t(words_.size()); }
  /// The id of `word`, [UNK]'s for unknown words.
  int32_t id(const std::string &word) const;
  bool contains(const std::string &word) const { return ids_.count(word) > 0; }
  const std::string &word(int32_t id) const { return words_.at(size_t(id)); }
  const std::vector<std::string> &words() const { return words_; }

  int32_t unkId() const { return unk_; }
  int32_t padId() const { return pad_; }
  int32_t sosId() const { return sos_; }
  int32_t eosId() const { return eos_; }
  bool isSpecial(int32_t id) const {
    return id == unk_ || id == pad_ || id == sos_ || id == eos_;
  }

  /// The Hugging Face tokenizer.json documented above.
  std::string toHuggingFaceJson() const;
  /// Parses one; throws InputError naming `origin` when it is malformed or
  /// is not a word-level tokenizer with the four specials.
  static Vocabulary fromHuggingFaceJson(std::string_view text,
                                        const std::string &origin);

  std::vector<int32_t> encode(const std::vector<std::string> &words) const;
  /// The words of `ids` up to the first [EOS], without specials other than
  /// [UNK].
  std::vector<std::string> decode(const std::vector<int32_t> &ids) const;

private:
  std::vector<std::string> words_;
  std::unordered_map<std::string, int32_t> ids_;
  int32_t unk_ = 0, pad_ = 0, sos_ = 0, eos_ = 0;
};

struct Tokenizer {
  Vocabulary source, target;
  int64_t minFreq = 1;
  /// The joint SentencePiece model of a subword tokenizer; null for words.
  std::shared_ptr<const SentencePieceModel> subwords;

  /// Both sides from one SentencePiece model.
  static Tokenizer fromSentencePiece(SentencePieceModel model);
  /// "pieces" or "words": what a sentence's length counts.
  const char *unit() const { return subwords ? "pieces" : "words"; }
  /// A sentence's ids (no [SOS] / [EOS]): SentencePiece's, or splitWords
  /// then the side's vocabulary.
  std::vector<int32_t> encodeSource(std::string_view text) const;
  std::vector<int32_t> encodeTarget(std::string_view text) const;
  /// Target ids back to text (up to [EOS], specials dropped):
  /// SentencePiece's detokenized text, or the words joined by spaces.
  std::string decodeTarget(const std::vector<int32_t> &ids) const;

  /// The JSON text documented above.
  std::string toJson() const;
  /// Parses it; throws InputError naming `origin` (a quoted path, or where
  /// in a checkpoint the text came from) on anything malformed.
  static Tokenizer fromJson(std::string_view text, const std::string &origin);

  /// The same vocabularies (min_freq aside).
  bool sameVocabularies(const Tokenizer &other) const {
    return source.words() == other.source.words() &&
           target.words() == other.target.words();
  }
  /// How `other` would encode text otherwise, or "" when it encodes as
  /// this one does: other vocabularies, words against SentencePiece
  /// pieces, or another SentencePiece model (its normalizer, scores and
  /// options encode text too, not just its list of pieces).
  std::string differenceFrom(const Tokenizer &other) const;

  /// Writes atomically / reads `path`: a txc-tokenizer file, either file
  /// of a Hugging Face pair (see above), or a SentencePiece .model file.
  void save(const std::string &path) const;
  static Tokenizer load(const std::string &path);

  /// Writes the Hugging Face pair STEM.source.tokenizer.json and
  /// STEM.target.tokenizer.json, each atomically (nothing for subwords:
  /// that format is word-level).
  void saveHuggingFace(const std::string &stem) const;

};

/// "" or a hint when `vocabulary` (words split at spaces) looks built from
/// text written without spaces (Chinese, Japanese, Thai, ...): many of its
/// words are long runs of such characters, whole phrases or sentences the
/// model would learn as one word each. The hint names --tokenizer spm.
std::string unspacedTextHint(const Vocabulary &vocabulary);

/// Counts the texts an inference command read that hold [UNK] (a word the
/// vocabulary lacks, or a character no SentencePiece piece covers), for one
/// note at the end: a sentence of unknown words otherwise came back as an
/// empty or unrelated line with nothing said.
class UnknownTokenCount {
public:
  explicit UnknownTokenCount(int32_t unkId) : unk_(unkId) {}
  /// One text's ids; `where` names it ("<stdin>:7").
  void add(const std::vector<int32_t> &ids, const std::string &where) {
    add(ids.data(), ids.data() + ids.size(), where);
  }
  void add(const int32_t *begin, const int32_t *end, const std::string &where);
  /// "note: ..." naming the count and the first such text, or "" if none.
  /// `kind` names the texts ("sentence"), `unit` what is unknown ("words",
  /// "pieces").
  std::string note(const char *kind, const char *unit) const;
  /// eval's note when the tokens counted are scored targets: "note: U of T
  /// `what` are [UNK] ... (in W of N `kind`s, the first: ...): `scores`
  /// score the model's [UNK] for them, and predicting [UNK] counts as
  /// correct`also`", or "" if none. Without `kind`, no texts are named.
  std::string scoredNote(const std::string &what, const char *kind,
                         const std::string &scores,
                         const std::string &also = "") const;

private:
  int32_t unk_;
  int64_t texts_ = 0, withUnknown_ = 0, tokens_ = 0, unknownTokens_ = 0;
  std::string first_;
};

} // namespace txrt::driver

#endif // TXRT_DRIVER_TOKENIZER_H
