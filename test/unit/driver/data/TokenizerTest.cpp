//===- TokenizerTest.cpp - word splitting, vocabularies, JSON round trip --===//
#include "core/Error.h"
#include "TestUtil.h"
#include "data/Tokenizer.h"
#include "formats/Json.h"

#include <cctype>
#include <cstdio>
#include <regex>
#include <sstream>

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

using Words = std::vector<std::string>;

TEST(TokenizerTest, SplitsLowercasesAndSeparatesPunctuation) {
  EXPECT_EQ(splitWords("I love you"), (Words{"i", "love", "you"}));
  EXPECT_EQ(splitWords("  Hello,  World!\t"),
            (Words{"hello", ",", "world", "!"}));
  EXPECT_EQ(splitWords("don't well-known"), (Words{"don't", "well-known"}));
  EXPECT_EQ(splitWords("Tú comes pastel."),
            (Words{"tú", "comes", "pastel", "."})); // UTF-8 kept as is
  EXPECT_TRUE(splitWords(" \t ").empty());
  EXPECT_EQ(joinWords({"te", "amo"}), "te amo");
  // A byte order mark inside the text (files joined with `cat`) is a
  // blank: it made "\uFEFFyou" a word of its own.
  EXPECT_EQ(splitWords("\xEF\xBB\xBFyou see\xEF\xBB\xBFme"),
            (Words{"you", "see", "me"}));
  EXPECT_TRUE(splitWords("\xEF\xBB\xBF").empty());
  EXPECT_EQ(splitWords("\xEF\xBB"), (Words{"\xEF\xBB"}));
}

TEST(TokenizerTest, OrdersSpecialsThenFrequencyThenAlphabet) {
  Vocabulary vocab = Vocabulary::build(
      {{"b", "a", "c"}, {"c", "a"}, {"c", "z", "y"}}, 1, 0);
  EXPECT_EQ(vocab.words(), (Words{"[PAD]", "[UNK]", "[SOS]", "[EOS]", "c",
                                  "a", "b", "y", "z"}));
  EXPECT_EQ(vocab.padId(), 0);
  EXPECT_EQ(vocab.unkId(), 1);
  EXPECT_EQ(vocab.sosId(), 2);
  EXPECT_EQ(vocab.eosId(), 3);
  EXPECT_EQ(vocab.id("c"), 4);
  EXPECT_EQ(vocab.id("never seen"), vocab.unkId());
  EXPECT_EQ(vocab.encode({"a", "q"}), (std::vector<int32_t>{5, 1}));
  EXPECT_EQ(vocab.decode({2, 5, 1, 4, 3, 6}), (Words{"a", "[UNK]", "c"}));
}

TEST(TokenizerTest, MinFreqAndPadPosition) {
  Vocabulary rare = Vocabulary::build({{"a", "a", "b"}}, 2, 0);
  EXPECT_EQ(rare.size(), 5);
  EXPECT_FALSE(rare.contains("b"));
  Vocabulary padTwo = Vocabulary::build({{"a"}}, 1, 2);
  EXPECT_EQ(padTwo.words(),
            (Words{"[UNK]", "[SOS]", "[PAD]", "[EOS]", "a"}));
  Vocabulary padLast = Vocabulary::build({{"a"}}, 1, 4);
  EXPECT_EQ(padLast.padId(), 4);
  EXPECT_THROW(Vocabulary::build({{"a"}}, 1, 9), std::invalid_argument);
}

TEST(TokenizerTest, JsonRoundTrip) {
  ScratchDir dir;
  Tokenizer tokenizer;
  tokenizer.minFreq = 2;
  tokenizer.source = Vocabulary::build({{"i", "love", "you"}}, 1, 0);
  // A control character: escaped in the JSON, and a word of the text.
  tokenizer.target = Vocabulary::build({{"te", "amo", "\x01q"}}, 1, 0);
  tokenizer.save(dir.file("t.json"));
  Tokenizer loaded = Tokenizer::load(dir.file("t.json"));
  EXPECT_EQ(loaded.minFreq, 2);
  EXPECT_EQ(loaded.source.words(), tokenizer.source.words());
  EXPECT_EQ(loaded.target.words(), tokenizer.target.words());
  EXPECT_NE(readFile(dir.file("t.json")).find("\"format\":\"txc-tokenizer\""),
            std::string::npos);

  writeFile(dir.file("bad.json"),
            R"({"format":"txc-tokenizer","version":1,"source":["a"],)"
            R"("target":[]})");
  EXPECT_THROW_MESSAGE(Tokenizer::load(dir.file("bad.json")), InputError,
                       "bad.json' is not a valid tokenizer file",
                       "[UNK] is missing");
}

