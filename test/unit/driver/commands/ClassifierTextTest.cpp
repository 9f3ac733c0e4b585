//===- ClassifierTextTest.cpp - a classifier's text: encoding and length ---===//
#include "commands/TrainingData.h"
#include "TestUtil.h"
#include "core/Error.h"

using namespace txrt::driver;

namespace {

Tokenizer wordTokenizer() {
  Tokenizer tokenizer;
  tokenizer.source =
      Vocabulary::build({{"good", "film"}, {"bad", "film"}}, 1, /*pad=*/0);
  tokenizer.target = tokenizer.source;
  return tokenizer;
}

LengthBound bound(int64_t positions) {
  LengthBound length;
  length.dim = "T";
  length.bound = positions;
  length.configKey = "max_len";
  return length;
}

TEST(ClassifierTextTest, LabeledLinesKeepTheTextAsWritten) {
  // SentencePiece encodes the text as written, not the split words.
  LabeledText text = parseLabeledText("pos\tGood  Film!\n", "d.tsv");
  EXPECT_EQ(text.examples[0].text, "Good  Film!");
}

TEST(ClassifierTextTest, ByteOrderMarksAroundALabelAreBlanks) {
  // Files joined with `cat`: the second file's BOM starts a line, and made
  // "\uFEFFfood" a label of its own beside "food".
  LabeledText text =
      parseLabeledText("food\tbread\n\xEF\xBB\xBF"
                       "food\tsoup\n \xEF\xBB\xBFsports\xEF\xBB\xBF \tgoal\n",
                       "d.tsv");
  ASSERT_EQ(text.examples.size(), 3u);
  EXPECT_EQ(text.examples[0].label, "food");
  EXPECT_EQ(text.examples[1].label, "food");
  EXPECT_EQ(text.examples[2].label, "sports");
  // A label that is only a BOM is empty.
  EXPECT_THROW(parseLabeledText("\xEF\xBB\xBF\tsunny rain\n", "e.tsv"),
               InputError);
}

TEST(ClassifierTextTest, TooLongIsAnErrorOrCutWithTruncate) {
  Tokenizer tokenizer = wordTokenizer();
  std::vector<int32_t> ids = encodeClassifierText(
      tokenizer, {"good", "film", "bad", "film"}, "good film bad film");
  ASSERT_EQ(ids.size(), 5u);
  EXPECT_EQ(ids[0], tokenizer.source.sosId());

  std::vector<int32_t> kept = ids;
  int64_t truncated = 0;
  EXPECT_EQ(fitClassifierText(kept, tokenizer, bound(5), false, &truncated,
                              "; hint"),
            "");
  EXPECT_EQ(kept, ids);
  std::string problem =
      fitClassifierText(kept, tokenizer, bound(3), false, &truncated, "; hint");
  EXPECT_NE(problem.find("the text has 4 words; with the leading [SOS] that "
                         "is 5 positions, more than dim T <= 3"),
            std::string::npos)
      << problem;
  EXPECT_NE(problem.find("; hint"), std::string::npos);
  EXPECT_EQ(kept, ids);
  EXPECT_EQ(truncated, 0);

  EXPECT_EQ(fitClassifierText(kept, tokenizer, bound(3), true, &truncated, ""),
            "");
  EXPECT_EQ(kept, std::vector<int32_t>(ids.begin(), ids.begin() + 3));
  EXPECT_EQ(truncated, 1);
  EXPECT_EQ(truncationNote(2, bound(3)),
            "note: 2 texts were longer than the 3 positions of dim T and "
            "were cut to the first 3 ([SOS] included)");
}

TEST(ClassifierTextTest, EncodeLabeledTextTruncatesOrNamesEveryLongLine) {
  Tokenizer tokenizer = wordTokenizer();
  LabeledText text = parseLabeledText(
      "pos\tgood film\nneg\tbad film bad film\npos\tgood good good\n", "d.tsv");
  LabelSet labels = LabelSet::fromData(text);
  EXPECT_THROW_MESSAGE(
      encodeLabeledText(text, tokenizer, labels, bound(3), false, nullptr,
                        "; give --truncate"),
      InputError, "d.tsv:2: the text has 4 words", "d.tsv:3: the text has 3",
      "; give --truncate");
  int64_t truncated = 0;
  std::vector<EncodedExample> examples =
      encodeLabeledText(text, tokenizer, labels, bound(3), true, &truncated);
  ASSERT_EQ(examples.size(), 3u);
  EXPECT_EQ(truncated, 2);
  for (const EncodedExample &example : examples)
    EXPECT_LE(example.tokens.size(), 3u);
}

} // namespace
