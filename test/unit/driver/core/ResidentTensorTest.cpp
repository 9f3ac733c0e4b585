//===- ResidentTensorTest.cpp - tensors kept where the entries run --------===//
//
// The same checks in host memory and on the fake device (FakeDevice.h,
// whose fresh memory is 0xff bytes): a new tensor reads as zeros,
// regrowRows picks, repeats and reorders rows and appends zero positions,
// it allocates only when the tensor outgrows its two blocks, and it moves
// a device tensor's rows within the device (no copy over the bus). Then
// ModelRunner's resident calls: outputs kept on the device, a cache input
// written in place there, and a tensor of another device refused.
//
//===----------------------------------------------------------------------===//
#include "core/ResidentTensor.h"
#include "TestUtil.h"
#include "core/FakeDevice.h"
#include "core/ModelInfo.h"
#include "core/ModelRunner.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

using namespace txrt::driver;
using txrt_driver_test::fakeDeviceCounts;
using txrt_driver_test::onFakeDevice;

namespace {

/// Host memory (false) or the fake device (true).
class ResidentTensorTest : public ::testing::TestWithParam<bool> {
protected:
  void SetUp() override {
    if (GetParam()) {
      ASSERT_NE(cudaSupport(), nullptr);
      device_ = cudaSupport()->open(0);
    }
    fakeDeviceCounts() = {};
  }
  Device *device() { return device_.get(); }

  /// `rows` x `positions` x 2 floats, element (r, p, k) = 100 r + 10 p + k,
  /// written through a host tensor and a kept output of no entry: the
  /// tensor is made, then filled by the device's own copy.
  ResidentTensor filled(int64_t rows, int64_t positions) {
    ResidentTensor tensor(device(), DType::F32, {rows, positions, 2},
                          "a test tensor");
    Tensor values(DType::F32, {rows, positions, 2});
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t p = 0; p < positions; ++p)
        for (int64_t k = 0; k < 2; ++k)
          values.as<float>()[(r * positions + p) * 2 + k] =
              float(100 * r + 10 * p + k);
    if (device())
      device()->toDevice(tensor.data(), values.data(), values.byteSize());
    else
      std::copy_n(values.as<float>(), values.numElements(),
                  static_cast<float *>(tensor.data()));
    return tensor;
  }

  std::unique_ptr<Device> device_;
};

std::vector<float> elements(const Tensor &tensor) {
  return std::vector<float>(tensor.as<float>(),
                            tensor.as<float>() + tensor.numElements());
}

TEST_P(ResidentTensorTest, NewTensorsAreZero) {
  ResidentTensor tensor(device(), DType::F32, {3, 5}, "a test tensor");
  EXPECT_EQ(tensor.shape(), (Shape{3, 5}));
  EXPECT_EQ(tensor.byteSize(), 60u);
  EXPECT_EQ(tensor.device(), device());
  EXPECT_EQ(elements(tensor.read()), std::vector<float>(15, 0.0f));
}

