//===- ProgressTest.cpp - progress lines without a terminal, and the bar --===//
#include "loop/Progress.h"
#include "TestUtil.h"

#include <algorithm>
#include <sstream>

using namespace txrt::driver;

namespace {

TEST(ProgressTest, PlainLinesAboutTwentyTimesPlusFirstAndLast) {
  std::ostringstream out;
  TrainingProgress progress(out, /*interactive=*/false, 1, 100);
  for (int64_t step = 1; step <= 100; ++step)
    progress.update(step, 1.0 / double(step), 1e-3, 500);
  progress.finish();
  std::string text = out.str();
  EXPECT_EQ(text.find('\r'), std::string::npos);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 21); // 1, 5, ..., 100
  EXPECT_EQ(text.rfind("step 1/100  loss 1.0000  lr 1.0e-03  tokens/s 500  "
                       "eta ",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("step 100/100  loss 0.0100"), std::string::npos);
}

TEST(ProgressTest, EpochAndTheLastValidationBleuWhenSet) {
  std::ostringstream out;
  TrainingProgress progress(out, /*interactive=*/false, 1, 2);
  progress.setEpoch(3);
  progress.update(1, 1.0, 1e-3, 500);
  progress.setValidationBleu(12.345);
  progress.update(2, 0.5, 1e-3, 500);
  std::string text = out.str();
  EXPECT_EQ(text.rfind("step 1/2  epoch 3  loss 1.0000  lr 1.0e-03  "
                       "tokens/s 500  eta ",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("step 2/2  epoch 3  loss 0.5000  lr 1.0e-03  "
                      "tokens/s 500  BLEU 12.35  eta 0:00"),
            std::string::npos)
      << text;

  std::ostringstream bar;
  TrainingProgress terminal(bar, /*interactive=*/true, 1, 2);
  terminal.setEpoch(1);
  terminal.setValidationBleu(7.5);
  terminal.update(2, 0.5, 1e-3, 500);
  EXPECT_NE(bar.str().find("2/2  epoch 1  loss 0.5000  lr 1.0e-03  500 tok/s  "
                           "BLEU 7.50  ETA "),
            std::string::npos)
      << bar.str();
}

TEST(ProgressTest, TerminalBarRedrawsOneLine) {
  std::ostringstream out;
  TrainingProgress progress(out, /*interactive=*/true, 11, 20);
  progress.update(11, 2.0, 1e-3, 100);
  progress.update(20, 1.0, 1e-3, 100);
  progress.finish();
  std::string text = out.str();
  EXPECT_EQ(text.rfind("\r[==>", 0), 0u) << text;
  EXPECT_NE(text.find("\r[====================] 20/20  loss 1.0000"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(TrainingProgress::formatDuration(3725), "1:02:05");
  EXPECT_EQ(TrainingProgress::formatDuration(65), "1:05");
}

} // namespace
