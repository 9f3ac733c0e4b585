//===- Tokenizer.cpp - word-level vocabularies built from the data --------===//
#include "data/Tokenizer.h"
#include "core/Error.h"
#include "data/SentencePiece.h"
#include "formats/FileIO.h"
#include "formats/Json.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>

namespace txrt::driver {

namespace {

bool isSpace(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f';
}

/// ASCII punctuation that becomes a word of its own.
bool isSeparatePunctuation(unsigned char c) {
  if (c == '\'' || c == '-')
    return false;
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') ||
         (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

bool isSpecialWord(const std::string &word) {
  return word == kPadToken || word == kUnkToken || word == kSosToken ||
         word == kEosToken;
}

/// Why splitWords can never make `word` (so a vocabulary entry holding it
/// is unreachable: text with that word would be [UNK]), or "". The
/// specials are exempt.
std::string unreachableWord(const std::string &word) {
  if (isSpecialWord(word))
    return "";
  if (word.empty())
    return "is empty";
  if (word.size() > 1)
    for (unsigned char c : word)
      if (isSeparatePunctuation(c))
        return std::string("holds '") + char(c) +
               "', which the tokenizer splits off as a word of its own";
  for (unsigned char c : word) {
    if (isSpace(c))
      return "holds a blank (words are split at blanks)";
    if (c >= 'A' && c <= 'Z')
      return "holds an upper-case ASCII letter (the tokenizer lowercases "
             "A-Z in the text)";
    if (c == 0)
      return "holds a NUL byte (text with one is refused)";
  }
  if (word.find("\xEF\xBB\xBF") != std::string::npos)
    return "holds U+FEFF (a byte order mark is a blank in the text)";
  return "";
}

} // namespace

std::vector<std::string> splitWords(std::string_view text) {
  std::vector<std::string> words;
  std::string current;
  auto flush = [&] {
    if (!current.empty())
      words.push_back(std::move(current));
    current.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == 0xEF && text.compare(i, 3, "\xEF\xBB\xBF") == 0) {
      // U+FEFF, a byte order mark inside the text (files concatenated
      // with `cat`): a blank, not part of the next word.
      flush();
      i += 2;
    } else if (isSpace(c)) {
      flush();
    } else if (isSeparatePunctuation(c)) {
      flush();
      words.emplace_back(1, ch);
    } else {
      current += (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : ch;
    }
  }
  flush();
  return words;
}

std::string joinWords(const std::vector<std::string> &words) {
  std::string text;
  for (const std::string &word : words)
    text += (text.empty() ? "" : " ") + word;
  return text;
}

size_t findInvalidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    unsigned char lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    // The length of the sequence and the range of its second byte
    // (RFC 3629's table: no overlong forms, surrogates or > U+10FFFF).
    size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      low = lead == 0xE0 ? 0xA0 : 0x80;
      high = lead == 0xED ? 0x9F : 0xBF;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      low = lead == 0xF0 ? 0x90 : 0x80;
      high = lead == 0xF4 ? 0x8F : 0xBF;
    } else {
      return i;
    }
    if (i + length > text.size())
      return i;
    for (size_t k = 1; k < length; ++k) {
      unsigned char next = static_cast<unsigned char>(text[i + k]);
      if (next < (k == 1 ? low : 0x80) || next > (k == 1 ? high : 0xBF))
        return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

std::string textProblem(std::string_view line, bool firstLine,
                        const char *unit) {
  size_t bad = findInvalidUtf8(line);
  size_t nul = line.find('\0');
  if (bad == std::string_view::npos && nul == std::string_view::npos)
    return "";
  std::string problem =
      nul < bad ? "a NUL byte at byte " + std::to_string(nul + 1) + " of the " +
                      unit + ": is it a binary or UTF-16 file?"
                : "invalid UTF-8 at byte " + std::to_string(bad + 1) +
                      " of the " + unit;
  if (!firstLine)
    return problem;
  if (line.substr(0, 2) == "\xFF\xFE" || line.substr(0, 2) == "\xFE\xFF")
    problem += ": it starts with a UTF-16 byte order mark; save it as UTF-8";
  // Compressed corpora (a downloaded .gz) are read as they are: say so.
  struct Magic {
    std::string_view bytes;
    const char *format, *tool;
  };
  for (const Magic &magic :
       {Magic{std::string_view("\x1F\x8B", 2), "gzip", "gunzip"},
        Magic{std::string_view("\xFD\x37zXZ\0", 6), "xz", "unxz"},
        Magic{std::string_view("\x28\xB5\x2F\xFD", 4), "zstd", "unzstd"},
        Magic{std::string_view("BZh", 3), "bzip2", "bunzip2"},
        Magic{std::string_view("PK\x03\x04", 4), "zip", "unzip"}})
    if (line.substr(0, magic.bytes.size()) == magic.bytes)
      return problem + ": it is compressed with " + magic.format +
             "; decompress it first (" + magic.tool + ")";
  return problem;
}

//===----------------------------------------------------------------------===//
// Vocabulary
//===----------------------------------------------------------------------===//

Vocabulary
Vocabulary::build(const std::vector<std::vector<std::string>> &sentences,
                  int64_t minFreq, int32_t padId) {
  WordCounts counts;
  for (const auto &sentence : sentences)
    for (const std::string &word : sentence)
      ++counts[word];
  return fromCounts(counts, minFreq, padId);
}

Vocabulary Vocabulary::fromCounts(const WordCounts &counts, int64_t minFreq,
                                  int32_t padId) {
  std::vector<std::pair<std::string, int64_t>> ranked;
  for (auto &[word, count] : counts)
    if (count >= minFreq && word != kUnkToken && word != kPadToken &&
        word != kSosToken && word != kEosToken)
      ranked.emplace_back(word, count);
  std::sort(ranked.begin(), ranked.end(), [](const auto &a, const auto &b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });

  std::vector<std::string> rest = {kUnkToken, kSosToken, kEosToken};
  for (auto &[word, count] : ranked)
    rest.push_back(word);
  if (padId < 0 || size_t(padId) > rest.size())
    throw std::invalid_argument(
        "the pad id " + std::to_string(padId) + " lies outside the " +
        std::to_string(rest.size() + 1) +
        " ids of the vocabulary ([PAD], [UNK], [SOS], [EOS] and " +
        std::to_string(rest.size() - 3) +
        " words): the pad id (the model's config pad) must be in [0, " +
        std::to_string(rest.size()) +
        "]; recompile with txc -D pad=N (0 is usual), or train on data "
        "with more distinct words");
  std::vector<std::string> words;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (words.size() == size_t(padId))
      words.push_back(kPadToken);
    words.push_back(std::move(rest[i]));
  }
  if (words.size() == size_t(padId))
    words.push_back(kPadToken);
  return fromWords(std::move(words));
}

Vocabulary Vocabulary::fromWords(std::vector<std::string> words) {
  Vocabulary vocab;
  vocab.words_ = std::move(words);
  for (size_t i = 0; i < vocab.words_.size(); ++i)
    if (!vocab.ids_.emplace(vocab.words_[i], int32_t(i)).second)
      throw std::invalid_argument(
          "the word " + quotedForMessage(vocab.words_[i]) + " appears twice");
  auto special = [&](const char *name) {
    auto found = vocab.ids_.find(name);
    if (found == vocab.ids_.end())
      throw std::invalid_argument(std::string("the special ") + name +
                                  " is missing");
    return found->second;
  };
  vocab.unk_ = special(kUnkToken);
  vocab.pad_ = special(kPadToken);
  vocab.sos_ = special(kSosToken);
  vocab.eos_ = special(kEosToken);
  return vocab;
}

int32_t Vocabulary::id(const std::string &word) const {
  auto found = ids_.find(word);
  return found == ids_.end() ? unk_ : found->second;
}

std::vector<int32_t>
Vocabulary::encode(const std::vector<std::string> &words) const {
  std::vector<int32_t> ids;
  ids.reserve(words.size());
  for (const std::string &word : words)
    ids.push_back(id(word));
  return ids;
}

std::vector<std::string>
Vocabulary::decode(const std::vector<int32_t> &ids) const {
  std::vector<std::string> words;
  for (int32_t id : ids) {
    if (id == eos_)
      break;
    if (id < 0 || id >= size() || id == pad_ || id == sos_)
      continue;
    words.push_back(words_[size_t(id)]);
  }
  return words;
}

//===----------------------------------------------------------------------===//
// Hugging Face tokenizer.json
//===----------------------------------------------------------------------===//

namespace {

/// splitWords' punctuation (ASCII, apostrophe and hyphen excepted) as an
/// Oniguruma character class.
constexpr const char *kPunctuationRegex = "[!-&(-,./:-@\\[-`{-~]";

Json huggingFaceObject(const char *type) {
  Json object = Json::object();
  object["type"] = type;
  return object;
}

/// The pre-tokenizer of splitWords: blanks, then punctuation isolated.
Json txcPreTokenizer() {
  Json split = huggingFaceObject("Split");
  split["pattern"] = Json::object({{"Regex", kPunctuationRegex}});
  split["behavior"] = "Isolated";
  split["invert"] = false;
  Json preTokenizer = huggingFaceObject("Sequence");
  preTokenizer["pretokenizers"] =
      Json::array({huggingFaceObject("WhitespaceSplit"), std::move(split)});
  return preTokenizer;
}

} // namespace

std::string Vocabulary::toHuggingFaceJson() const {
  Json root = Json::object();
  root["version"] = "1.0";
  root["truncation"] = nullptr;
  root["padding"] = nullptr;
  Json added = Json::array();
  for (int32_t id = 0; id < size(); ++id) {
    if (!isSpecial(id))
      continue;
    Json token = Json::object();
    token["id"] = id;
    token["content"] = words_[size_t(id)];
    token["single_word"] = false;
    token["lstrip"] = false;
    token["rstrip"] = false;
    token["normalized"] = false;
    token["special"] = true;
    added.push_back(std::move(token));
  }
  root["added_tokens"] = std::move(added);
  root["normalizer"] = huggingFaceObject("Lowercase");
  root["pre_tokenizer"] = txcPreTokenizer();
  root["post_processor"] = nullptr;
  root["decoder"] = nullptr;
  Json model = huggingFaceObject("WordLevel");
  Json vocab = Json::object();
  for (size_t id = 0; id < words_.size(); ++id)
    appendMember(vocab, words_[id], int64_t(id)); // (each word once)
  model["vocab"] = std::move(vocab);
  model["unk_token"] = kUnkToken;
  root["model"] = std::move(model);
  try {
    return txrt::driver::toJson(root) + "\n";
  } catch (const JsonError &error) {
    throw std::invalid_argument(std::string("the tokenizer: ") + error.what());
  }
}

Vocabulary Vocabulary::fromHuggingFaceJson(std::string_view text,
                                           const std::string &origin) {
  auto bad = [&](const std::string &why) {
    return InputError(origin + " is not a word-level Hugging Face tokenizer "
                               "file txc can use: " +
                      why);
  };
  Json root;
  try {
    root = parseJson(text);
  } catch (const JsonError &error) {
    throw bad(error.what());
  }
  const Json *model = jsonMember(root, "model");
  const Json *type = model ? jsonMember(*model, "type") : nullptr;
  if (!type || !type->is_string() || jsonString(*type) != "WordLevel")
    throw bad("'model.type' is not \"WordLevel\"");
  const Json *unk = jsonMember(*model, "unk_token");
  if (!unk || !unk->is_string() || jsonString(*unk) != kUnkToken)
    throw bad(std::string("'model.unk_token' is not \"") + kUnkToken + "\"");
  const Json *vocab = jsonMember(*model, "vocab");
  if (!vocab || !vocab->is_object())
    throw bad("'model.vocab' is not an object of word: id");
  // Ids must be exactly 0..n-1, each once.
  std::vector<std::string> words(vocab->size());
  std::vector<bool> seen(vocab->size(), false);
  for (const auto &[word, idValue] : vocab->items()) {
    std::optional<int64_t> id = jsonInteger(idValue);
    if (!id || *id < 0 || *id >= int64_t(words.size()))
      throw bad("'model.vocab' gives " + quotedForMessage(word) + " the id " +
                idValue.dump() + ", not one of 0.." +
                std::to_string(words.size() - 1));
    if (seen[size_t(*id)])
      throw bad("'model.vocab' gives the id " + std::to_string(*id) +
                " to both " + quotedForMessage(words[size_t(*id)]) + " and " +
                quotedForMessage(word));
    if (std::string why = unreachableWord(word); !why.empty())
      throw bad("'model.vocab' word " + quotedForMessage(word) + " (id " +
                std::to_string(*id) + ") " + why + ": it could never match");
    seen[size_t(*id)] = true;
    words[size_t(*id)] = word;
  }
  // Words split as txc splits them (the file txc writes): another
  // pre-tokenizer cuts the text into other words than these.
  const Json *preTokenizer = jsonMember(root, "pre_tokenizer");
  // (Compared as plain JSON: a file re-saved by another tool may order
  // the keys otherwise.)
  if (!preTokenizer || nlohmann::json::parse(preTokenizer->dump()) !=
                           nlohmann::json::parse(txcPreTokenizer().dump()))
    throw bad("'pre_tokenizer' is not txc's (a WhitespaceSplit, then ASCII "
              "punctuation isolated, as txc writes it): its words would be "
              "cut otherwise");
  const Json *normalizer = jsonMember(root, "normalizer");
  const Json *normalizerType =
      normalizer ? jsonMember(*normalizer, "type") : nullptr;
  if (!normalizerType || !normalizerType->is_string() ||
      jsonString(*normalizerType) != "Lowercase")
    throw bad("'normalizer' is not {\"type\": \"Lowercase\"} (txc's words "
              "are lowercase)");
  try {
    return fromWords(std::move(words));
  } catch (const std::invalid_argument &error) {
    throw bad(std::string("'model.vocab': ") + error.what());
  }
}

//===----------------------------------------------------------------------===//
// Tokenizer
//===----------------------------------------------------------------------===//

namespace {

constexpr const char *kBase64Digits =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string toBase64(const std::string &bytes) {
  std::string text;
  text.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t group = uint32_t(uint8_t(bytes[i])) << 16;
    if (i + 1 < bytes.size())
      group |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    if (i + 2 < bytes.size())
      group |= uint32_t(uint8_t(bytes[i + 2]));
    for (size_t k = 0; k < 4; ++k)
      text += k <= bytes.size() - i ? kBase64Digits[(group >> (18 - 6 * k)) & 63]
                                    : '=';
  }
  return text;
}

/// nullopt when `text` is not base64.
std::optional<std::string> fromBase64(const std::string &text) {
  if (text.size() % 4 != 0)
    return std::nullopt;
  std::string bytes;
  bytes.reserve(text.size() / 4 * 3);
  uint32_t group = 0;
  int bits = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '=') {
      if (i + 2 < text.size())
        return std::nullopt;
      continue;
    }
    const char *digit = std::strchr(kBase64Digits, c);
    if (!digit || c == 0)
      return std::nullopt;
    group = (group << 6) | uint32_t(digit - kBase64Digits);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes += char((group >> bits) & 0xff);
    }
  }
  return bytes;
}

} // namespace

