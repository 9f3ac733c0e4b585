//===- Progress.cpp - training progress: a bar on a TTY, lines otherwise --===//
#include "loop/Progress.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <sys/ioctl.h>
#include <unistd.h>

namespace txrt::driver {

bool stderrIsTerminal() {
  const char *term = std::getenv("TERM");
  if (!term || !*term || std::strcmp(term, "dumb") == 0)
    return false;
  return ::isatty(STDERR_FILENO) == 1;
}

std::string fitToColumns(std::string line, int columns) {
  if (columns > 1 && line.size() >= size_t(columns))
    line.resize(size_t(columns - 1));
  return line;
}

namespace {

/// The width of the terminal stderr is, or 0 when unknown.
int stderrColumns() {
  struct winsize size = {};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0)
    return int(size.ws_col);
  return 0;
}

} // namespace

TrainingProgress::TrainingProgress(std::ostream &out, bool interactive,
                                   int64_t firstStep, int64_t lastStep)
    : out_(out), interactive_(interactive), firstStep_(firstStep),
      lastStep_(lastStep),
      // At most about 20 lines: the interval rounds up (30 steps printed
      // every one of them).
      interval_(std::max<int64_t>(1, (lastStep - firstStep + 20) / 20)),
      start_(std::chrono::steady_clock::now()) {}

std::string TrainingProgress::formatDuration(double seconds) {
  int64_t total = int64_t(std::max(0.0, seconds) + 0.5);
  char text[32];
  if (total >= 3600)
    std::snprintf(text, sizeof(text), "%lld:%02lld:%02lld",
                  static_cast<long long>(total / 3600),
                  static_cast<long long>(total / 60 % 60),
                  static_cast<long long>(total % 60));
  else
    std::snprintf(text, sizeof(text), "%lld:%02lld",
                  static_cast<long long>(total / 60),
                  static_cast<long long>(total % 60));
  return text;
}

void TrainingProgress::update(int64_t step, double loss, double lr,
                              double tokensPerSecond) {
  bool last = step == lastStep_;
  double elapsed = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start_)
                       .count();
  // With a time limit a line is also due every twentieth of it.
  bool timed = timeLimit_ > 0 && elapsed >= nextTimedLine_;
  if (!interactive_ && !last && !timed && step != firstStep_ &&
      (step - firstStep_ + 1) % interval_ != 0)
    return;
  if (timeLimit_ > 0)
    while (nextTimedLine_ <= elapsed)
      nextTimedLine_ += timeLimit_ / 20;
  double done = double(step - firstStep_ + 1);
  double eta = elapsed / done * double(lastStep_ - step);
  if (timeLimit_ > 0)
    eta = std::max(0.0, std::min(eta, timeLimit_ - elapsed));
  char epoch[32] = "", bleu[32] = "";
  if (epoch_ > 0)
    std::snprintf(epoch, sizeof(epoch), "  epoch %lld",
                  static_cast<long long>(epoch_));
  if (bleu_ >= 0)
    std::snprintf(bleu, sizeof(bleu), "  BLEU %.2f", bleu_);
  char stats[224];
  if (interactive_) {
    const int width = 20;
    int64_t total = std::max<int64_t>(lastStep_ - firstStep_ + 1, 1);
    int filled = int(double(width) * done / double(total));
    std::string bar(size_t(filled), '=');
    if (filled < width)
      bar += '>' + std::string(size_t(width - filled - 1), ' ');
    std::snprintf(stats, sizeof(stats),
                  " %lld/%lld%s  loss %.4f  lr %.1e  %.0f %s/s%s  ETA %s",
                  static_cast<long long>(step),
                  static_cast<long long>(lastStep_), epoch, loss, lr,
                  tokensPerSecond, shortUnit_, bleu,
                  formatDuration(eta).c_str());
    out_ << "\r" << fitToColumns("[" + bar + "]" + stats, stderrColumns())
         << "\x1b[K" << std::flush;
    drawn_ = true;
    return;
  }
  std::snprintf(stats, sizeof(stats),
                "step %lld/%lld%s  loss %.4f  lr %.1e  %s/s %.0f%s  eta %s",
                static_cast<long long>(step), static_cast<long long>(lastStep_),
                epoch, loss, lr, unit_, tokensPerSecond, bleu,
                formatDuration(eta).c_str());
  out_ << stats << "\n" << std::flush;
}

void TrainingProgress::finish() {
  if (interactive_ && drawn_)
    out_ << "\n" << std::flush;
  drawn_ = false;
}

} // namespace txrt::driver
