//===- ProgressTest.cpp - progress lines without a terminal, and the bar --===//
#include "loop/Progress.h"
#include "TestUtil.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>

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

TEST(ProgressTest, AtMostAboutTwentyLinesForAnyRunLength) {
  // The interval rounded down: 30 and 39 steps printed a line each.
  for (int64_t steps : {1, 19, 20, 21, 30, 39, 41, 60, 100, 1000}) {
    std::ostringstream out;
    TrainingProgress progress(out, /*interactive=*/false, 1, steps);
    for (int64_t step = 1; step <= steps; ++step)
      progress.update(step, 1.0, 1e-3, 500);
    progress.finish();
    std::string text = out.str();
    EXPECT_LE(std::count(text.begin(), text.end(), '\n'), 22) << steps;
    EXPECT_NE(text.find("step " + std::to_string(steps) + "/"),
              std::string::npos)
        << steps;
  }
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

TEST(ProgressTest, ATimeLimitBoundsTheEtaAndPacesTheLines) {
  std::ostringstream out;
  // 10^9 steps, but the run stops after 10 minutes: the ETA is at most
  // 10:00, not the billion steps'.
  TrainingProgress progress(out, /*interactive=*/false, 1, 1000000000);
  progress.setTimeLimit(600);
  // 2 ms a step: the steps alone would say 2 * 10^6 s.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  progress.update(1, 1.0, 1e-3, 500);
  std::string text = out.str();
  size_t at = text.find("eta ");
  ASSERT_NE(at, std::string::npos) << text;
  int minutes = -1, seconds = -1;
  char rest = 0;
  ASSERT_EQ(std::sscanf(text.c_str() + at, "eta %d:%d%c", &minutes, &seconds,
                        &rest),
            3)
      << text;
  EXPECT_EQ(rest, '\n') << text; // m:ss, no hours
  EXPECT_LE(minutes * 60 + seconds, 600) << text;
  // A limit that has passed makes the next update's line due whatever
  // the step count says.
  std::ostringstream paced;
  TrainingProgress quick(paced, /*interactive=*/false, 1, 1000000000);
  quick.setTimeLimit(1e-9);
  quick.update(1, 1.0, 1e-3, 500);
  quick.update(2, 1.0, 1e-3, 500);
  EXPECT_NE(paced.str().find("step 2/1000000000"), std::string::npos)
      << paced.str();
  EXPECT_NE(paced.str().find("eta 0:00"), std::string::npos) << paced.str();
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

// TERM=dumb (Emacs' shell, some CI runners) or no TERM: plain lines, as
// for a file (the bar's "\r" and erase codes came out as text there); a
// narrow terminal gets the bar cut to its width (it wrapped, leaving a
// new line behind at every redraw).
TEST(ProgressTest, DumbTerminalsGetLinesAndNarrowOnesAShorterBar) {
  const char *saved = std::getenv("TERM");
  const std::string before = saved ? saved : "";
  for (const char *term : {"dumb", ""}) {
    setenv("TERM", term, 1);
    EXPECT_FALSE(stderrIsTerminal()) << "TERM='" << term << "'";
  }
  unsetenv("TERM");
  EXPECT_FALSE(stderrIsTerminal());
  if (saved)
    setenv("TERM", before.c_str(), 1);
  const std::string line(85, 'x');
  EXPECT_EQ(fitToColumns(line, 40), std::string(39, 'x'));
  EXPECT_EQ(fitToColumns(line, 86), line);
  EXPECT_EQ(fitToColumns(line, 85), std::string(84, 'x'));
  EXPECT_EQ(fitToColumns(line, 0), line); // unknown width
}

} // namespace