TEST_P(ResidentTensorTest, RegrowPicksRowsAndAppendsZeroPositions) {
  ResidentTensor tensor = filled(3, 2);
  // Row 2, row 0 twice, row 1: a reorder with a repeat, and 3 -> 4 rows.
  tensor.regrowRows({2, 0, 0, 1}, 1);
  EXPECT_EQ(tensor.shape(), (Shape{4, 3, 2}));
  std::vector<float> want;
  for (int64_t r : {2, 0, 0, 1}) {
    for (int64_t p = 0; p < 2; ++p)
      for (int64_t k = 0; k < 2; ++k)
        want.push_back(float(100 * r + 10 * p + k));
    want.insert(want.end(), {0.0f, 0.0f});
  }
  EXPECT_EQ(elements(tensor.read()), want);
  // From no positions (a cache's start) by two.
  ResidentTensor empty(device(), DType::F32, {2, 0, 2}, "an empty cache");
  empty.regrowRows({1, 0}, 2);
  EXPECT_EQ(empty.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(elements(empty.read()), std::vector<float>(8, 0.0f));
}

TEST_P(ResidentTensorTest, GrowingAPositionATokenRarelyAllocates) {
  ResidentTensor cache(device(), DType::F32, {4, 0, 8}, "a cache");
  std::vector<size_t> rows = {0, 1, 2, 3};
  const int64_t before = fakeDeviceCounts().allocations;
  for (int64_t position = 1; position <= 64; ++position) {
    cache.regrowRows(rows, 1);
    // The step writes the newest position: it must be there, zero.
    float *data = static_cast<float *>(cache.data());
    if (!device())
      data[(3 * position + position - 1) * 8 + 7] = float(position);
  }
  EXPECT_EQ(cache.shape(), (Shape{4, 64, 8}));
  if (device()) {
    // 64 growths, the blocks doubling: a handful of allocations.
    EXPECT_LE(fakeDeviceCounts().allocations - before, 10);
    EXPECT_EQ(fakeDeviceCounts().otherToDevice, 0);
    EXPECT_EQ(fakeDeviceCounts().otherToHost, 0);
    EXPECT_GT(fakeDeviceCounts().withinDevice, 0);
  } else {
    // Row 3 kept what was written at each of its positions.
    Tensor host = cache.read();
    for (int64_t position = 1; position <= 64; ++position)
      EXPECT_EQ(host.as<float>()[(3 * 64 + position - 1) * 8 + 7],
                float(position));
  }
}

// What lets a decoding step's graph replay batch after batch: once the
// blocks are large enough, assign starts over in the first block, so the
// n-th position of every batch is at the same address, with nothing
// allocated and the new tensor zero.
TEST_P(ResidentTensorTest, AssignStartsOverAtTheSameAddresses) {
  ResidentTensor cache(device(), DType::F32, {2, 0, 4}, "a cache");
  auto addressesOfABatch = [&](int64_t tokens) {
    cache.assign(device(), DType::F32, {2, 0, 4}, "a cache");
    std::vector<const void *> addresses;
    for (int64_t token = 0; token < tokens; ++token) {
      cache.regrowRows({0, 1}, 1);
      addresses.push_back(cache.data());
    }
    return addresses;
  };
  addressesOfABatch(20); // the blocks grow to what 20 positions need
  std::vector<const void *> first = addressesOfABatch(20);
  const int64_t allocations = fakeDeviceCounts().allocations;
  // An odd and an even number of tokens: the first block current again.
  EXPECT_EQ(addressesOfABatch(20), first);
  std::vector<const void *> shorter = addressesOfABatch(7);
  EXPECT_EQ(shorter,
            std::vector<const void *>(first.begin(), first.begin() + 7));
  EXPECT_EQ(addressesOfABatch(20), first);
  EXPECT_EQ(fakeDeviceCounts().allocations, allocations);
  // A reused block reads as zeros; a larger shape gets a larger block.
  ResidentTensor values = filled(2, 3);
  values.assign(device(), DType::F32, {2, 3, 2}, "a test tensor");
  EXPECT_EQ(elements(values.read()), std::vector<float>(12, 0.0f));
  values.assign(device(), DType::F32, {64, 64}, "a larger tensor");
  EXPECT_EQ(elements(values.read()), std::vector<float>(64 * 64, 0.0f));
}

TEST_P(ResidentTensorTest, WriteCopiesAHostTensorIn) {
  Tensor ids(DType::I32, {2, 3});
  for (int i = 0; i < 6; ++i)
    ids.as<int32_t>()[i] = 10 + i;
  ResidentTensor here(device(), DType::I32, {2, 3}, "the source ids");
  here.write(ids);
  Tensor back = here.read();
  EXPECT_EQ(std::vector<int32_t>(back.as<int32_t>(), back.as<int32_t>() + 6),
            std::vector<int32_t>(ids.as<int32_t>(), ids.as<int32_t>() + 6));
  Tensor other(DType::I32, {3, 2});
  EXPECT_THROW_MESSAGE(here.write(other), std::logic_error,
                       "the source ids [2, 3] written from a tensor [3, 2]");
}

// A cache whose entry writes its new positions first needs no zeros there:
// only the old rows move (one strided copy a run of rows).
TEST_P(ResidentTensorTest, RegrowWithoutZeroingOnlyMovesTheRows) {
  ResidentTensor cache = filled(3, 2);
  fakeDeviceCounts() = {};
  cache.regrowRows({0, 1, 2}, 1, false);
  EXPECT_EQ(cache.shape(), (Shape{3, 3, 2}));
  Tensor host = cache.read();
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t p = 0; p < 2; ++p)
      EXPECT_EQ(host.as<float>()[(r * 3 + p) * 2 + 1],
                float(100 * r + 10 * p + 1));
  if (device())
    EXPECT_EQ(fakeDeviceCounts().withinDevice, 1);
}

