//===- Progress.h - training progress: a bar on a TTY, lines otherwise -*- C++ -*-===//
//
// On a terminal one line is redrawn in place ('\r'):
//   [=========>          ] 120/400  epoch 3  loss 1.2345  lr 3.1e-04
//       5123 tok/s  BLEU 12.34  ETA 0:07                 (one line)
// Elsewhere (a file, a pipe, a test) plain lines, about 20 per run plus the
// first and the last step:
//   step 120/400  epoch 3  loss 1.2345  lr 3.1e-04  tokens/s 5123
//       BLEU 12.34  eta 0:07                              (one line)
// "epoch" shows once setEpoch() was called, "BLEU" (the last validation's)
// once setValidationBleu() was.
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
  /// The epoch (1-based) of the steps that follow.
  void setEpoch(int64_t epoch) { epoch_ = epoch; }
  /// The BLEU of the last validation.
  void setValidationBleu(double bleu) { bleu_ = bleu; }
  /// What the throughput counts: target tokens ("tokens", "tok"), or a
  /// classifier's examples ("examples", "ex"; its targets are labels).
  void setRateUnit(const char *unit, const char *shortUnit) {
    unit_ = unit;
    shortUnit_ = shortUnit;
  }
  /// --stop-time: the run ends after `seconds` (from construction); the
  /// ETA is at most what is left of it, and plain lines also come every
  /// twentieth of it.
  void setTimeLimit(double seconds) {
    timeLimit_ = seconds;
    nextTimedLine_ = seconds / 20;
  }

  /// "1:02:03" / "2:03".
  static std::string formatDuration(double seconds);

private:
  std::ostream &out_;
  bool interactive_;
  int64_t firstStep_, lastStep_, interval_;
  std::chrono::steady_clock::time_point start_;
  bool drawn_ = false;
  int64_t epoch_ = 0; ///< 0: not shown
  double bleu_ = -1;  ///< < 0: not shown
  const char *unit_ = "tokens", *shortUnit_ = "tok";
  double timeLimit_ = 0, nextTimedLine_ = 0; ///< 0: no --stop-time
};

/// Whether stderr is a terminal that redraws a line in place: a TTY whose
/// TERM is set and not "dumb" (Emacs' shell, some CI runners: the bar's
/// carriage returns and erase codes came out as text there).
bool stderrIsTerminal();

/// `line` cut to fit `columns` (one column left free, so the terminal does
/// not wrap: a bar wider than a narrow window left a new line behind at
/// every redraw); `columns` <= 0 (unknown) keeps it whole.
std::string fitToColumns(std::string line, int columns);

} // namespace txrt::driver

#endif // TXRT_DRIVER_PROGRESS_H