TEST(TokenizerTest, HandEditedEntriesThatCanNeverMatchAreRefused) {
  // An empty word, a word with a blank (never made by splitting the text)
  // and a min_freq below 1 were accepted.
  ScratchDir dir;
  auto file = [&](const std::string &extra, const std::string &minFreq) {
    std::string path = dir.file("t.json");
    writeFile(path, "{\"format\":\"txc-tokenizer\",\"version\":1,"
                    "\"min_freq\":" + minFreq + ",\"source\":"
                    "[\"[PAD]\",\"[UNK]\",\"[SOS]\",\"[EOS]\"" + extra + "],"
                    "\"target\":[\"[PAD]\",\"[UNK]\",\"[SOS]\",\"[EOS]\"]}");
    return path;
  };
  EXPECT_EQ(Tokenizer::load(file(",\"ok\"", "1")).source.size(), 5);
  EXPECT_THROW_MESSAGE(Tokenizer::load(file(",\"\"", "1")), InputError,
                       "'source' word '' (id 4) is empty: it could never "
                       "match");
  EXPECT_THROW_MESSAGE(Tokenizer::load(file(",\"a b\"", "1")), InputError,
                       "'source' word 'a b' (id 4) holds a blank");
  // The text is lowercased (A-Z) and punctuation split off: "Hello" and
  // "end." were accepted and every text with them became [UNK].
  EXPECT_THROW_MESSAGE(Tokenizer::load(file(",\"Hello\"", "1")), InputError,
                       "'source' word 'Hello' (id 4) holds an upper-case "
                       "ASCII letter");
  EXPECT_THROW_MESSAGE(Tokenizer::load(file(",\"end.\"", "1")), InputError,
                       "'source' word 'end.' (id 4) holds '.', which the "
                       "tokenizer splits off");
  EXPECT_EQ(
      Tokenizer::load(file(",\".\",\"don't\",\"émile\"", "1")).source.size(),
      7);
  EXPECT_THROW_MESSAGE(Tokenizer::load(file("", "-3")), InputError,
                       "'min_freq' is not a positive integer");
}

TEST(TokenizerTest, TheLowercaseKeyIsRead) {
  // "lowercase" was written and never read: false (a cased vocabulary)
  // and any non-boolean loaded as a word tokenizer that lowercases.
  ScratchDir dir;
  auto file = [&](const std::string &value) {
    std::string path = dir.file("t.json");
    writeFile(path,
              "{\"format\":\"txc-tokenizer\",\"version\":1,"
              "\"lowercase\":" +
                  value +
                  ",\"source\":"
                  "[\"[PAD]\",\"[UNK]\",\"[SOS]\",\"[EOS]\"],"
                  "\"target\":[\"[PAD]\",\"[UNK]\",\"[SOS]\",\"[EOS]\"]}");
    return path;
  };
  EXPECT_EQ(Tokenizer::load(file("true")).source.size(), 4);
  EXPECT_THROW_MESSAGE(Tokenizer::load(file("false")), InputError,
                       "'lowercase' is false, but txc's word tokenizer "
                       "lowercases A-Z");
  EXPECT_THROW_MESSAGE(Tokenizer::load(file("\"no\"")), InputError,
                       "'lowercase' is not true or false");
}

