//===- PairIdsTest.cpp - the packed ids of a streamed parallel corpus -----===//
#include "data/PairIds.h"
#include "TestUtil.h"
#include "core/Error.h"
#include "core/ModelInfo.h"
#include "data/ParallelText.h"

extern "C" const char fake_seq2seq_json[]; // FakeSeq2Seq.cpp

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

TEST(PairIdsTest, PacksEachSideAfterTheOther) {
  PairIds pairs;
  EXPECT_TRUE(pairs.empty());
  pairs.add({5, 6, 7}, {8}, 3);
  pairs.add({}, {9, 10}, 7);
  pairs.shrinkToFit();
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs.source(0).toVector(), (std::vector<int32_t>{5, 6, 7}));
  EXPECT_EQ(pairs.target(0).toVector(), (std::vector<int32_t>{8}));
  EXPECT_TRUE(pairs.source(1).empty());
  EXPECT_EQ(pairs.target(1).toVector(), (std::vector<int32_t>{9, 10}));
  EXPECT_EQ(pairs.line(1), 7);
  EXPECT_EQ(pairs.tokens(), 6u);
  // Exactly the ids, 2 offsets + 1 and a line a pair: nothing per pair on
  // the heap besides.
  EXPECT_EQ(pairs.bytes(), 6 * 4 + 5 * 8 + 2 * 8u);
}

TEST(PairIdsTest, TheStreamedFileGivesTheIdsOfTheParsedText) {
  ModelInfo model = ModelInfo::parse(fake_seq2seq_json);
  const EntryInfo &train = *model.findEntry("train");
  SequenceBounds bounds = sequenceBounds(model, train, train);
  ScratchDir dir;
  std::string path = dir.file("d.tsv");
  writeFile(path, "I love you\tTe amo\r\nyou see me\tme ves\nme\tyo");
  ParallelText text = readParallelText(path);
  Tokenizer fromText = buildTokenizer(model, text, 1);
  Tokenizer fromFile = buildTokenizer(model, path, 1);
  EXPECT_EQ(fromFile.source.words(), fromText.source.words());
  EXPECT_EQ(fromFile.target.words(), fromText.target.words());

  std::vector<EncodedPair> expected =
      encodeParallelText(text, fromText, bounds);
  uint64_t hash = 0;
  PairIds pairs = readEncodedParallelText(path, fromFile, bounds, hash);
  EXPECT_EQ(hash, text.hash);
  ASSERT_EQ(pairs.size(), expected.size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    EXPECT_EQ(pairs.source(i).toVector(), expected[i].source);
    EXPECT_EQ(pairs.target(i).toVector(), expected[i].target);
    EXPECT_EQ(pairs.line(i), expected[i].line);
  }
}

TEST(PairIdsTest, StreamedErrorsNameTheFileAndLine) {
  ModelInfo model = ModelInfo::parse(fake_seq2seq_json);
  const EntryInfo &train = *model.findEntry("train");
  SequenceBounds bounds = sequenceBounds(model, train, train);
  ScratchDir dir;
  std::string bad = dir.file("bad.tsv");
  writeFile(bad, "a\tb\nno tab\n \tc\n");
  EXPECT_THROW_MESSAGE(buildTokenizer(model, bad, 1), InputError,
                       "bad.tsv:2: no tab between source and target",
                       "bad.tsv:3: the source side is empty");
  std::string big = dir.file("long.tsv");
  writeFile(big, "a b c d e f g h\tx\nok\tv w x y z u v\nfine\tfine\n");
  Tokenizer tokenizer = buildTokenizer(model, big, 1);
  uint64_t hash = 0;
  EXPECT_THROW_MESSAGE(
      readEncodedParallelText(big, tokenizer, bounds, hash), InputError,
      "long.tsv:1: the source sentence has 8 words, more than dim S <= 7",
      "long.tsv:2: the target sentence has 7 words; with [SOS] / [EOS] that "
      "is 8 positions");
}

} // namespace
