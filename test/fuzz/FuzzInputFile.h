//===- FuzzInputFile.h - a fuzz input as a file the loaders can open --*- C++ -*-===//
//
// The driver's binary loaders (SafetensorsReader, readNpy) take a path and
// read through FileIO.h's BinaryFile (open, fstat, pread), which the fuzz
// targets should exercise too. FuzzInputFile holds one anonymous in-memory
// file (memfd_create) for the whole process and rewrites it per input; its
// path is /proc/self/fd/N, which open() resolves to that regular file.
//
//===----------------------------------------------------------------------===//
#ifndef TXC_TEST_FUZZ_FUZZINPUTFILE_H
#define TXC_TEST_FUZZ_FUZZINPUTFILE_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

namespace txc::fuzz {

class FuzzInputFile {
public:
  FuzzInputFile() {
    fd_ = ::memfd_create("txc-fuzz-input", MFD_CLOEXEC);
    if (fd_ < 0) {
      std::perror("fuzz: memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  FuzzInputFile(const FuzzInputFile &) = delete;
  FuzzInputFile &operator=(const FuzzInputFile &) = delete;

  /// Replaces the file's content with `size` bytes at `data`; returns its
  /// path.
  const std::string &write(const uint8_t *data, size_t size) {
    if (::ftruncate(fd_, 0) != 0) {
      std::perror("fuzz: ftruncate");
      std::abort();
    }
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::pwrite(fd_, data + done, size - done, off_t(done));
      if (n <= 0) {
        std::perror("fuzz: pwrite");
        std::abort();
      }
      done += size_t(n);
    }
    return path_;
  }

private:
  int fd_ = -1;
  std::string path_;
};

} // namespace txc::fuzz

#endif // TXC_TEST_FUZZ_FUZZINPUTFILE_H
