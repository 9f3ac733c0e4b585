//===- StopRequest.h - train --stop-time and SIGINT/SIGTERM --------*- C++ -*-===//
//
// When a training run ends early but cleanly: after --stop-time DURATION of
// wall-clock time since training started (fairseq's --stop-time-hours), or
// on the first SIGINT, SIGTERM, SIGHUP or SIGUSR1 (Marian's save-and-exit).
// The loop asks after every update; a stop finishes the run the way its
// last step would (checkpoint, final validation, keep-best, checkpoint). A second signal ends the
// process at once with the signal's default action: checkpoints are written
// to a temporary file and renamed, so what was saved stays whole.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_STOPREQUEST_H
#define TXRT_DRIVER_STOPREQUEST_H

#include <chrono>
#include <optional>
#include <string>

namespace txrt::driver {

/// Seconds of a duration "90s", "40m", "1.5h" (a positive number and a
/// unit); nullopt when `text` is not one.
std::optional<double> parseDuration(const std::string &text);

class StopRequest {
public:
  /// Starts the clock and, with `catchSignals`, installs the SIGINT,
  /// SIGTERM, SIGHUP and SIGUSR1 handlers (the previous ones come back on
  /// destruction).
  /// `stopSeconds`: --stop-time in seconds (`stopTimeText` as the user
  /// wrote it, for the message), nullopt for no time limit.
  /// `launchedByMpi`: the acknowledgement of a SIGTERM says that mpirun
  /// sends one when another rank failed, and that nothing is saved then.
  StopRequest(std::optional<double> stopSeconds, std::string stopTimeText,
              bool catchSignals, bool launchedByMpi = false);
  ~StopRequest();
  StopRequest(const StopRequest &) = delete;
  StopRequest &operator=(const StopRequest &) = delete;

  /// Restarts the clock of --stop-time: the first update is about to run.
  void startClock() { start_ = std::chrono::steady_clock::now(); }

  /// Why the run should stop now ("--stop-time 90s passed", "SIGTERM
  /// received"), or nullopt to go on.
  std::optional<std::string> reason() const;
  /// Seconds until --stop-time; nullopt without one.
  std::optional<double> secondsLeft() const;

  /// Blocks SIGINT, SIGTERM, SIGHUP, SIGUSR1 and SIGPIPE on the OpenMP worker
  /// threads of teams up to `threads` (and the core count), so that they
  /// reach the thread that installed the handlers, which runs them on a
  /// stack of their own: oneDNN 2.6's gemm:jit kernels point rsp into the
  /// heap, where a signal frame corrupted it (StopRequest.cpp).
  static void shieldWorkerThreads(int threads);

  /// The signal a handler caught (0: none; SIGPIPE for a closed output
  /// pipe). For tests.
  static int caughtSignal();
  /// Whether the handler of the last stop signal ran on the stack of its
  /// own (SA_ONSTACK), not the interrupted code's. For tests.
  static bool handledOnItsOwnStack();
  /// Forgets a caught signal. For tests.
  static void resetForTesting();

private:
  std::optional<double> stopSeconds_;
  std::string stopTimeText_;
  bool catchSignals_;
  std::chrono::steady_clock::time_point start_;
};

} // namespace txrt::driver

#endif // TXRT_DRIVER_STOPREQUEST_H