TEST(TokenizerTest, InvalidUtf8IsRefused) {
  ScratchDir dir;
  writeFile(dir.file("latin1.json"),
            "{\"format\":\"txc-tokenizer\",\"version\":1,\"source\":"
            "[\"[PAD]\",\"[UNK]\",\"[SOS]\",\"[EOS]\",\"caf\xe9\"],"
            "\"target\":[\"[PAD]\",\"[UNK]\",\"[SOS]\",\"[EOS]\"]}");
  EXPECT_THROW_MESSAGE(Tokenizer::load(dir.file("latin1.json")), InputError,
                       "latin1.json' is not a valid tokenizer file",
                       "line 1, column ", "ill-formed UTF-8");
  EXPECT_EQ(findInvalidUtf8("plain t\xc3\xba \xe2\x82\xac \xf0\x9f\x98\x80"),
            std::string_view::npos);
  EXPECT_EQ(findInvalidUtf8("caf\xe9"), 3u);           // Latin-1
  EXPECT_EQ(findInvalidUtf8("ab\xc0\xaf"), 2u);        // overlong '/'
  EXPECT_EQ(findInvalidUtf8("\xed\xa0\x80"), 0u);      // a surrogate
  EXPECT_EQ(findInvalidUtf8("x\xf4\x90\x80\x80"), 1u); // above U+10FFFF
  EXPECT_EQ(findInvalidUtf8("x\xe2\x82"), 1u);         // cut short
}

TEST(TokenizerTest, TextProblemNamesNulBytesAndUtf16) {
  EXPECT_EQ(textProblem("plain t\xc3\xba", true), "");
  EXPECT_EQ(textProblem("caf\xe9", false),
            "invalid UTF-8 at byte 4 of the line");
  EXPECT_EQ(textProblem("caf\xe9", false, "text"),
            "invalid UTF-8 at byte 4 of the text");
  // Before, NUL bytes passed as U+0000 into words: the lines after the first
  // of a UTF-16 file became pairs of NUL-riddled words.
  EXPECT_EQ(textProblem(std::string_view("\0i\0 \0l\0o", 8), false),
            "a NUL byte at byte 1 of the line: is it a binary or UTF-16 "
            "file?");
  EXPECT_EQ(textProblem(std::string_view("\xff\xfei\0", 4), true),
            "invalid UTF-8 at byte 1 of the line: it starts with a UTF-16 "
            "byte order mark; save it as UTF-8");
  EXPECT_EQ(textProblem(std::string_view("\xfe\xff\0i", 4), true),
            "invalid UTF-8 at byte 1 of the line: it starts with a UTF-16 "
            "byte order mark; save it as UTF-8");
  EXPECT_EQ(textProblem("\xff\xfe", false),
            "invalid UTF-8 at byte 1 of the line");
  // A compressed corpus (train --data corpus.tsv.gz) said only "invalid
  // UTF-8", once per line.
  EXPECT_EQ(textProblem(std::string_view("\x1f\x8b\x08\x00", 4), true),
            "invalid UTF-8 at byte 2 of the line: it is compressed with gzip; "
            "decompress it first (gunzip)");
  EXPECT_EQ(textProblem(std::string_view("\xfd"
                                         "7zXZ\0\0",
                                         7),
                        true),
            "invalid UTF-8 at byte 1 of the line: it is compressed with xz; "
            "decompress it first (unxz)");
  EXPECT_EQ(
      textProblem(std::string_view("BZh91AY&SY\xa3", 11), true),
      "invalid UTF-8 at byte 11 of the line: it is compressed with bzip2; "
      "decompress it first (bunzip2)");
  EXPECT_EQ(textProblem(std::string_view("\x1f\x8b\x08\x00", 4), false),
            "invalid UTF-8 at byte 2 of the line");
}

//===----------------------------------------------------------------------===//
// Hugging Face tokenizer.json
//===----------------------------------------------------------------------===//

/// What the `tokenizers` library does with the file's pre_tokenizer:
/// WhitespaceSplit, then Split(Regex, Isolated) on each piece, lowercased
/// (the normalizer), for ASCII text.
Words huggingFaceSplit(const Json &file, const std::string &text) {
  const Json &steps = file["pre_tokenizer"]["pretokenizers"];
  std::regex pattern(jsonString(steps[1]["pattern"]["Regex"]));
  std::string lower = text;
  for (char &c : lower)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  Words words;
  std::istringstream pieces(lower);
  std::string piece;
  while (pieces >> piece) {
    size_t last = 0;
    for (auto match = std::sregex_iterator(piece.begin(), piece.end(), pattern);
         match != std::sregex_iterator(); ++match) {
      size_t at = size_t(match->position());
      if (at > last)
        words.push_back(piece.substr(last, at - last));
      words.push_back(match->str());
      last = at + size_t(match->length());
    }
    if (last < piece.size())
      words.push_back(piece.substr(last));
  }
  return words;
}

