//===- FuzzReplayMain.cpp - run a fuzz target over saved inputs -----------===//
//
// The main() of the fuzz targets in a build without libFuzzer (the default
// g++ build, TXC_LIBFUZZER off): every argument is a file or a directory of
// files, each run once through LLVMFuzzerTestOneInput in name order. A
// crash, a sanitizer report or a failed check in the target ends the
// process, which is what the `fuzz-replay-*` tests catch; otherwise it
// prints how many inputs ran and exits 0. It does not mutate anything: the
// fuzzing itself needs the libFuzzer build (scripts/fuzz.sh).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int *argc,
                                                           char ***argv);

namespace {

bool readFile(const std::filesystem::path &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  out.assign(std::istreambuf_iterator<char>(in),
             std::istreambuf_iterator<char>());
  return !in.bad();
}

} // namespace

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path arg = argv[i];
    std::error_code error;
    if (std::filesystem::is_directory(arg, error)) {
      std::vector<std::filesystem::path> files;
      for (const auto &entry :
           std::filesystem::recursive_directory_iterator(arg, error))
        if (entry.is_regular_file())
          files.push_back(entry.path());
      std::sort(files.begin(), files.end());
      inputs.insert(inputs.end(), files.begin(), files.end());
    } else if (std::filesystem::is_regular_file(arg, error)) {
      inputs.push_back(arg);
    } else {
      std::fprintf(stderr, "replay: error: '%s' is not a file or directory\n",
                   argv[i]);
      return 2;
    }
  }
  std::string data;
  for (const std::filesystem::path &path : inputs) {
    if (!readFile(path, data)) {
      std::fprintf(stderr, "replay: error: cannot read '%s'\n",
                   path.c_str());
      return 2;
    }
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", path.c_str(),
                 data.size());
    // A copy the size of the input, so reads past its end are caught.
    std::vector<uint8_t> copy(data.begin(), data.end());
    LLVMFuzzerTestOneInput(copy.data(), copy.size());
  }
  std::printf("replay: %zu inputs ran\n", inputs.size());
  return 0;
}