// A model's caches regrow together: one Device::copyRows call (one launch
// on a GPU) for all of them, each as regrowRows would make it.
TEST_P(ResidentTensorTest, RegrowAllMovesEveryTensorInOneCall) {
  ResidentTensor first = filled(3, 2), second = filled(3, 4);
  ResidentTensor expectFirst = filled(3, 2), expectSecond = filled(3, 4);
  expectFirst.regrowRows({1, 1, 0}, 2);
  expectSecond.regrowRows({1, 1, 0}, 2);
  fakeDeviceCounts() = {};
  ResidentTensor::regrowAll({&first, &second}, {1, 1, 0}, 2);
  EXPECT_EQ(elements(first.read()), elements(expectFirst.read()));
  EXPECT_EQ(elements(second.read()), elements(expectSecond.read()));
  if (device()) // one copy call, one zero fill a tensor
    EXPECT_EQ(fakeDeviceCounts().withinDevice, 1 + 2);
}

// Random sequences of what decoders do (grow by 1 or more positions with
// rows kept, reordered or repeated, several tensors at once, start over)
// against a plain host model of the same tensors: every element, every
// time.
TEST_P(ResidentTensorTest, RandomRegrowthsMatchAHostModel) {
  std::mt19937 random(GetParam() ? 11 : 12);
  const int64_t width = 3;
  // The model: rows x positions x width floats.
  std::vector<std::vector<float>> model(2);
  std::vector<int64_t> rows(2, 0), positions(2, 0);
  std::vector<ResidentTensor> tensors;
  for (int t = 0; t < 2; ++t)
    tensors.emplace_back(device(), DType::F32, Shape{0, 0, width}, "cache");
  auto startOver = [&](int64_t count) {
    for (int t = 0; t < 2; ++t) {
      tensors[size_t(t)].assign(device(), DType::F32, {count, 0, width},
                                "cache");
      model[size_t(t)].clear();
      rows[size_t(t)] = count;
      positions[size_t(t)] = 0;
    }
  };
  float next = 1.0f;
  startOver(3);
  for (int step = 0; step < 120; ++step) {
    if (random() % 15 == 0) {
      startOver(1 + int64_t(random() % 4));
      continue;
    }
    std::vector<size_t> from(1 + random() % 5);
    for (size_t &row : from)
      row = random() % size_t(rows[0]);
    const int64_t more = 1 + int64_t(random() % 2);
    if (random() % 2)
      ResidentTensor::regrowAll({&tensors[0], &tensors[1]}, from, more);
    else
      for (ResidentTensor &tensor : tensors)
        tensor.regrowRows(from, more);
    for (int t = 0; t < 2; ++t) {
      const int64_t grown = positions[size_t(t)] + more;
      std::vector<float> after;
      for (size_t row : from) {
        auto begin =
            model[size_t(t)].begin() +
            std::ptrdiff_t(int64_t(row) * positions[size_t(t)] * width);
        after.insert(after.end(), begin,
                     begin + std::ptrdiff_t(positions[size_t(t)] * width));
        after.insert(after.end(), size_t(more * width), 0.0f);
      }
      model[size_t(t)] = std::move(after);
      rows[size_t(t)] = int64_t(from.size());
      positions[size_t(t)] = grown;
      ASSERT_EQ(tensors[size_t(t)].shape(),
                (Shape{rows[size_t(t)], grown, width}));
      ASSERT_EQ(elements(tensors[size_t(t)].read()), model[size_t(t)])
          << "step " << step << ", tensor " << t;
      // The step writes its new positions: here through the host model and
      // a write of the whole tensor, so later steps move distinct values.
      for (size_t r = 0; r < from.size(); ++r)
        for (int64_t k = 0; k < width; ++k)
          model[size_t(t)][(r * size_t(grown) + size_t(grown) - 1) * width +
                           size_t(k)] = next++;
      Tensor host(DType::F32, {rows[size_t(t)], grown, width});
      std::copy(model[size_t(t)].begin(), model[size_t(t)].end(),
                host.as<float>());
      tensors[size_t(t)].write(host);
    }
  }
}