Tokenizer Tokenizer::fromSentencePiece(SentencePieceModel model) {
  std::vector<std::string> pieces;
  for (int32_t id = 0; id < model.size(); ++id)
    pieces.push_back(model.piece(id));
  Tokenizer tokenizer;
  try {
    tokenizer.source = Vocabulary::fromWords(std::move(pieces));
  } catch (const std::invalid_argument &error) {
    throw InputError(std::string("the SentencePiece model does not have "
                                 "txc's specials [PAD] [UNK] [SOS] [EOS] in "
                                 "ids 0..3: ") +
                     error.what() +
                     " (spm_train names them <pad> <unk> <s> </s> unless "
                     "told: train it with --pad_piece=[PAD] --unk_piece=[UNK] "
                     "--bos_piece=[SOS] --eos_piece=[EOS]; user-defined "
                     "symbols are text, not specials)");
  }
  tokenizer.target = tokenizer.source;
  tokenizer.subwords =
      std::make_shared<const SentencePieceModel>(std::move(model));
  return tokenizer;
}

std::vector<int32_t> Tokenizer::encodeSource(std::string_view text) const {
  return subwords ? subwords->encode(text) : source.encode(splitWords(text));
}

std::vector<int32_t> Tokenizer::encodeTarget(std::string_view text) const {
  return subwords ? subwords->encode(text) : target.encode(splitWords(text));
}

