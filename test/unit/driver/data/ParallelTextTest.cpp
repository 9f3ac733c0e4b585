//===- ParallelTextTest.cpp - TSV data: errors with FILE:LINE, bounds -----===//
#include "core/Error.h"
#include "core/ModelInfo.h"
#include "data/ParallelText.h"
#include "formats/Json.h"
#include "TestUtil.h"

extern "C" const char fake_seq2seq_json[]; // FakeSeq2Seq.cpp

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

TEST(ParallelTextTest, ReadsPairsAndCrlf) {
  ParallelText text =
      parseParallelText("I love you\tTe amo\r\nyou see me\tme ves\n", "d.tsv");
  ASSERT_EQ(text.pairs.size(), 2u);
  EXPECT_EQ(text.pairs[0].source,
            (std::vector<std::string>{"i", "love", "you"}));
  EXPECT_EQ(text.pairs[0].target, (std::vector<std::string>{"te", "amo"}));
  EXPECT_EQ(text.pairs[1].line, 2);
}

TEST(ParallelTextTest, EveryBadLineIsReportedWithFileAndLine) {
  EXPECT_THROW_MESSAGE(
      parseParallelText("a\tb\n\nno tab here\n\tonly target\nsource only\t \n"
                        "x\ty\tz\n",
                        "data.tsv"),
      InputError, "data.tsv:2: empty line",
      "data.tsv:3: no tab between source and target",
      "data.tsv:4: the source side is empty",
      "data.tsv:5: the target side is empty", "data.tsv:6: more than one tab",
      // The lengths come after (a second run showed those of one file).
      "\nnote: the lengths of the other lines are checked once these are "
      "fixed");
  EXPECT_THROW_MESSAGE(parseParallelText("", "empty.tsv"), InputError,
                       "'empty.tsv' holds no sentence pairs");
  // No good line: no other lines to check.
  try {
    parseParallelText("no tab\nnor here\n", "bad.tsv");
    ADD_FAILURE() << "no error";
  } catch (const InputError &error) {
    EXPECT_EQ(std::string(error.what()).find("lengths"), std::string::npos)
        << error.what();
  }
}

TEST(ParallelTextTest, TextThatIsNotUtf8IsRefusedWithFileAndLine) {
  // Words end up as JSON strings in the tokenizer, which must be UTF-8:
  // Latin-1 data fails before training instead of at the save.
  EXPECT_THROW_MESSAGE(
      parseParallelText("tu\tt\xc3\xba\ncaf\xe9 au lait\tcoffee\n",
                        "latin1.tsv"),
      InputError,
      "latin1.tsv:2: invalid UTF-8 at byte 4 of the line (the data must be "
      "UTF-8 text)");
}

TEST(ParallelTextTest, SentencesLongerThanTheBoundsNameTheDimAndFlag) {
  ModelInfo model = ModelInfo::parse(fake_seq2seq_json);
  const EntryInfo &train = *model.findEntry("train");
  SequenceBounds bounds = sequenceBounds(model, train, train);
  EXPECT_EQ(bounds.batch.bound, 8);
  EXPECT_EQ(bounds.batch.configKey, "batch");
  EXPECT_EQ(bounds.source.bound, 7);
  EXPECT_EQ(bounds.source.configKey, "max_len");
  ParallelText text = parseParallelText(
      "a b c d e f g h\tx\nok\tv w x y z u v\nfine\tfine\n", "long.tsv");
  Tokenizer tokenizer = buildTokenizer(model, text, 1);
  EXPECT_THROW_MESSAGE(
      encodeParallelText(text, tokenizer, bounds), InputError,
      "long.tsv:1: the source sentence has 8 words, more than dim S <= 7 "
      "(config max_len; recompile with txc -D max_len=N to raise it)",
      "long.tsv:2: the target sentence has 7 words; with [SOS] / [EOS] that "
      "is 8 positions, more than dim T <= 7");
}

