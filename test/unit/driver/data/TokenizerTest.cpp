//===- TokenizerTest.cpp - word splitting, vocabularies, JSON round trip --===//
#include "core/Error.h"
#include "TestUtil.h"
#include "data/Tokenizer.h"

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
  tokenizer.target = Vocabulary::build({{"te", "amo", "\"q\""}}, 1, 0);
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

} // namespace