std::string Tokenizer::decodeTarget(const std::vector<int32_t> &ids) const {
  return subwords ? subwords->decode(ids) : joinWords(target.decode(ids));
}

std::string Tokenizer::toJson() const {
  Json root = Json::object();
  root["format"] = "txc-tokenizer";
  root["version"] = 1;
  root["lowercase"] = !subwords; // SentencePiece keeps the text's case
  root["min_freq"] = minFreq;
  root["source"] = source.words();
  root["target"] = target.words();
  if (subwords)
    root["sentencepiece"] = toBase64(subwords->bytes());
  try {
    return txrt::driver::toJson(root) + "\n";
  } catch (const JsonError &error) {
    // The data reader refuses text that is not UTF-8, so a word never is.
    throw std::invalid_argument(std::string("the tokenizer: ") + error.what());
  }
}

Tokenizer Tokenizer::fromJson(std::string_view text,
                              const std::string &origin) {
  auto bad = [&](const std::string &why) {
    return InputError(origin + " is not a valid tokenizer file: " + why);
  };
  Json root;
  std::string why = parseFormattedJson(text, "txc-tokenizer", 1, root);
  // A Hugging Face tokenizer.json under another name (read by content, not
  // only by the pair's names): say how it is read, not that 'format' is
  // missing.
  if (!why.empty() && !jsonMember(root, "format") &&
      jsonMember(root, "model") && jsonMember(root, "pre_tokenizer")) {
    // Only a word-level one is read (a BPE, WordPiece or Unigram model
    // splits words as txc's tokenizers do not: renaming it as told was
    // then refused for its model.type).
    const Json &model = *jsonMember(root, "model");
    const Json *type = model.is_object() ? jsonMember(model, "type") : nullptr;
    if (type && type->is_string() && jsonString(*type) != "WordLevel")
      throw bad("it is a Hugging Face tokenizer.json of a " +
                jsonString(*type) +
                " model, which txc does not read (it reads WordLevel ones "
                "and SentencePiece models): train the model with txc's "
                "own tokenizer (--tokenizer word or spm), or give ids with "
                "`run`");
    throw bad(std::string("it is a Hugging Face tokenizer.json, which txc "
                          "reads as one side of a pair named X") +
              kSourceTokenizerSuffix + " and X" + kTargetTokenizerSuffix +
              " (the other side from its sibling; txc's train --save "
              "writes such pairs); name it so, or give the txc-tokenizer "
              "file the checkpoint's training wrote");
  }
  if (!why.empty())
    throw bad(why);
  Tokenizer tokenizer;
  if (const Json *minFreq = jsonMember(root, "min_freq")) {
    std::optional<int64_t> value = jsonInteger(*minFreq);
    if (!value || *value < 1)
      throw bad("'min_freq' is not a positive integer");
    tokenizer.minFreq = *value;
  }
  // txc's word tokenizer lowercases A-Z (the key was written, never
  // read: "lowercase": false with cased words made every cased word
  // unreachable); a SentencePiece model keeps case.
  const bool subwords = jsonMember(root, "sentencepiece") != nullptr;
  if (const Json *lowercase = jsonMember(root, "lowercase")) {
    if (!lowercase->is_boolean())
      throw bad("'lowercase' is not true or false");
    if (lowercase->get<bool>() == subwords)
      throw bad(subwords ? "'lowercase' is true, but a SentencePiece model "
                           "keeps case"
                         : "'lowercase' is false, but txc's word tokenizer "
                           "lowercases A-Z (a cased vocabulary needs "
                           "--tokenizer spm)");
  }
  auto side = [&](const char *key) {
    const Json *list = jsonMember(root, key);
    if (!list || !list->is_array())
      throw bad(std::string("'") + key + "' is not an array of words");
    std::vector<std::string> words;
    for (const Json &word : *list) {
      if (!word.is_string())
        throw bad(std::string("'") + key + "' holds a non-string");
      words.push_back(jsonString(word));
      // Only what splitWords makes can match a word of the text.
      const std::string &last = words.back();
      if (std::string why = unreachableWord(last); !why.empty())
        throw bad(std::string("'") + key + "' word " + quotedForMessage(last) +
                  " (id " + std::to_string(words.size() - 1) + ") " + why +
                  ": it could never match");
    }
    try {
      return Vocabulary::fromWords(std::move(words));
    } catch (const std::invalid_argument &error) {
      throw bad(std::string("'") + key + "': " + error.what());
    }
  };
  if (const Json *model = jsonMember(root, "sentencepiece")) {
    std::optional<std::string> bytes;
    if (model->is_string())
      bytes = fromBase64(jsonString(*model));
    if (!bytes)
      throw bad("'sentencepiece' is not a base64 string");
    Tokenizer subword = fromSentencePiece(SentencePieceModel::fromBytes(
        std::move(*bytes), "'sentencepiece' of " + origin));
    subword.minFreq = tokenizer.minFreq;
    return subword;
  }
  tokenizer.source = side("source");
  tokenizer.target = side("target");
  return tokenizer;
}

