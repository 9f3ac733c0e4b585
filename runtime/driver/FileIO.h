//===- FileIO.h - checked file reading and atomic file writing --*- C++ -*-===//
//
// Every failure becomes an InputError that names the file and the cause
// (strerror), never a crash: reading a whole (text) file, random-access reads
// of a binary file whose size is known up front, and writing a file through
// FILE.tmp + fsync + rename so a reader never sees half of it.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_FILEIO_H
#define TXRT_DRIVER_FILEIO_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace txrt::driver {

/// The whole content of a file.
std::string readWholeFile(const std::string &path);

/// Fails (InputError naming `what`, e.g. "--save") before any work is done
/// when `path` cannot be created because its directory does not exist.
void checkParentDirectory(const std::string &path, const std::string &what);

/// A read-only file with bounds-checked positional reads.
class BinaryFile {
public:
  explicit BinaryFile(const std::string &path);
  BinaryFile(const BinaryFile &) = delete;
  BinaryFile &operator=(const BinaryFile &) = delete;
  ~BinaryFile();

  const std::string &path() const { return path_; }
  uint64_t size() const { return size_; }

  /// Reads exactly `bytes` bytes at `offset`; a range past the end of the
  /// file is an InputError saying the file is truncated.
  void readAt(uint64_t offset, void *out, size_t bytes) const;

private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

/// Writes `path` via `path.tmp`: data goes to the temporary file, commit()
/// flushes, fsyncs and renames it over `path`. Destroying an uncommitted
/// writer removes the temporary file.
class AtomicFileWriter {
public:
  explicit AtomicFileWriter(std::string path);
  AtomicFileWriter(const AtomicFileWriter &) = delete;
  AtomicFileWriter &operator=(const AtomicFileWriter &) = delete;
  ~AtomicFileWriter();

  void write(const void *data, size_t bytes);
  void write(std::string_view text) { write(text.data(), text.size()); }
  void commit();

private:
  std::string path_, tmpPath_;
  int fd_ = -1;
};

} // namespace txrt::driver

#endif // TXRT_DRIVER_FILEIO_H