TEST_P(ResidentTensorTest, RegrowRefusesWhatIsNotRowsOfPositions) {
  ResidentTensor flat(device(), DType::F32, {3}, "a vector");
  EXPECT_THROW(flat.regrowRows({0}, 1), std::logic_error);
  ResidentTensor cache = filled(2, 1);
  EXPECT_THROW_MESSAGE(cache.regrowRows({0, 2}, 1), std::logic_error,
                       "row 2 of a test tensor [2, 1, 2] is out of range");
  EXPECT_EQ(cache.shape(), (Shape{2, 1, 2}));
}

TEST_P(ResidentTensorTest, MovingMovesTheStorage) {
  ResidentTensor first = filled(2, 2);
  const void *data = first.data();
  ResidentTensor second = std::move(first);
  EXPECT_EQ(second.data(), data);
  EXPECT_EQ(first.data(), nullptr);
  EXPECT_EQ(second.read().as<float>()[7], 111.0f);
  second = filled(1, 1);
  EXPECT_EQ(second.shape(), (Shape{1, 1, 2}));
  if (device()) {
    second = ResidentTensor();
    first = ResidentTensor();
    device_.reset();
    EXPECT_EQ(fakeDeviceCounts().liveAllocations, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(HostAndDevice, ResidentTensorTest,
                         ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return info.param ? "OnDevice" : "OnHost";
                         });

//===----------------------------------------------------------------------===//
// ModelRunner's resident calls
//===----------------------------------------------------------------------===//

// scale: y = 2 x. append: writes x's rows, summed, into the last position
// of the cache c [B, P, 1] (in place) and returns the sum.
const char kResidentJson[] = R"json({
  "version": 1, "model": "resident", "kind": "seq2seq",
  "dims": [{"name": "B", "bound": 4}, {"name": "P", "bound": 8}],
  "param_arena_bytes": 4,
  "params": [{"name": "unused", "dtype": "f32", "shape": [1], "init": "zeros",
              "offset": 0}],
  "entries": [
    {"name": "scale", "arena_bytes": 0,
     "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 2]}],
     "outputs": [{"name": "y", "dtype": "f32", "shape": ["B", 2]}]},
    {"name": "append", "arena_bytes": 0,
     "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 2]},
                {"name": "c", "role": "cache", "dtype": "f32",
                 "shape": ["B", "P", 1], "writes_last_rows": 1}],
     "outputs": [{"name": "sum", "dtype": "f32", "shape": ["B"]}]}
  ]
})json";

int32_t scaleEntry(void *, void *, void *, const int64_t *dims,
                   void *const *inputs, void *const *outputs) {
  for (int64_t i = 0; i < dims[0] * 2; ++i)
    static_cast<float *>(outputs[0])[i] =
        2.0f * static_cast<const float *>(inputs[0])[i];
  return 0;
}

