//===- StopRequestTest.cpp - --stop-time durations and the stop signals ---===//
#include "loop/StopRequest.h"
#include "TestUtil.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>
#include <vector>

#include <dnnl.h>
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

// oneDNN 2.6's sgemm kernels point rsp into a heap workspace while they
// run, so a stop signal's frame, pushed on "the stack", overwrote the heap:
// 1 in 25 runs stopped by SIGINT on a busy 2-core machine crashed in malloc
// or trained on corrupted ids. Signals sent to a thread inside such
// products, hundreds of times, leave every product right and the heap
// whole (the handlers run on their own stack). Before, this crashed.
TEST(StopRequestTest, SignalsDuringOneDnnProductsLeaveTheHeapWhole) {
  StopRequest stop(std::nullopt, "", /*catchSignals=*/true);
  // The jit kernels on this thread, which the signals are sent to.
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const int64_t m = 96, n = 96, k = 512;
  std::vector<float> a(size_t(m * k)), b(size_t(k * n)), want(size_t(m * n)),
      got(size_t(m * n));
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = float(int(i % 7) - 3);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = float(int(i % 5) - 2);
  ASSERT_EQ(dnnl_sgemm('N', 'N', m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f,
                       want.data(), n),
            dnnl_success);
  const pthread_t worker = pthread_self();
  std::atomic<bool> done{false};
  std::atomic<int> sent{0};
  std::thread signaller([&] {
    // One signal at a time: the next once the handler has taken the last
    // and the loop below has reset it (a second pending SIGINT would end
    // the process, as it should).
    while (!done) {
      if (StopRequest::caughtSignal() != 0) {
        usleep(50);
        continue;
      }
      pthread_kill(worker, SIGINT);
      ++sent;
      while (!done && StopRequest::caughtSignal() == 0)
        usleep(20);
    }
  });
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
  int products = 0, wrong = 0;
  while (std::chrono::steady_clock::now() < until || sent < 200) {
    std::fill(got.begin(), got.end(), -1.0f);
    // A product of another shape in between: oneDNN frees and allocates.
    std::vector<float> scratch(size_t(1 + products % 97) * 1024, 1.0f);
    dnnl_sgemm('N', 'N', m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f,
               got.data(), n);
    wrong += got != want;
    ++products;
    if (StopRequest::caughtSignal() != 0)
      StopRequest::resetForTesting();
    if (std::chrono::steady_clock::now() > until + std::chrono::seconds(30))
      break;
  }
  done = true;
  signaller.join();
  StopRequest::resetForTesting();
  omp_set_num_threads(threads);
  EXPECT_EQ(wrong, 0) << "of " << products;
  EXPECT_GE(sent.load(), 200);
  // The heap: allocations of many sizes, freed.
  std::vector<std::vector<char>> blocks;
  for (int i = 0; i < 2000; ++i)
    blocks.emplace_back(size_t(16 + (i * 37) % 5000), char(i));
  blocks.clear();
}

} // namespace
