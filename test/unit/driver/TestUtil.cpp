//===- TestUtil.cpp - helpers of the driver's unit tests ------------------===//
#include "TestUtil.h"
#include "commands/Driver.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

extern "C" const char fake_seq2seq_json[];
extern "C" const txc_entry_fn fake_seq2seq_entry_table[];

namespace txrt_driver_test {

ScratchDir::ScratchDir() {
  const char *base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base && *base ? base : "/tmp") + "/txrt-driver-test-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (!mkdtemp(buffer.data()))
    throw std::runtime_error("mkdtemp failed: " +
                             std::string(std::strerror(errno)));
  path_ = buffer.data();
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string ScratchDir::file(const std::string &name) const {
  return path_ + "/" + name;
}

void writeFile(const std::string &path, const std::string &content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
  if (!out)
    throw std::runtime_error("cannot write " + path);
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

DriverResult runDriverCaptured(const std::string &program,
                               const std::vector<std::string> &args,
                               const char *modelJson,
                               const txc_entry_fn *entryTable) {
  std::ostringstream out, err;
  int code = txrt::driver::runDriver(program, args, modelJson, entryTable, out,
                                     err);
  return {code, out.str(), err.str()};
}

DriverResult drive(std::vector<std::string> args) {
  return runDriverCaptured("fake-seq2seq", args, fake_seq2seq_json,
                           fake_seq2seq_entry_table);
}

CommandResult runShell(const std::string &command) {
  CommandResult result;
  FILE *pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe)
    return result;
  char buffer[4096];
  size_t got;
  while ((got = fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    result.out.append(buffer, got);
  int status = pclose(pipe);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return result;
}

std::string shellQuote(const std::string &text) {
  std::string out = "'";
  for (char c : text)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

const std::string &numpyPython() {
  static const std::string python = [] {
    std::string candidate = TXRT_DRIVER_TEST_PYTHON;
    if (candidate.empty() || !std::filesystem::exists(candidate))
      return std::string();
    CommandResult probe =
        runShell(shellQuote(candidate) + " -c 'import numpy'");
    return probe.exitCode == 0 ? candidate : std::string();
  }();
  return python;
}

txrt::driver::Tensor floatTensor(const txrt::driver::Shape &shape,
                                 const std::vector<float> &values) {
  txrt::driver::Tensor tensor(txrt::driver::DType::F32, shape);
  if (values.size() * sizeof(float) != tensor.byteSize())
    throw std::invalid_argument("floatTensor: wrong number of values");
  std::memcpy(tensor.data(), values.data(), tensor.byteSize());
  return tensor;
}

txrt::driver::Tensor intTensor(const txrt::driver::Shape &shape,
                               const std::vector<int32_t> &values) {
  txrt::driver::Tensor tensor(txrt::driver::DType::I32, shape);
  if (values.size() * sizeof(int32_t) != tensor.byteSize())
    throw std::invalid_argument("intTensor: wrong number of values");
  std::memcpy(tensor.data(), values.data(), tensor.byteSize());
  return tensor;
}

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

FakeSeq2SeqBatch fakeSeq2SeqBatch(int64_t step, bool transposed) {
  const int32_t k = int32_t(step % 5);
  const txrt::driver::Shape shape =
      transposed ? txrt::driver::Shape{3, 2} : txrt::driver::Shape{2, 3};
  return {intTensor(shape, {4 + k, 5, 6, 7, 8 + k, 0}),
          intTensor(shape, {2, 4 + k, 5, 2, 6, 0}),
          intTensor(shape, {4 + k, 5, 3, 6, 3, 0})};
}

} // namespace txrt_driver_test
