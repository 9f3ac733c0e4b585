//===- ClassifierMetricsTest.cpp - accuracy, macro-F1, confusion table ----===//
#include "loop/ClassifierMetrics.h"
#include "TestUtil.h"

#include <stdexcept>

using namespace txrt::driver;

namespace {

ConfusionMatrix example() {
  // truth 0: predicted 0, 0, 1; truth 1: 1, 1; truth 2: 0.
  ConfusionMatrix matrix(3);
  for (auto [truth, predicted] :
       std::vector<std::pair<int, int>>{{0, 0}, {0, 0}, {0, 1}, {1, 1},
                                        {1, 1}, {2, 0}})
    matrix.add(truth, predicted);
  return matrix;
}

TEST(ClassifierMetricsTest, AccuracyCountsTheDiagonal) {
  EXPECT_DOUBLE_EQ(example().accuracy(), 4.0 / 6.0);
  EXPECT_EQ(example().total(), 6);
}

TEST(ClassifierMetricsTest, MacroF1AveragesPerLabelF1) {
  ConfusionMatrix matrix = example();
  // label 0: P = 2/3, R = 2/3 -> 2/3; label 1: P = 2/3, R = 1 -> 0.8;
  // label 2: no true positive -> 0.
  EXPECT_NEAR(matrix.f1(0), 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(matrix.f1(1), 0.8, 1e-12);
  EXPECT_NEAR(matrix.f1(2), 0.0, 1e-12);
  EXPECT_NEAR(matrix.macroF1(), (2.0 / 3.0 + 0.8 + 0.0) / 3.0, 1e-12);
}

TEST(ClassifierMetricsTest, LabelsThatNeverOccurDoNotCount) {
  ConfusionMatrix matrix(4);
  matrix.add(0, 0);
  matrix.add(1, 1);
  EXPECT_DOUBLE_EQ(matrix.macroF1(), 1.0);
  EXPECT_DOUBLE_EQ(ConfusionMatrix(2).macroF1(), 0.0);
}

TEST(ClassifierMetricsTest, OutOfRangeLabelsThrow) {
  ConfusionMatrix matrix(2);
  EXPECT_THROW(matrix.add(2, 0), std::out_of_range);
  EXPECT_THROW(matrix.add(0, -1), std::out_of_range);
}

TEST(ClassifierMetricsTest, TableAlignsRowsAndColumns) {
  EXPECT_EQ(example().formatTable({"food", "sports", "weather"}),
            "truth \\ predicted  food  sports  weather\n"
            "food                  2       1        0\n"
            "sports                0       2        0\n"
            "weather               1       0        0\n");
}

TEST(ClassifierMetricsTest, TableAlignsWideAndCombiningCharacters) {
  // Padded by bytes: 食べ物 (9 bytes, 6 columns) and météo with a
  // combining accent (7 bytes, 5 columns) pushed their columns aside.
  EXPECT_EQ(example().formatTable({"\xE9\xA3\x9F\xE3\x81\xB9\xE7\x89\xA9",
                                   "sports", "me\xCC\x81te\xCC\x81o"}),
            "truth \\ predicted  \xE9\xA3\x9F\xE3\x81\xB9\xE7\x89\xA9"
            "  sports  me\xCC\x81te\xCC\x81o\n"
            "\xE9\xA3\x9F\xE3\x81\xB9\xE7\x89\xA9"
            "                  2       1      0\n"
            "sports                  0       2      0\n"
            "me\xCC\x81te\xCC\x81o"
            "                   1       0      0\n");
}

} // namespace
