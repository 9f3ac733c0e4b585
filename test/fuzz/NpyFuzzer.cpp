//===- NpyFuzzer.cpp - fuzz the .npy reader and entry-input files ---------===//
//
// One input is the bytes of a file given to `run --input NAME=FILE`:
//  - readNpy reads it; every failure must be an InputError (any other
//    exception, a crash or a sanitizer report is a finding). A tensor it
//    accepts must write back (encodeNpy) to a file that reads as the same
//    dtype, shape and bytes.
//  - readInputFile reads it as an input of each dtype the driver feeds
//    (f32, i32 with pad 0, bool) and rank (0, 1, 2): an .npy file is
//    converted value by value, anything else parsed as text ids.
//
//===----------------------------------------------------------------------===//
#include "FuzzInputFile.h"

#include "core/Error.h"
#include "data/InputFiles.h"
#include "formats/Npy.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace txrt::driver;

namespace {

[[noreturn]] void fail(const char *what) {
  std::fprintf(stderr, "fuzz-npy: %s\n", what);
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static txc::fuzz::FuzzInputFile file;
  const std::string &path = file.write(data, size);

  std::optional<Tensor> tensor;
  try {
    tensor = readNpy(path);
  } catch (const InputError &) {
  }
  if (tensor) {
    if (tensor->byteSize() !=
        size_t(tensor->numElements()) * dtypeSize(tensor->dtype))
      fail("the tensor's buffer does not match its shape");
    std::string encoded = encodeNpy(*tensor);
    file.write(reinterpret_cast<const uint8_t *>(encoded.data()),
               encoded.size());
    Tensor again;
    try {
      again = readNpy(path);
    } catch (const InputError &error) {
      std::fprintf(stderr, "%s\n", error.what());
      fail("an .npy file written by encodeNpy does not read back");
    }
    if (again.dtype != tensor->dtype || again.shape != tensor->shape ||
        again.byteSize() != tensor->byteSize() ||
        (tensor->byteSize() &&
         std::memcmp(again.data(), tensor->data(), tensor->byteSize()) != 0))
      fail("an .npy file does not read back as the tensor it was written "
           "from");
    file.write(data, size);
  }

  for (DType dtype : {DType::F32, DType::I32, DType::Bool})
    for (size_t rank : {0, 1, 2}) {
      try {
        InputSource source{"x", path};
        Tensor input = readInputFile(
            source, dtype, rank,
            dtype == DType::I32 ? std::optional<int64_t>(0) : std::nullopt);
        if (input.dtype != dtype)
          fail("readInputFile returned another dtype than asked for");
      } catch (const InputError &) {
      }
    }
  return 0;
}