std::string Tokenizer::differenceFrom(const Tokenizer &other) const {
  if (bool(subwords) != bool(other.subwords))
    return subwords ? "one is a SentencePiece model, the other splits words"
                    : "one splits words, the other is a SentencePiece model";
  if (!sameVocabularies(other))
    return std::string("their vocabularies differ");
  if (subwords && subwords->bytes() != other.subwords->bytes())
    return "their SentencePiece models differ beyond the pieces (the "
           "normalizer, scores or options)";
  return "";
}

void Tokenizer::save(const std::string &path) const {
  AtomicFileWriter writer(path);
  writer.write(toJson());
  writer.commit();
}

Tokenizer Tokenizer::load(const std::string &path) {
  if (endsWith(path, ".model"))
    return fromSentencePiece(SentencePieceModel::load(path));
  std::string text = readWholeFile(path);
  bool source = endsWith(path, kSourceTokenizerSuffix);
  if (!source && !endsWith(path, kTargetTokenizerSuffix))
    return fromJson(text, "'" + path + "'");
  // One side of a Hugging Face pair (or a txc-tokenizer file so named).
  Json root;
  try {
    root = parseJson(text);
  } catch (const JsonError &) {
  }
  if (!jsonMember(root, "model"))
    return fromJson(text, "'" + path + "'");
  std::string stem = path.substr(
      0, path.size() -
             std::string(source ? kSourceTokenizerSuffix : kTargetTokenizerSuffix)
                 .size());
  std::string other =
      stem + (source ? kTargetTokenizerSuffix : kSourceTokenizerSuffix);
  Tokenizer tokenizer;
  Vocabulary mine = Vocabulary::fromHuggingFaceJson(text, "'" + path + "'");
  std::string otherText;
  try {
    otherText = readWholeFile(other);
  } catch (const DriverError &error) {
    // Which file it is and why it is read: the user named the other one.
    throw InputError("'" + path + "' is the " + (source ? "source" : "target") +
                     " side of a Hugging Face tokenizer pair, read with its " +
                     (source ? "target" : "source") + " side '" + other +
                     "' beside it: " + error.what());
  }
  Vocabulary theirs =
      Vocabulary::fromHuggingFaceJson(otherText, "'" + other + "'");
  tokenizer.source = source ? std::move(mine) : std::move(theirs);
  tokenizer.target = source ? std::move(theirs) : std::move(mine);
  return tokenizer;
}

