//===- SafetensorsFuzzer.cpp - fuzz the safetensors reader and checkpoints ===//
//
// One input is the bytes of a file given to `--load` or `--resume`:
//  - SafetensorsReader opens it (the whole header is validated up front);
//    every tensor it lists is then read, and each name must be found;
//  - the tokenizer stored in its __metadata__ is parsed;
//  - it is loaded as the parameters, then as a training checkpoint, of a
//    small trainable model (two parameters with Adam moments), the way
//    `translate --load` and `train --resume` do.
// Every failure must be an InputError; any other exception, a crash or a
// sanitizer report is a finding.
//
//===----------------------------------------------------------------------===//
#include "FuzzInputFile.h"

#include "loop/Checkpoint.h"
#include "core/Error.h"
#include "core/ModelInfo.h"
#include "core/Parameters.h"
#include "formats/Safetensors.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace txrt::driver;

namespace {

// w: f32[2, 3] and b: f32[3], each with a gradient and two Adam moments.
constexpr const char kModelJson[] = R"json({
  "version": 2, "model": "fuzz", "source": "test/fuzz/SafetensorsFuzzer.cpp",
  "compile_flags": "", "config": {"pad": 0},
  "dims": [{"name": "B", "bound": 2}],
  "param_arena_bytes": 256,
  "params": [
    {"name": "w", "dtype": "f32", "shape": [2, 3], "init": "xavier_uniform",
     "offset": 0, "grad_offset": 64, "exp_avg_offset": 128,
     "exp_avg_sq_offset": 192},
    {"name": "b", "dtype": "f32", "shape": [3], "init": "zeros",
     "offset": 32, "grad_offset": 96, "exp_avg_offset": 160,
     "exp_avg_sq_offset": 224}],
  "optimizer": {"name": "adam", "beta1": 0.9, "beta2": 0.98, "eps": 1e-9,
                "weight_decay": 0, "clip": 0,
                "lr": {"schedule": "constant", "value": 0.05}},
  "entries": [
    {"name": "apply", "kind": "forward", "arena_bytes": 0,
     "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 2]}],
     "outputs": [{"name": "y", "dtype": "f32", "shape": ["B", 3]}]}]
})json";

[[noreturn]] void fail(const char *what) {
  std::fprintf(stderr, "fuzz-safetensors: %s\n", what);
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static txc::fuzz::FuzzInputFile file;
  static const ModelInfo model = ModelInfo::parse(kModelJson);
  const std::string &path = file.write(data, size);

  std::optional<SafetensorsReader> reader;
  try {
    reader.emplace(path);
  } catch (const InputError &) {
    return 0;
  }
  std::vector<unsigned char> bytes;
  for (const SafetensorsEntry &entry : reader->tensors()) {
    if (entry.end < entry.begin || entry.end - entry.begin > size)
      fail("a tensor's byte range is larger than the file");
    if (reader->find(entry.name) != &entry)
      fail("find() does not return the tensor of that name");
    bytes.assign(entry.end - entry.begin, 0);
    try {
      reader->read(entry, bytes.data());
    } catch (const InputError &error) {
      // A tensor whose bytes do not match the checksum recorded with them
      // (every file txc writes has them) is a damaged file, said as such:
      // any data byte a mutation changes ended the campaign there.
      if (!entry.checksum ||
          std::string(error.what()).find("do not match the checksum") ==
              std::string::npos)
        fail("a tensor of a validated header cannot be read");
    }
  }
  try {
    checkpointTokenizer(*reader);
  } catch (const InputError &) {
  }
  ParameterArena params(model);
  try {
    params.load(*reader);
  } catch (const InputError &) {
  }
  try {
    loadCheckpoint(*reader, model, params);
  } catch (const InputError &) {
  }
  return 0;
}
