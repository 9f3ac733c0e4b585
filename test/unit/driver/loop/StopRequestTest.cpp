//===- StopRequestTest.cpp - --stop-time durations and the stop signals ---===//
#include "loop/StopRequest.h"
#include "TestUtil.h"

#include <cerrno>
#include <csignal>

#include <omp.h>
#include <pthread.h>
#include <unistd.h>

using namespace txrt::driver;

namespace {

TEST(StopRequestTest, DurationsTakeANumberAndAUnit) {
  EXPECT_EQ(parseDuration("90s"), 90.0);
  EXPECT_EQ(parseDuration("40m"), 2400.0);
  EXPECT_EQ(parseDuration("1.5h"), 5400.0);
  EXPECT_EQ(parseDuration("0.5s"), 0.5);
  for (const char *bad : {"", "s", "90", "90x", "-1s", "0s", "1e3s", "1..5h",
                          ".s", "inf s", "nanh", " 9s", "9 s", "2H"})
    EXPECT_FALSE(parseDuration(bad)) << "'" << bad << "'";
}

TEST(StopRequestTest, StopsWhenTheTimePasses) {
  StopRequest none(std::nullopt, "", /*catchSignals=*/false);
  EXPECT_FALSE(none.reason());
  EXPECT_FALSE(none.secondsLeft());

  StopRequest later(3600.0, "1h", /*catchSignals=*/false);
  EXPECT_FALSE(later.reason());
  EXPECT_GT(*later.secondsLeft(), 3590.0);

  StopRequest passed(1e-9, "1ns", /*catchSignals=*/false);
  std::optional<std::string> why = passed.reason();
  ASSERT_TRUE(why);
  EXPECT_EQ(why->rfind("--stop-time 1ns passed (", 0), 0u) << *why;
}

TEST(StopRequestTest, TheFirstSignalAsksToStopAndTheHandlerGoesAway) {
  {
    StopRequest stop(std::nullopt, "", /*catchSignals=*/true);
    EXPECT_FALSE(stop.reason());
    std::raise(SIGTERM); // caught: the process goes on
    EXPECT_EQ(StopRequest::caughtSignal(), SIGTERM);
    std::optional<std::string> why = stop.reason();
    ASSERT_TRUE(why);
    EXPECT_EQ(*why, "SIGTERM received (a second one ends the process at once)");
  }
  StopRequest::resetForTesting();
  // The previous (default) handler is back: a SIGINT now would end the
  // test binary, so only check that the action is no longer ours.
  struct sigaction current = {};
  sigaction(SIGINT, nullptr, &current);
  EXPECT_EQ(current.sa_handler, SIG_DFL);
}

// `train ... | tee log` and Ctrl-C: tee dies with the same signal, and the
// run's next progress line raised SIGPIPE, whose default action killed it
// before it saved. A closed pipe is a stop request, and SIGPIPE never ends
// the process while (or after) the loop runs.
TEST(StopRequestTest, AClosedOutputPipeAsksToStopAndDoesNotEndTheProcess) {
  {
    StopRequest stop(std::nullopt, "", /*catchSignals=*/true);
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    close(fds[0]);
    errno = 0;
    EXPECT_EQ(write(fds[1], "x", 1), -1); // raises SIGPIPE: caught
    EXPECT_EQ(errno, EPIPE);
    EXPECT_EQ(StopRequest::caughtSignal(), SIGPIPE);
    std::optional<std::string> why = stop.reason();
    ASSERT_TRUE(why);
    EXPECT_EQ(why->rfind("the output pipe was closed", 0), 0u) << *why;
    EXPECT_EQ(write(fds[1], "y", 1), -1); // a second one does not end it
    close(fds[1]);
  }
  // After the loop the pipe is still closed: the last lines must not end
  // the process before it returns either.
  struct sigaction current = {};
  sigaction(SIGPIPE, nullptr, &current);
  EXPECT_NE(current.sa_handler, SIG_DFL);
  StopRequest::resetForTesting();
}

// oneDNN 2.6's gemm:jit kernels point rsp into a heap workspace while they
// run (oneDNN issue 4845), so a stop signal's frame, pushed on "the stack",
// overwrote the heap: 6 of 140 training runs stopped by SIGINT on a busy
// 2-core AMD Zen 3 crashed in malloc or trained on corrupted ids (0 of 140
// with this). The handler runs on a stack of its own, and the OpenMP
// workers, which run the same kernels, block the stop signals so that they
// reach the thread with that stack.
TEST(StopRequestTest, StopSignalsRunOnTheirOwnStackAndSkipTheWorkers) {
  StopRequest stop(std::nullopt, "", /*catchSignals=*/true);
  ASSERT_EQ(std::raise(SIGINT), 0);
  EXPECT_EQ(StopRequest::caughtSignal(), SIGINT);
  EXPECT_TRUE(StopRequest::handledOnItsOwnStack());
  StopRequest::resetForTesting();

  StopRequest::shieldWorkerThreads(3);
  int workers = 0, shielded = 0;
  bool callerShielded = true;
#pragma omp parallel num_threads(3) reduction(+ : workers, shielded)
  {
    sigset_t mask;
    pthread_sigmask(SIG_BLOCK, nullptr, &mask);
    const bool blocked = sigismember(&mask, SIGINT) &&
                         sigismember(&mask, SIGTERM) &&
                         sigismember(&mask, SIGHUP);
    if (omp_get_thread_num() == 0) {
#pragma omp critical
      callerShielded = blocked;
    } else {
      ++workers;
      shielded += blocked;
    }
  }
  EXPECT_GT(workers, 0);
  EXPECT_EQ(shielded, workers);
  EXPECT_FALSE(callerShielded);
}

} // namespace