TEST(TokenizerTest, HuggingFaceFileHasTheLibrarysFields) {
  Vocabulary vocab = Vocabulary::build({{"te", "amo", "te"}}, 1, 2);
  Json file = parseJson(vocab.toHuggingFaceJson());
  std::vector<std::string> keys;
  for (const auto &[key, value] : file.items())
    keys.push_back(key);
  EXPECT_EQ(keys, (Words{"version", "truncation", "padding", "added_tokens",
                         "normalizer", "pre_tokenizer", "post_processor",
                         "decoder", "model"}));
  EXPECT_EQ(file["version"], "1.0");
  EXPECT_TRUE(file["truncation"].is_null());
  EXPECT_TRUE(file["padding"].is_null());
  EXPECT_TRUE(file["post_processor"].is_null());
  EXPECT_TRUE(file["decoder"].is_null());

  // The specials by id, with every AddedToken field.
  const Json &added = file["added_tokens"];
  ASSERT_EQ(added.size(), 4u);
  Words specials;
  for (const Json &token : added) {
    int64_t id = *jsonInteger(token["id"]);
    specials.push_back(jsonString(token["content"]));
    EXPECT_EQ(vocab.word(int32_t(id)), specials.back());
    EXPECT_EQ(token["special"], true);
    EXPECT_EQ(token["normalized"], false);
    EXPECT_EQ(token["single_word"], false);
    EXPECT_EQ(token["lstrip"], false);
    EXPECT_EQ(token["rstrip"], false);
  }
  // pad = 2: [UNK] 0, [SOS] 1, [PAD] 2, [EOS] 3.
  EXPECT_EQ(specials, (Words{"[UNK]", "[SOS]", "[PAD]", "[EOS]"}));

  EXPECT_EQ(file["normalizer"], Json::parse(R"({"type":"Lowercase"})"));
  EXPECT_EQ(file["pre_tokenizer"],
            Json::parse(R"({"type":"Sequence","pretokenizers":[
                {"type":"WhitespaceSplit"},
                {"type":"Split","pattern":{"Regex":"[!-&(-,./:-@\\[-`{-~]"},
                 "behavior":"Isolated","invert":false}]})"));
  const Json &model = file["model"];
  EXPECT_EQ(model["type"], "WordLevel");
  EXPECT_EQ(model["unk_token"], "[UNK]");
  ASSERT_EQ(model["vocab"].size(), size_t(vocab.size()));
  for (int32_t id = 0; id < vocab.size(); ++id)
    EXPECT_EQ(model["vocab"][vocab.word(id)], id) << vocab.word(id);
}

TEST(TokenizerTest, HuggingFacePreTokenizerSplitsLikeSplitWords) {
  Json file = parseJson(Vocabulary::build({}, 1, 0).toHuggingFaceJson());
  for (const char *text :
       {"Hello, World!", "don't stop well-known (x) [y] {z} a/b $5 #1 @me",
        "\"quoted\" a;b:c?d.e~f|g\\h^i_j`k<l>m=n+o*p%q&r", "  spaced\tout  "})
    EXPECT_EQ(huggingFaceSplit(file, text), splitWords(text)) << text;
}

TEST(TokenizerTest, HuggingFacePairRoundTrip) {
  ScratchDir dir;
  Tokenizer tokenizer;
  tokenizer.source = Vocabulary::build({{"i", "love", "you"}}, 1, 0);
  tokenizer.target = Vocabulary::build({{"te", "amo", "tú"}}, 1, 0);
  tokenizer.saveHuggingFace(dir.file("c"));
  for (const char *name : {"c.source.tokenizer.json", "c.target.tokenizer.json"}) {
    Tokenizer loaded = Tokenizer::load(dir.file(name));
    EXPECT_TRUE(loaded.sameVocabularies(tokenizer)) << name;
  }
  // The txc-tokenizer format still loads under either name.
  tokenizer.save(dir.file("old.source.tokenizer.json"));
  EXPECT_TRUE(Tokenizer::load(dir.file("old.source.tokenizer.json"))
                  .sameVocabularies(tokenizer));
}