// eval --truncate: a source keeps its first S words; a target its first
// T - 1 and the next one in nextTarget, where [EOS] would be scored; pairs
// that fit are left whole, and without `cuts` the errors say the way out.
TEST(ParallelTextTest, CutsKeepTheFirstWordsAndTheTargetsNextOne) {
  ModelInfo model = ModelInfo::parse(fake_seq2seq_json);
  const EntryInfo &train = *model.findEntry("train");
  SequenceBounds bounds = sequenceBounds(model, train, train); // S, T <= 7
  ParallelText text = parseParallelText(
      "a b c d e f g h\tx\nok\tv w x y z u v\nfine\tv w x y z u\n", "long.tsv");
  Tokenizer tokenizer = buildTokenizer(model, text, 1);
  PairCuts cuts;
  std::vector<EncodedPair> pairs =
      encodeParallelText(text, tokenizer, bounds, &cuts);
  ASSERT_EQ(pairs.size(), 3u);
  EXPECT_EQ(cuts.sources, 1);
  EXPECT_EQ(cuts.targets, 1);
  EXPECT_EQ(pairs[0].source,
            tokenizer.source.encode({"a", "b", "c", "d", "e", "f", "g"}));
  EXPECT_EQ(pairs[0].nextTarget, -1);
  EXPECT_EQ(pairs[1].target,
            tokenizer.target.encode({"v", "w", "x", "y", "z", "u"}));
  EXPECT_EQ(pairs[1].nextTarget, tokenizer.target.encode({"v"})[0]);
  // Six words and [EOS] fit the seven positions: whole.
  EXPECT_EQ(pairs[2].target,
            tokenizer.target.encode({"v", "w", "x", "y", "z", "u"}));
  EXPECT_EQ(pairs[2].nextTarget, -1);
  EXPECT_THROW_MESSAGE(
      encodeParallelText(text, tokenizer, bounds, nullptr, " (WAY OUT)"),
      InputError,
      "more than dim S <= 7 (config max_len; recompile with txc "
      "-D max_len=N to raise it) (WAY OUT)",
      "more than dim T <= 7 (config max_len; recompile with txc -D "
      "max_len=N to raise it) (WAY OUT)");
  // A T bound of 1 holds [SOS] alone: nothing to cut to, and the way out
  // is not to give the --truncate that was given.
  bounds.target.bound = 1;
  EXPECT_THROW_MESSAGE(
      encodeParallelText(text, tokenizer, bounds, &cuts, " (WAY OUT)"),
      InputError,
      "more than dim T <= 1 (config max_len; recompile with txc -D "
      "max_len=N to raise it); a T bound of 1 holds [SOS] alone: no word of "
      "a reference can be scored");
}

TEST(ParallelTextTest, VocabularyTooLargeNamesTheConfigKey) {
  ModelInfo model = ModelInfo::parse(fake_seq2seq_json);
  std::string data;
  for (int i = 0; i < 17; ++i)
    data += "w" + std::to_string(i) + "\tok\n";
  data += "w0\tok\n"; // the one word --min-freq 2 keeps
  ParallelText text = parseParallelText(data, "big.tsv");
  EXPECT_THROW_MESSAGE(buildTokenizer(model, text, 1), InputError,
                       "the source vocabulary of 'big.tsv' needs 21 ids",
                       "config src_vocab is 20",
                       "recompile with txc -D src_vocab=21");
  // Dropping the rare words makes it fit.
  Tokenizer fits = buildTokenizer(model, text, 2);
  EXPECT_EQ(fits.source.size(), 5);
  // One that keeps no word is refused (every token would be [UNK]).
  EXPECT_THROW_MESSAGE(buildTokenizer(model, text, 3), InputError,
                       "--min-freq 3 keeps no word of the source side of "
                       "'big.tsv'");
}

TEST(ParallelTextTest, APadElsewhereNamesItsSideAndId) {
  // A tokenizer whose target vocabulary has [PAD] at id 1 was refused as
  // "has [PAD] at id 0 but the model's config pad is 0" (the source's id).
  ModelInfo model = ModelInfo::parse(fake_seq2seq_json);
  ParallelText text = parseParallelText("a b\tc d\n", "d.tsv");
  Json json = parseJson(buildTokenizer(model, text, 1).toJson());
  std::swap(json["target"][0], json["target"][1]);
  Tokenizer swapped = Tokenizer::fromJson(toJson(json), "'t.json'");
  EXPECT_THROW_MESSAGE(checkTokenizerFitsModel(model, swapped, "'t.json'"),
                       InputError,
                       "'t.json' has [PAD] at id 1 of its target vocabulary "
                       "but the model's config pad is 0");
  try {
    checkTokenizerFitsModel(model, swapped, "'t.json'");
  } catch (const InputError &error) {
    EXPECT_EQ(std::string(error.what()).find("source"), std::string::npos)
        << error.what();
  }
}

} // namespace
