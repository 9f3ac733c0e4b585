//===- MemoryTest.cpp - allocations that name what they are for -----------===//
//
// Models whose metadata asks for absurd arenas, and a bench at bounds far
// larger than the machine: the error names the arena (or the data) and its
// size, and bench fails before it builds any synthetic batch.
//
//===----------------------------------------------------------------------===//
#include "core/Memory.h"
#include "commands/Driver.h"
#include "core/Error.h"
#include "TestUtil.h"

#include <chrono>
#include <sstream>

extern "C" const char fake_seq2seq_json[];
extern "C" const txc_entry_fn fake_seq2seq_entry_table[];

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

using Result = DriverResult;

/// The fake seq2seq model with `from` replaced by `to` in its metadata.
Result driveEdited(const std::string &from, const std::string &to,
                   std::vector<std::string> args) {
  std::string json = fake_seq2seq_json;
  size_t at = json.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  json.replace(at, from.size(), to);
  return runDriverCaptured("fake-seq2seq", args, json.c_str(),
                           fake_seq2seq_entry_table);
}

class MemoryTest : public ::testing::Test {
protected:
  void SetUp() override {
    writeFile(dir.file("train.tsv"),
              "i love you\tte amo\nyou see me\tme ves\n");
    writeFile(dir.file("src.txt"), "4 5 6\n");
  }
  ScratchDir dir;
};

TEST_F(MemoryTest, AbsurdActivationArenaIsNamedWithItsSize) {
  const std::string train =
      R"({"name": "train", "kind": "train_step", "arena_bytes": 0,)";
  const std::string huge =
      R"({"name": "train", "kind": "train_step", "arena_bytes": 1152921504606846976,)";
  Result result = driveEdited(train, huge,
                              {"train", "--data", dir.file("train.tsv"),
                               "--steps", "2", "--batch", "2"});
  EXPECT_EQ(result.code, 1);
  EXPECT_NE(result.err.find("error: cannot allocate the activation arena of "
                            "entry 'train': it needs 1.0 EiB "
                            "(1152921504606846976 bytes) but "),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find(" of memory is available"), std::string::npos);

  const std::string encode =
      R"({"name": "encode", "kind": "forward", "arena_bytes": 0,)";
  const std::string hugeEncode =
      R"({"name": "encode", "kind": "forward", "arena_bytes": 9223372036854775807,)";
  Result run = driveEdited(encode, hugeEncode,
                           {"run", "encode", "--init", "0", "--out-dir",
                            dir.path(), "src=" + dir.file("src.txt")});
  EXPECT_EQ(run.code, 1);
  EXPECT_NE(run.err.find("error: cannot allocate the activation arena of "
                         "entry 'encode': it needs 8.0 EiB "
                         "(9223372036854775807 bytes)"),
            std::string::npos)
      << run.err;
}

TEST_F(MemoryTest, AbsurdParameterArenaIsNamed) {
  Result result = driveEdited(R"("param_arena_bytes": 8000,)",
                              R"("param_arena_bytes": 4611686018427387904,)",
                              {"translate", "--load", dir.file("none"), "x"});
  EXPECT_EQ(result.code, 1);
  EXPECT_NE(result.err.find("error: cannot allocate the parameter arena: it "
                            "needs 4.0 EiB (4611686018427387904 bytes)"),
            std::string::npos)
      << result.err;
}

TEST_F(MemoryTest, BenchChecksMemoryBeforeBuildingData) {
  // A batch bound of 2^36 rows: the synthetic ids alone would be ~2 TB.
  auto start = std::chrono::steady_clock::now();
  Result result = driveEdited(R"({"name": "B", "bound": 8})",
                              R"({"name": "B", "bound": 68719476736})",
                              {"bench", "--steps", "1", "--threads", "1"});
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_EQ(result.code, 1);
  EXPECT_NE(result.err.find("error: cannot allocate bench's synthetic batches "
                            "and the entries' inputs and outputs (batch "
                            "68719476736, source length 7, target length 7; "
                            "--batch, --src-len and --tgt-len make them "
                            "smaller): it needs "),
            std::string::npos)
      << result.err;
  EXPECT_LT(seconds, 10.0);
  // Within the machine it runs.
  Result small = driveEdited(
      R"({"name": "B", "bound": 8})", R"({"name": "B", "bound": 68719476736})",
      {"bench", "--steps", "1", "--threads", "1", "--batch", "4"});
  EXPECT_EQ(small.code, 0) << small.err;
}

TEST(MemoryUnitTest, SizesAndAllocations) {
  EXPECT_EQ(formatBytes(512), "512 B");
  EXPECT_EQ(formatBytes(6 * 1024 * 1024), "6.0 MiB");
  EXPECT_EQ(formatBytes(INT64_MAX), "8.0 EiB");
  std::optional<uint64_t> available = availableMemoryBytes();
  ASSERT_TRUE(available); // /proc/meminfo on Linux
  EXPECT_GT(*available, 0u);
  EXPECT_THROW_MESSAGE(allocateBuffer(uint64_t(1) << 62, "a test arena"),
                       ResourceError,
                       "cannot allocate a test arena: it needs "
                       "4.0 EiB (4611686018427387904 bytes)");
  EXPECT_THROW_MESSAGE(
      allocateTensor(DType::F32, {int64_t(1) << 40, int64_t(1) << 40}, "x"),
      ResourceError,
      "cannot allocate x [1099511627776, 1099511627776]: its "
      "size overflows 64 bits");
  Tensor small = allocateTensor(DType::I32, {2, 3}, "y");
  EXPECT_EQ(small.numElements(), 6);
  EXPECT_EQ(allocateBuffer(0, "empty").size(), 64u);
}

} // namespace
