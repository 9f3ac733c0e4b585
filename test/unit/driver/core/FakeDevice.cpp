//===- FakeDevice.cpp - a stand-in for a GPU, on host memory --------------===//
#include "core/FakeDevice.h"
#include "core/Error.h"
#include "core/ModelRunner.h"

#include "txrt/txrt_cuda.h" // TXRT_CUDA_ARGMAX_MAX_EXCLUDED

#include <cstdlib>
#include <cstring>
#include <map>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>

using namespace txrt::driver;

namespace txrt_driver_test {

FakeDeviceCounts &fakeDeviceCounts() {
  static FakeDeviceCounts counts;
  return counts;
}

namespace {

FakeGradientsMaker &gradientsMaker() {
  static FakeGradientsMaker maker;
  return maker;
}

FakeGraphs &graphMode() {
  static FakeGraphs mode = FakeGraphs::Replay;
  return mode;
}

bool &argmaxEnabled() {
  static bool enabled = true;
  return enabled;
}

std::string &allocationFailure() {
  static std::string what;
  return what;
}

/// The allocations the fake device tells apart.
constexpr const char *kArena = "the parameter arena";
constexpr const char *kAverage = "the --ema weight average";

bool startsWith(const std::string &text, const std::string &prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

/// A device buffer the counts follow.
struct Region {
  char *begin = nullptr;
  uint64_t bytes = 0;
  bool holds(const void *pointer, uint64_t length) const {
    const char *byte = static_cast<const char *>(pointer);
    return begin && byte >= begin && byte + length <= begin + bytes;
  }
};

class FakeDevice : public Device {
public:
  FakeDevice() : ctx_(createContext(1)) {
    if (gradientsMaker())
      gradients_ = gradientsMaker()(ctx_.get());
    ++fakeDeviceCounts().opened;
  }
  std::string describe() override { return "cuda:0 (host stand-in)"; }
  void *context() override { return ctx_.get(); }
  void *allocate(uint64_t bytes, const std::string &what) override {
    const std::string &failing = allocationFailure();
    if (!failing.empty() && startsWith(what, failing))
      throw ResourceError("cannot allocate " + what + " on " + describe() +
                          ": out of device memory");
    void *pointer = std::malloc(bytes ? bytes : 1);
    std::memset(pointer, 0xff, bytes ? bytes : 1);
    if (what == kArena)
      arena_ = {static_cast<char *>(pointer), bytes};
    else if (startsWith(what, kAverage))
      average_ = {static_cast<char *>(pointer), bytes};
    ++fakeDeviceCounts().allocations;
    ++fakeDeviceCounts().liveAllocations;
    return pointer;
  }
  void release(void *pointer) override {
    if (pointer == arena_.begin)
      arena_ = {};
    if (pointer == average_.begin)
      average_ = {};
    --fakeDeviceCounts().liveAllocations;
    std::free(pointer);
  }
  void *allocatePinned(uint64_t bytes) override {
    void *pointer = std::malloc(bytes ? bytes : 1);
    pinned_.insert(pointer);
    ++fakeDeviceCounts().livePinned;
    return pointer;
  }
  void releasePinned(void *pointer) override {
    pinned_.erase(pointer);
    --fakeDeviceCounts().livePinned;
    std::free(pointer);
  }
  void toDevice(void *dst, const void *src, uint64_t bytes) override {
    FakeDeviceCounts &counts = fakeDeviceCounts();
    if (arena_.holds(dst, 1))
      ++counts.arenaToDevice;
    else if (average_.holds(dst, 1))
      ++counts.averageToDevice;
    else {
      ++counts.otherToDevice;
      counts.otherBytesToDevice += int64_t(bytes);
      counts.otherPinned += pinned_.count(src);
    }
    std::memcpy(dst, src, bytes);
  }
  void toHost(void *dst, const void *src, uint64_t bytes) override {
    if (arena_.holds(src, 1)) {
      ++fakeDeviceCounts().arenaToHost;
      fakeDeviceCounts().arenaBytesToHost += int64_t(bytes);
    } else if (average_.holds(src, 1)) {
      ++fakeDeviceCounts().averageToHost;
      fakeDeviceCounts().averageBytesToHost += int64_t(bytes);
    } else {
      ++fakeDeviceCounts().otherToHost;
      fakeDeviceCounts().otherBytesToHost += int64_t(bytes);
      fakeDeviceCounts().otherPinned += pinned_.count(dst);
    }
    std::memcpy(dst, src, bytes);
  }
  void copyRows(const std::vector<RowCopy> &copies) override {
    ++fakeDeviceCounts().withinDevice;
    for (const RowCopy &copy : copies)
      fakeDeviceCounts().withinDeviceBytes += int64_t(copy.width * copy.height);
    emulateCopyRows(copies);
  }
  bool argmaxRows(const float *logits, int64_t rows, int64_t vocab,
                  int64_t rowStride, int64_t emittable,
                  const std::vector<int32_t> &excluded,
                  int32_t *ids) override {
    if (!argmaxEnabled() || excluded.size() > TXRT_CUDA_ARGMAX_MAX_EXCLUDED)
      return false;
    ++fakeDeviceCounts().argmaxCalls;
    fakeDeviceCounts().argmaxRows += rows;
    // The ids come back as the CUDA device's do: one copy of rows ints,
    // through its pinned buffer.
    ++fakeDeviceCounts().otherToHost;
    ++fakeDeviceCounts().otherPinned;
    fakeDeviceCounts().otherBytesToHost += rows * int64_t(sizeof(int32_t));
    emulateArgmaxRows(logits, rows, vocab, rowStride, emittable, excluded,
                      ids);
    return true;
  }
  void zeroRows(void *dst, uint64_t pitch, uint64_t width,
                uint64_t height) override {
    ++fakeDeviceCounts().withinDevice;
    fakeDeviceCounts().withinDeviceBytes += int64_t(width * height);
    for (uint64_t row = 0; row < height; ++row)
      std::memset(static_cast<char *>(dst) + row * pitch, 0, width);
  }
  void allowTf32() override { ++fakeDeviceCounts().tf32Allowed; }
  void setTrainState(int64_t step, uint64_t seed) override {
    txrt_context_set_train_state(ctx_.get(), step, seed);
  }
  void updateAverage(float *average, const float *params, int64_t count,
                     float decay) override {
    const uint64_t bytes = uint64_t(count) * sizeof(float);
    if (!average_.holds(average, bytes) || !arena_.holds(params, bytes))
      throw std::logic_error("the fake device's updateAverage: the average "
                             "or the parameters lie outside their buffers");
    ++fakeDeviceCounts().averageUpdateCalls;
    fakeDeviceCounts().averageElementsUpdated += count;
    emulateUpdateAverage(average, params, count, decay);
  }
  std::string lastError() override { return txrt_last_error(ctx_.get()); }
  void finish(const std::string &) override {}
  DeviceGradients *gradients() override { return gradients_.get(); }

  // Graphs: a capture keeps the call (its buffers and dims stay put, as
  // the device's capture needs) and runs nothing; a replay runs it on the
  // context's current training state, which is what the CUDA kernels read
  // from the device inside a captured step.
  void *captureGraph(const EntryCall &call, std::string &why) override {
    if (graphMode() == FakeGraphs::Refuse) {
      why = "the fake device refuses captures";
      ++fakeDeviceCounts().graphsRefused;
      return nullptr;
    }
    ++fakeDeviceCounts().graphsCaptured;
    ++fakeDeviceCounts().liveGraphs;
    return new EntryCall(call);
  }
  bool launchGraph(void *graph) override {
    if (graphMode() == FakeGraphs::NotReplayable)
      return false;
    ++fakeDeviceCounts().graphLaunches;
    if (static_cast<EntryCall *>(graph)->run() != TXRT_OK)
      throw KernelError("the fake device's replay failed: " +
                        std::string(txrt_last_error(ctx_.get())));
    return true;
  }
  void releaseGraph(void *graph) override {
    --fakeDeviceCounts().liveGraphs;
    delete static_cast<EntryCall *>(graph);
  }

private:
  ContextPtr ctx_;
  std::unique_ptr<DeviceGradients> gradients_;
  Region arena_, average_;
  std::set<const void *> pinned_;
};

std::unique_ptr<Device> openFake(int32_t) {
  return std::make_unique<FakeDevice>();
}
void listFake(std::ostream &out) { out << "  cuda:0  host stand-in\n"; }
const CudaSupport kFakeSupport = {openFake, listFake};

} // namespace

void setFakeDeviceGradients(FakeGradientsMaker maker) {
  gradientsMaker() = std::move(maker);
}

void setFakeDeviceGraphs(FakeGraphs mode) { graphMode() = mode; }

void setFakeDeviceArgmax(bool enabled) { argmaxEnabled() = enabled; }

void setFakeDeviceAllocationFailure(std::string what) {
  allocationFailure() = std::move(what);
}

std::string onFakeDevice(const char *json) {
  std::string text = json;
  size_t brace = text.find('{');
  return text.substr(0, brace + 1) + "\"target\": \"cuda\", " +
         text.substr(brace + 1);
}

} // namespace txrt_driver_test

// The CUDA backend of this test binary (core/ModelRunner.cpp looks it up
// through a weak reference); only models of target "cuda" open it.
extern "C" const CudaSupport *txrt_driver_cuda_backend() {
  return &txrt_driver_test::kFakeSupport;
}
