//===- Progress.h - training progress: a bar on a TTY, lines otherwise -*- C++ -*-===//
//
// On a terminal one line is redrawn in place ('\r'):
//   [=========>          ] 120/400  loss 1.2345  lr 3.1e-04  5123 tok/s  ETA 0:07
// Elsewhere (a file, a pipe, a test) plain lines, about 20 per run plus the
// first and the last step:
//   step 120/400  loss 1.2345  lr 3.1e-04  tokens/s 5123  eta 0:07
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_PROGRESS_H
#define TXRT_DRIVER_PROGRESS_H

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

namespace txrt::driver {

class TrainingProgress {
public:
  /// Steps firstStep..lastStep (1-based, inclusive) are about to run.
  TrainingProgress(std::ostream &out, bool interactive, int64_t firstStep,
                   int64_t lastStep);

  /// After step `step`; tokensPerSecond is the recent throughput.
  void update(int64_t step, double loss, double lr, double tokensPerSecond);
  /// Ends the bar's line (interactive) — call once after the last update.
  void finish();

  /// "1:02:03" / "2:03".
  static std::string formatDuration(double seconds);

private:
  std::ostream &out_;
  bool interactive_;
  int64_t firstStep_, lastStep_, interval_;
  std::chrono::steady_clock::time_point start_;
  bool drawn_ = false;
};

/// Whether stderr is a terminal.
bool stderrIsTerminal();

} // namespace txrt::driver

#endif // TXRT_DRIVER_PROGRESS_H