int32_t appendEntry(void *, void *, void *, const int64_t *dims,
                    void *const *inputs, void *const *outputs) {
  const float *x = static_cast<const float *>(inputs[0]);
  float *cache = static_cast<float *>(inputs[1]);
  float *sum = static_cast<float *>(outputs[0]);
  const int64_t rows = dims[0], positions = dims[1];
  for (int64_t b = 0; b < rows; ++b) {
    sum[b] = x[2 * b] + x[2 * b + 1];
    cache[b * positions + positions - 1] = sum[b];
  }
  return 0;
}

const txc_entry_fn kResidentTable[] = {scaleEntry, appendEntry};

TEST(ModelRunnerResidentTest, KeptOutputsAndCachesStayOnTheDevice) {
  ModelInfo model = ModelInfo::parse(onFakeDevice(kResidentJson));
  ModelRunner runner(model, kResidentTable, 1);
  ASSERT_NE(runner.device(), nullptr);
  Tensor x(DType::F32, {2, 2});
  for (int i = 0; i < 4; ++i)
    x.as<float>()[i] = float(i + 1);
  fakeDeviceCounts() = {};
  std::vector<ResidentTensor> y =
      runner.callKeeping(runner.entry("scale", "the test"), {&x});
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].device(), runner.device());
  EXPECT_EQ(fakeDeviceCounts().otherToHost, 0);   // y stayed
  EXPECT_EQ(fakeDeviceCounts().otherToDevice, 1); // x went in

  // y (resident) feeds append, whose cache is resident too: only the sums
  // come back, and the cache holds them on the device.
  ResidentTensor cache(runner.device(), DType::F32, {2, 0, 1}, "the cache");
  std::vector<float> sums;
  for (int step = 0; step < 3; ++step) {
    cache.regrowRows({0, 1}, 1);
    std::vector<Tensor> out =
        runner.callWith(runner.entry("append", "the test"), {&y[0], &cache});
    sums.push_back(out[0].as<float>()[1]);
  }
  EXPECT_EQ(sums, (std::vector<float>{14.0f, 14.0f, 14.0f}));
  EXPECT_EQ(fakeDeviceCounts().otherToDevice, 1);
  EXPECT_EQ(fakeDeviceCounts().otherToHost, 3);
  EXPECT_EQ(elements(cache.read()),
            (std::vector<float>{6.0f, 6.0f, 6.0f, 14.0f, 14.0f, 14.0f}));

  // A host-resident tensor is not the device's.
  ResidentTensor onHost(nullptr, DType::F32, {2, 2}, "a host tensor");
  EXPECT_THROW_MESSAGE(
      runner.callWith(runner.entry("scale", "the test"), {&onHost}),
      std::logic_error, "input 'x' of entry 'scale' is resident on another");
}

TEST(ModelRunnerResidentTest, OnTheCpuResidentTensorsAreHostMemory) {
  ModelInfo model = ModelInfo::parse(kResidentJson);
  ModelRunner runner(model, kResidentTable, 1);
  ASSERT_EQ(runner.device(), nullptr);
  Tensor x(DType::F32, {1, 2});
  x.as<float>()[0] = 1.5f;
  x.as<float>()[1] = 2.0f;
  std::vector<ResidentTensor> y =
      runner.callKeeping(runner.entry("scale", "the test"), {&x});
  EXPECT_EQ(y[0].device(), nullptr);
  EXPECT_EQ(elements(y[0].read()), (std::vector<float>{3.0f, 4.0f}));
  ResidentTensor cache(nullptr, DType::F32, {1, 1, 1}, "the cache");
  runner.callWith(runner.entry("append", "the test"), {&y[0], &cache});
  EXPECT_EQ(elements(cache.read()), (std::vector<float>{7.0f}));
}

} // namespace
