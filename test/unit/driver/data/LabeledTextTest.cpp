//===- LabeledTextTest.cpp - 'label<TAB>text' lines and the label file -----===//
#include "data/LabeledText.h"
#include "TestUtil.h"
#include "core/Error.h"
#include "data/Tokenizer.h"

using namespace txrt::driver;
using txrt_driver_test::ScratchDir;

namespace {

TEST(LabeledTextTest, ParsesLabelsAndWords) {
  LabeledText text =
      parseLabeledText("sports\tThe match!\r\n food \tbread\n", "d.tsv");
  ASSERT_EQ(text.examples.size(), 2u);
  EXPECT_EQ(text.examples[0].label, "sports");
  EXPECT_EQ(joinWords(text.examples[0].words), "the match !");
  EXPECT_EQ(text.examples[1].label, "food");
  EXPECT_EQ(text.examples[1].line, 2);
}

TEST(LabeledTextTest, ACarriageReturnAroundALabelIsABlank) {
  // Before, "food\r" became a label of its own beside "food" (a file
  // written with CR before the tab), in the label file and in predict.
  LabeledText text =
      parseLabeledText("food\r\tbread\nfood\tsoup\n\rfood \r\tcake\n", "r.tsv");
  ASSERT_EQ(text.examples.size(), 3u);
  for (const LabeledExample &example : text.examples)
    EXPECT_EQ(example.label, "food");
  EXPECT_EQ(LabelSet::fromData(text).size(), 1);
}

TEST(LabeledTextTest, AByteOrderMarkAtTheStartIsNoText) {
  // Before, the first line's label was "\xEF\xBB\xBFpos", a label of its
  // own beside "pos".
  LabeledText text =
      parseLabeledText("\xEF\xBB\xBFpos\tgood\npos\tfine\n", "b.tsv");
  ASSERT_EQ(text.examples.size(), 2u);
  EXPECT_EQ(text.examples[0].label, "pos");
  EXPECT_EQ(LabelSet::fromData(text).size(), 1);
}

TEST(LabeledTextTest, EveryBadLineIsReported) {
  EXPECT_THROW_MESSAGE(
      parseLabeledText("ok\tfine\nno tab here\n\ta text\nx\t \n\na\tb\tc\n",
                       "bad.tsv"),
      InputError, "bad.tsv:2: no tab between label and text",
      "bad.tsv:3: the label is empty", "bad.tsv:4: the text is empty",
      "bad.tsv:5: empty line", "bad.tsv:6: more than one tab");
  EXPECT_THROW_MESSAGE(parseLabeledText("", "e.tsv"), InputError,
                       "'e.tsv' holds no labeled lines");
}

TEST(LabeledTextTest, LabelSetIsSortedAndRoundTrips) {
  LabeledText text =
      parseLabeledText("b\tx\na\ty\nb\tz\nc\tw\n", "d.tsv");
  LabelSet labels = LabelSet::fromData(text);
  EXPECT_EQ(labels.labels(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(labels.id("c"), std::optional<int64_t>(2));
  EXPECT_EQ(labels.id("d"), std::nullopt);
  ScratchDir dir;
  labels.save(dir.file("l.labels.json"));
  EXPECT_EQ(LabelSet::load(dir.file("l.labels.json")).labels(),
            labels.labels());
}

TEST(LabeledTextTest, MalformedLabelFilesAreInputErrors) {
  EXPECT_THROW_MESSAGE(LabelSet::fromJson("{}", "'x'"), InputError,
                       "'x' is not a valid label file");
  EXPECT_THROW_MESSAGE(
      LabelSet::fromJson(
          R"({"format": "txc-labels", "version": 1, "labels": ["a", "a"]})",
          "'y'"),
      InputError, "the label 'a' repeats");
  // Labels no 'label<TAB>text' line can give: a tab or newline broke
  // predict's 'label<TAB>probability' lines (predict/eval --labels FILE).
  EXPECT_THROW_MESSAGE(
      LabelSet::fromJson(
          R"({"format": "txc-labels", "version": 1, "labels": ["a\tb", "c"]})",
          "'z'"),
      InputError, "a label holds a tab, a line break or a NUL");
  EXPECT_THROW_MESSAGE(
      LabelSet::fromJson(
          R"({"format": "txc-labels", "version": 1, "labels": ["x\ny"]})",
          "'z'"),
      InputError, "a label holds a tab, a line break or a NUL");
  EXPECT_THROW_MESSAGE(
      LabelSet::fromJson(
          R"({"format": "txc-labels", "version": 1, "labels": [" pad"]})",
          "'z'"),
      InputError, "starts or ends with a blank");
  // Control characters and line separators broke the lines a label is
  // printed in (predict gave one label as two lines; ESC coloured the
  // terminal); messages show them escaped.
  EXPECT_THROW_MESSAGE(
      LabelSet::fromJson("{\"format\": \"txc-labels\", \"version\": 1, "
                         "\"labels\": [\"\\u001b[31mred\", \"pos\\u2028it\"]}",
                         "'z'"),
      InputError, "the label '\\x1b[31mred' holds a control character");
}

// The same for labels read from 'label<TAB>text' lines, each line named.
TEST(LabeledTextTest, ALabelThatBreaksLinesIsRefusedWithItsLine) {
  EXPECT_THROW_MESSAGE(
      parseLabeledText("sports\tthe game\nneg\xC2\x85\tbad film\n"
                       "pos\xE2\x80\xA8itive\tgood\n",
                       "d.tsv"),
      InputError, "d.tsv:2: the label 'neg\\u0085' holds a control character",
      "d.tsv:3: the label 'pos\\u2028itive' holds");
  // C1 controls too (U+009B: CSI, which drives a terminal as ESC [ does).
  EXPECT_THROW_MESSAGE(parseLabeledText("x\xC2\x9B"
                                        "31my\tsome text\n",
                                        "e.tsv"),
                       InputError,
                       "e.tsv:1: the label 'x\\u009b31my' holds a control");
}

} // namespace
