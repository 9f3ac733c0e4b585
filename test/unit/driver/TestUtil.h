//===- TestUtil.h - helpers of the driver's unit tests ----------*- C++ -*-===//
//
// A scratch directory per test, small file writers, running a command with
// its output captured, running the driver in process on a model's metadata,
// and the Python used to produce / check .npy files with NumPy itself.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_TEST_TESTUTIL_H
#define TXRT_DRIVER_TEST_TESTUTIL_H

#include "core/ModelAbi.h"
#include "core/Tensor.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace txrt_driver_test {

/// A fresh directory under $TMPDIR (or /tmp), removed with its content.
class ScratchDir {
public:
  ScratchDir();
  ~ScratchDir();
  const std::string &path() const { return path_; }
  /// path() + "/" + name.
  std::string file(const std::string &name) const;

private:
  std::string path_;
};

void writeFile(const std::string &path, const std::string &content);
std::string readFile(const std::string &path);

/// The result of a shell command.
struct CommandResult {
  int exitCode = -1;
  std::string out; ///< stdout and stderr, interleaved
};

/// Runs `command` through /bin/sh with stderr merged into stdout.
CommandResult runShell(const std::string &command);

/// The exit code and the two streams of an in-process driver run.
struct DriverResult {
  int code = -1;
  std::string out, err;
};

/// runDriver(program, args, modelJson, entryTable) with stdout and stderr
/// captured.
DriverResult runDriverCaptured(const std::string &program,
                               const std::vector<std::string> &args,
                               const char *modelJson,
                               const txc_entry_fn *entryTable);

/// runDriverCaptured over the trainable fake model of FakeSeq2Seq.cpp.
DriverResult drive(std::vector<std::string> args);

/// Quotes `text` for /bin/sh.
std::string shellQuote(const std::string &text);

/// The Python with NumPy (TXRT_DRIVER_TEST_PYTHON), or "" when it is not
/// installed or lacks NumPy.
const std::string &numpyPython();

/// A float tensor with the given values.
txrt::driver::Tensor floatTensor(const txrt::driver::Shape &shape,
                                 const std::vector<float> &values);

/// An int32 tensor with the given values.
txrt::driver::Tensor intTensor(const txrt::driver::Shape &shape,
                               const std::vector<int32_t> &values);

/// The bits of `value` (tests that compare floats exactly).
uint32_t bitsOf(float value);

/// A batch of the fake seq2seq model's train entry (FakeSeq2Seq.cpp).
struct FakeSeq2SeqBatch {
  txrt::driver::Tensor src, tgtIn, tgtOut;
};

/// A different small batch for every step: 2 x 3 tokens, or 3 x 2 when
/// `transposed` (the same bytes, other dims).
FakeSeq2SeqBatch fakeSeq2SeqBatch(int64_t step, bool transposed = false);

/// Expects `statement` to throw an exception of type `Type` whose what()
/// contains every string of `fragments`.
#define EXPECT_THROW_MESSAGE(statement, Type, ...)                             \
  do {                                                                         \
    try {                                                                      \
      statement;                                                               \
      ADD_FAILURE() << "expected " #Type " from " #statement;                  \
    } catch (const Type &error) {                                              \
      for (const std::string &fragment :                                       \
           std::vector<std::string>{__VA_ARGS__})                              \
        EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) \
            << "message: " << error.what() << "\nmissing: " << fragment;       \
    }                                                                          \
  } while (0)

} // namespace txrt_driver_test

#endif // TXRT_DRIVER_TEST_TESTUTIL_H
