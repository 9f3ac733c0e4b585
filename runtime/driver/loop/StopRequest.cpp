//===- StopRequest.cpp - train --stop-time and the stop signals -----------===//
//
// SIGINT, SIGTERM, SIGHUP (the terminal closed) and SIGUSR1 (Slurm's
// `--signal=USR1@T` before a job's time limit) ask to stop; SIGHUP and
// SIGUSR1 stay ignored where they were (nohup). The handlers only store the
// signal number (async-signal-safe); a second one restores the default action
// and raises it again. SIGPIPE (the reader of stdout or stderr is gone: `| tee
// log` hit by the same Ctrl-C, `| head`) is a stop request too, never an end:
// its default action would kill the run before it saves, at the first progress
// line written after the reader went away.
//
//===----------------------------------------------------------------------===//
#include "loop/StopRequest.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <omp.h>
#include <pthread.h>
#include <unistd.h>

namespace txrt::driver {

namespace {

volatile std::sig_atomic_t caught = 0;
volatile std::sig_atomic_t pipeClosed = 0;
volatile std::sig_atomic_t handledOnOwnStack = 0;
volatile std::sig_atomic_t underLauncher = 0;

// oneDNN 2.6's generated sgemm kernels (gemm:jit: every f32 product on a
// CPU without AVX-512, and its fallbacks elsewhere) point rsp into a heap
// workspace while they run (oneDNN issue 4845, fixed in 3.11), so a signal
// frame pushed on "the stack" then overwrote the heap: about 1 run in 25
// stopped by SIGINT on a busy 2-core AMD Zen 3 crashed in malloc or trained
// on corrupted ids. The handlers run on a stack of their own (SA_ONSTACK)
// on the thread that installs them, and the OpenMP worker threads, which
// run the same kernels, block the stop signals (shieldWorkerThreads), so
// they always reach that thread.
constexpr size_t kAlternateStackBytes = 256 * 1024;
alignas(64) char alternateStack[kAlternateStackBytes];
stack_t previousStack;
bool stackInstalled = false;

const int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGPIPE};

/// Nothing is written: the output that raised it is a closed pipe (a
/// write to it would raise SIGPIPE again), and the run's later writes fail
/// with EPIPE instead of ending the process.
void onPipeClosed(int) { pipeClosed = 1; }

void onStopSignal(int signal) {
  if (caught) {
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  caught = signal;
  // The frame's address, not a local's: under AddressSanitizer's
  // detect_stack_use_after_return a local lives on a fake stack on the
  // heap, and the handler seemed to run off its own stack.
  const uintptr_t here =
      reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  const uintptr_t base = reinterpret_cast<uintptr_t>(alternateStack);
  handledOnOwnStack = here >= base && here < base + kAlternateStackBytes;
  // Said at once (write is async-signal-safe): a validation or a save may
  // take minutes before the run notices, and a user who sees nothing
  // presses again, which ends the run without saving.
  static const char kAcknowledged[] =
      "\nstop requested: the run stops after the current update (a "
      "validation in progress is abandoned) and saves; a second signal "
      "ends it at once, losing the steps since the last save\n";
  // mpirun also sends SIGTERM to every rank when one has failed: that job
  // is ending, and no save follows (the message promised one).
  static const char kAcknowledgedUnderLauncher[] =
      "\nstop requested: the ranks stop together after the current update "
      "and save, unless the launcher is ending the job (mpirun sends "
      "SIGTERM to every rank when one has failed: then nothing is saved "
      "and the last checkpoint stays as it was)\n";
  // Another signal under the launcher (SIGINT, SIGUSR1 forwarded by
  // mpirun, or sent to one rank): the ranks agree on the stop after the
  // update, and a validation in progress runs to its end (the ranks would
  // otherwise disagree on abandoning it); it said "abandoned".
  static const char kAcknowledgedRanks[] =
      "\nstop requested: the ranks stop together after the current update "
      "(and a validation in progress) and save; a second signal ends this "
      "rank at once, losing the steps since the last save\n";
  ssize_t ignored =
      !underLauncher ? ::write(2, kAcknowledged, sizeof(kAcknowledged) - 1)
      : signal == SIGTERM
          ? ::write(2, kAcknowledgedUnderLauncher,
                    sizeof(kAcknowledgedUnderLauncher) - 1)
          : ::write(2, kAcknowledgedRanks, sizeof(kAcknowledgedRanks) - 1);
  (void)ignored;
}

struct sigaction previousInt, previousTerm, previousHup, previousUsr1,
    previousPipe;

/// Installs `handler` for `signal` (restarting interrupted calls, on the
/// alternate signal stack), keeping the handler it replaces in `previous`.
void install(int signal, void (*handler)(int), struct sigaction *previous) {
  struct sigaction action = {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | SA_ONSTACK;
  sigaction(signal, &action, previous);
}

std::string describeSeconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", seconds);
  return text;
}

} // namespace

std::optional<double> parseDuration(const std::string &text) {
  if (text.size() < 2)
    return std::nullopt;
  double unit = 0;
  switch (text.back()) {
  case 's':
    unit = 1;
    break;
  case 'm':
    unit = 60;
    break;
  case 'h':
    unit = 3600;
    break;
  default:
    return std::nullopt;
  }
  std::string number = text.substr(0, text.size() - 1);
  // Digits and at most one '.': no signs, exponents, "inf" or "nan".
  if (number.find_first_not_of("0123456789.") != std::string::npos ||
      number.find('.') != number.rfind('.') || number == ".")
    return std::nullopt;
  double value = std::strtod(number.c_str(), nullptr);
  double seconds = value * unit;
  if (!(seconds > 0) || !std::isfinite(seconds) || seconds > 1e9)
    return std::nullopt;
  return seconds;
}

StopRequest::StopRequest(std::optional<double> stopSeconds,
                         std::string stopTimeText, bool catchSignals,
                         bool launchedByMpi)
    : stopSeconds_(stopSeconds), stopTimeText_(std::move(stopTimeText)),
      catchSignals_(catchSignals), start_(std::chrono::steady_clock::now()) {
  if (!catchSignals_)
    return;
  caught = 0;
  underLauncher = launchedByMpi;
  pipeClosed = 0;
  stack_t stack = {};
  stack.ss_sp = alternateStack;
  stack.ss_size = kAlternateStackBytes;
  stackInstalled = sigaltstack(&stack, &previousStack) == 0;
  install(SIGINT, onStopSignal, &previousInt);
  install(SIGTERM, onStopSignal, &previousTerm);
  // The terminal went away (an ssh session dropped, the window closed):
  // a stop request too; it killed the run at once, unsaved. Unless the run
  // was started to outlive its terminal (nohup: SIGHUP ignored).
  sigaction(SIGHUP, nullptr, &previousHup);
  if (previousHup.sa_handler != SIG_IGN)
    install(SIGHUP, onStopSignal, &previousHup);
  // A batch system's notice before the time limit (Slurm --signal=USR1@T):
  // its default action killed the run unsaved.
  sigaction(SIGUSR1, nullptr, &previousUsr1);
  if (previousUsr1.sa_handler != SIG_IGN)
    install(SIGUSR1, onStopSignal, &previousUsr1);
  install(SIGPIPE, onPipeClosed, &previousPipe);
}

StopRequest::~StopRequest() {
  if (!catchSignals_)
    return;
  sigaction(SIGINT, &previousInt, nullptr);
  sigaction(SIGTERM, &previousTerm, nullptr);
  sigaction(SIGHUP, &previousHup, nullptr);
  sigaction(SIGUSR1, &previousUsr1, nullptr);
  // The run's output may still be a closed pipe: what is left to write
  // fails with EPIPE rather than ending the process before it returns.
  if (!pipeClosed)
    sigaction(SIGPIPE, &previousPipe, nullptr);
  if (stackInstalled)
    sigaltstack(&previousStack, nullptr);
  stackInstalled = false;
}

void StopRequest::shieldWorkerThreads(int threads) {
  sigset_t stops;
  sigemptyset(&stops);
  for (int signal : kStopSignals)
    sigaddset(&stops, signal);
  // Threads a later, larger team creates inherit the calling thread's mask:
  // blocked while the pool grows to the largest team, unblocked after.
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &stops, &previous);
  const int team = std::max({threads, omp_get_num_procs(), 1});
#pragma omp parallel num_threads(team)
  if (omp_get_thread_num() != 0)
    pthread_sigmask(SIG_BLOCK, &stops, nullptr);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

std::optional<std::string> StopRequest::reason() const {
  if (caught)
    return std::string(caught == SIGINT    ? "SIGINT"
                       : caught == SIGHUP  ? "SIGHUP"
                       : caught == SIGUSR1 ? "SIGUSR1"
                                           : "SIGTERM") +
           " received (a second one ends the process at once)";
  if (pipeClosed)
    return std::string("the output pipe was closed (SIGPIPE: its reader "
                       "ended)");
  if (std::optional<double> left = secondsLeft(); left && *left <= 0)
    return "--stop-time " + stopTimeText_ + " passed (" +
           describeSeconds(*stopSeconds_ - *left) + " of training)";
  return std::nullopt;
}

std::optional<double> StopRequest::secondsLeft() const {
  if (!stopSeconds_)
    return std::nullopt;
  double elapsed = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start_)
                       .count();
  return *stopSeconds_ - elapsed;
}

int StopRequest::caughtSignal() {
  return caught ? int(caught) : pipeClosed ? SIGPIPE : 0;
}

bool StopRequest::handledOnItsOwnStack() { return handledOnOwnStack != 0; }

void StopRequest::resetForTesting() {
  caught = 0;
  handledOnOwnStack = 0;
  pipeClosed = 0;
}

} // namespace txrt::driver