void Tokenizer::saveHuggingFace(const std::string &stem) const {
  if (subwords)
    return;
  for (const auto &[suffix, vocab] :
       {std::pair{kSourceTokenizerSuffix, &source},
        std::pair{kTargetTokenizerSuffix, &target}}) {
    AtomicFileWriter writer(stem + suffix);
    writer.write(vocab->toHuggingFaceJson());
    writer.commit();
  }
}

void UnknownTokenCount::add(const int32_t *begin, const int32_t *end,
                            const std::string &where) {
  ++texts_;
  tokens_ += end - begin;
  const int64_t unknown = std::count(begin, end, unk_);
  if (unknown == 0)
    return;
  unknownTokens_ += unknown;
  if (withUnknown_++ == 0)
    first_ = where;
}

std::string UnknownTokenCount::scoredNote(const std::string &what,
                                          const char *kind,
                                          const std::string &scores,
                                          const std::string &also) const {
  if (unknownTokens_ == 0)
    return "";
  std::string note = "note: " + std::to_string(unknownTokens_) + " of " +
                     std::to_string(tokens_) + " " + what +
                     (unknownTokens_ == 1 ? " is" : " are") +
                     " [UNK], not in the vocabulary";
  if (kind)
    note += " (in " + std::to_string(withUnknown_) + " of " +
            std::to_string(texts_) + " " + kind + (texts_ == 1 ? "" : "s") +
            ", the first: " + first_ + ")";
  return note + ": " + scores +
         " score the model's [UNK] for them, and predicting [UNK] counts as "
         "correct" +
         also;
}

