//===- FakeDevice.cpp - a stand-in for a GPU, on host memory --------------===//
#include "core/FakeDevice.h"
#include "core/ModelRunner.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <ostream>
#include <set>
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
    void *pointer = std::malloc(bytes ? bytes : 1);
    std::memset(pointer, 0xff, bytes ? bytes : 1);
    if (what == "the parameter arena") {
      arena_ = static_cast<char *>(pointer);
      arenaBytes_ = bytes;
    }
    ++fakeDeviceCounts().allocations;
    ++fakeDeviceCounts().liveAllocations;
    return pointer;
  }
  void release(void *pointer) override {
    if (pointer == arena_)
      arena_ = nullptr, arenaBytes_ = 0;
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
    fakeDeviceCounts().otherPinned += pinned_.count(src);
    ++(inArena(dst) ? fakeDeviceCounts().arenaToDevice
                    : fakeDeviceCounts().otherToDevice);
    std::memcpy(dst, src, bytes);
  }
  void toHost(void *dst, const void *src, uint64_t bytes) override {
    if (inArena(src)) {
      ++fakeDeviceCounts().arenaToHost;
      fakeDeviceCounts().arenaBytesToHost += int64_t(bytes);
    } else {
      ++fakeDeviceCounts().otherToHost;
      fakeDeviceCounts().otherPinned += pinned_.count(dst);
    }
    std::memcpy(dst, src, bytes);
  }
  void setTrainState(int64_t step, uint64_t seed) override {
    txrt_context_set_train_state(ctx_.get(), step, seed);
  }
  std::string lastError() override { return txrt_last_error(ctx_.get()); }
  void finish(const std::string &) override {}
  DeviceGradients *gradients() override { return gradients_.get(); }

private:
  bool inArena(const void *pointer) const {
    const char *byte = static_cast<const char *>(pointer);
    return arena_ && byte >= arena_ && byte < arena_ + arenaBytes_;
  }

  ContextPtr ctx_;
  std::unique_ptr<DeviceGradients> gradients_;
  char *arena_ = nullptr;
  uint64_t arenaBytes_ = 0;
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