/// The source side of a one-word Hugging Face pair saved in `dir`, moved
/// alone to `name` (its target side stays as c.target.tokenizer.json).
void saveHuggingFaceSourceAs(ScratchDir &dir, const std::string &name) {
  Tokenizer tokenizer;
  tokenizer.source = Vocabulary::build({{"a"}}, 1, 0);
  tokenizer.target = tokenizer.source;
  tokenizer.saveHuggingFace(dir.file("c"));
  std::rename(dir.file("c.source.tokenizer.json").c_str(),
              dir.file(name).c_str());
}

// One side given alone: the error named only the other file, which the
// user had not given ("cannot open 'lone.target.tokenizer.json'").
TEST(TokenizerTest, HuggingFaceSideWithoutItsPairSaysWhereThePairIsRead) {
  ScratchDir dir;
  saveHuggingFaceSourceAs(dir, "lone.source.tokenizer.json");
  EXPECT_THROW_MESSAGE(
      Tokenizer::load(dir.file("lone.source.tokenizer.json")), InputError,
      "lone.source.tokenizer.json' is the source side of a Hugging Face "
      "tokenizer pair, read with its target side '" +
          dir.file("lone.target.tokenizer.json") + "' beside it: cannot open",
      "No such file or directory");
}

TEST(TokenizerTest, HuggingFaceFileUnderAnotherNameSaysHowItIsRead) {
  // A Hugging Face tokenizer.json not named as one side of a pair was
  // read as a txc-tokenizer file: "'format' is not "txc-tokenizer"".
  ScratchDir dir;
  saveHuggingFaceSourceAs(dir, "tokenizer.json");
  EXPECT_THROW_MESSAGE(
      Tokenizer::load(dir.file("tokenizer.json")), InputError,
      "tokenizer.json' is not a valid tokenizer file: it is a Hugging Face "
      "tokenizer.json, which txc reads as one side of a pair named "
      "X.source.tokenizer.json and X.target.tokenizer.json");
}

TEST(TokenizerTest, HuggingFaceFileErrorsNameTheFile) {
  ScratchDir dir;
  Tokenizer tokenizer;
  tokenizer.source = Vocabulary::build({{"a"}}, 1, 0);
  tokenizer.target = Vocabulary::build({{"b"}}, 1, 0);
  tokenizer.saveHuggingFace(dir.file("c"));
  std::remove(dir.file("c.target.tokenizer.json").c_str());
  EXPECT_THROW_MESSAGE(Tokenizer::load(dir.file("c.source.tokenizer.json")),
                       InputError, "c.target.tokenizer.json");

  auto refused = [&](const std::string &json, const std::string &why) {
    writeFile(dir.file("x.source.tokenizer.json"), json);
    tokenizer.saveHuggingFace(dir.file("y"));
    std::rename(dir.file("y.target.tokenizer.json").c_str(),
                dir.file("x.target.tokenizer.json").c_str());
    EXPECT_THROW_MESSAGE(Tokenizer::load(dir.file("x.source.tokenizer.json")),
                         InputError,
                         "x.source.tokenizer.json' is not a word-level "
                         "Hugging Face tokenizer",
                         why);
  };
  std::string good = tokenizer.source.toHuggingFaceJson();
  auto with = [&](const std::string &from, const std::string &to) {
    std::string text = good;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  refused(with("\"WordLevel\"", "\"BPE\""), "'model.type'");
  refused(with("\"[EOS]\":3", "\"[EOS]\":7"), "the id 7");
  refused(with("\"[EOS]\":3", "\"[EOS]\":2"), "the id 2 to both");
  refused(with("\"[EOS]\":3", "\"[EOZ]\":3"),
          "word '[EOZ]' (id 3) holds '['"); // and [EOS] is missing
  refused(with("\"Lowercase\"", "\"NFC\""), "'normalizer'");
  refused(with("\"unk_token\":\"[UNK]\"", "\"unk_token\":\"<unk>\""),
          "'model.unk_token'");
  // Words the text never splits into, and another pre-tokenizer, were
  // accepted.
  refused(with("\"a\":4", "\"a b\":4"), "word 'a b' (id 4) holds a blank");
  refused(with("\"a\":4", "\"\":4"), "word '' (id 4) is empty");
  refused(with("\"a\":4", "\"A\":4"), "holds an upper-case ASCII letter");
  refused(with("\"WhitespaceSplit\"", "\"Whitespace\""), "'pre_tokenizer'");
}

} // namespace