std::string UnknownTokenCount::note(const char *kind, const char *unit) const {
  if (withUnknown_ == 0)
    return "";
  const bool pieces = std::string_view(unit) == "pieces";
  return "note: " + std::to_string(withUnknown_) + " of " +
         std::to_string(texts_) + " " + kind + (texts_ == 1 ? "" : "s") +
         " hold" + (withUnknown_ == 1 ? "s " : " ") +
         (pieces ? "characters no piece of the tokenizer covers"
                 : "words not in the vocabulary") +
         " (the first: " + first_ +
         "), each read as [UNK]: what the model says for them may not follow "
         "from the text";
}

namespace {

/// Whether code point `c` belongs to a script written without spaces
/// between words: Han, Hiragana, Katakana, Thai, Lao, Tibetan, Myanmar,
/// Khmer (Korean is written with spaces).
bool unspacedScript(uint32_t c) {
  return (c >= 0x0E00 && c <= 0x0EFF) || // Thai, Lao
         (c >= 0x0F00 && c <= 0x0FFF) || // Tibetan
         (c >= 0x1000 && c <= 0x109F) || // Myanmar
         (c >= 0x1780 && c <= 0x17FF) || // Khmer
         (c >= 0x3040 && c <= 0x30FF) || // Hiragana, Katakana
         (c >= 0x3400 && c <= 0x4DBF) || // CJK extension A
         (c >= 0x4E00 && c <= 0x9FFF) || // CJK unified ideographs
         (c >= 0xF900 && c <= 0xFAFF) || // CJK compatibility
         (c >= 0x20000 && c <= 0x3134F); // CJK extensions B..G
}

/// The code points of valid UTF-8 `word` (the text checks made it so):
/// (all, in unspaced scripts).
std::pair<int64_t, int64_t> scriptCounts(const std::string &word) {
  int64_t all = 0, unspaced = 0;
  for (size_t i = 0; i < word.size();) {
    unsigned char lead = static_cast<unsigned char>(word[i]);
    size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    uint32_t c = length == 1   ? lead
                 : length == 2 ? lead & 0x1F
                 : length == 3 ? lead & 0x0F
                               : lead & 0x07;
    for (size_t k = 1; k < length && i + k < word.size(); ++k)
      c = c << 6 | (static_cast<unsigned char>(word[i + k]) & 0x3F);
    i += length;
    ++all;
    unspaced += unspacedScript(c);
  }
  return {all, unspaced};
}

} // namespace

std::string unspacedTextHint(const Vocabulary &vocabulary) {
  // A word of 6 or more characters, most of them of such a script: a
  // phrase, not a word (Chinese words are 1 to 4 characters).
  constexpr int64_t kLongRun = 6;
  int64_t words = 0, runs = 0;
  for (int32_t id = 0; id < vocabulary.size(); ++id) {
    if (vocabulary.isSpecial(id))
      continue;
    ++words;
    auto [all, unspaced] = scriptCounts(vocabulary.word(id));
    runs += all >= kLongRun && 2 * unspaced >= all;
  }
  if (runs < 3 || 5 * runs < words)
    return "";
  return std::to_string(runs) + " of the vocabulary's " +
         std::to_string(words) + " words are runs of " +
         std::to_string(kLongRun) +
         " or more Chinese, Japanese, Thai (...) characters: the word "
         "tokenizer splits at spaces only, and text written without spaces "
         "becomes whole phrases as words. Give --tokenizer spm (SentencePiece "
         "pieces), or split the text into words first";
}

} // namespace txrt::driver
