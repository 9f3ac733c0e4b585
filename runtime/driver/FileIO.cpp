//===- FileIO.cpp - checked file reading and atomic file writing ----------===//
//
// POSIX file descriptors (pread/write/fsync/rename) so every error carries
// errno; EINTR and short transfers are retried.
//
//===----------------------------------------------------------------------===//
#include "FileIO.h"
#include "Error.h"

#include <filesystem>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace txrt::driver {

namespace {
std::string systemError(const std::string &what, const std::string &path) {
  return "cannot " + what + " '" + path + "': " + std::strerror(errno);
}

int openForReading(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw InputError(systemError("open", path));
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    std::string message = systemError("stat", path);
    ::close(fd);
    throw InputError(message);
  }
  if (S_ISDIR(info.st_mode)) {
    ::close(fd);
    throw InputError("cannot read '" + path + "': it is a directory");
  }
  return fd;
}
} // namespace

std::string readWholeFile(const std::string &path) {
  BinaryFile file(path);
  std::string content(size_t(file.size()), '\0');
  file.readAt(0, content.data(), content.size());
  return content;
}

//===----------------------------------------------------------------------===//
// BinaryFile
//===----------------------------------------------------------------------===//

BinaryFile::BinaryFile(const std::string &path)
    : path_(path), fd_(openForReading(path)) {
  struct stat info;
  if (::fstat(fd_, &info) != 0) {
    std::string message = systemError("stat", path);
    ::close(fd_);
    throw InputError(message);
  }
  size_ = uint64_t(info.st_size);
}

BinaryFile::~BinaryFile() {
  if (fd_ >= 0)
    ::close(fd_);
}

void BinaryFile::readAt(uint64_t offset, void *out, size_t bytes) const {
  if (offset > size_ || bytes > size_ - offset)
    throw InputError("'" + path_ + "' is truncated: " + std::to_string(bytes) +
                     " bytes needed at offset " + std::to_string(offset) +
                     " but the file has " + std::to_string(size_) + " bytes");
  char *dest = static_cast<char *>(out);
  while (bytes > 0) {
    ssize_t got = ::pread(fd_, dest, bytes, off_t(offset));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      throw InputError(systemError("read", path_));
    if (got == 0)
      throw InputError("'" + path_ + "' is truncated (changed while reading)");
    dest += got;
    offset += uint64_t(got);
    bytes -= size_t(got);
  }
}

void checkParentDirectory(const std::string &path, const std::string &what) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code error;
  if (!parent.empty() && !std::filesystem::is_directory(parent, error))
    throw InputError(what + ": cannot write '" + path + "': '" +
                     parent.string() + "' is not a directory");
}

//===----------------------------------------------------------------------===//
// AtomicFileWriter
//===----------------------------------------------------------------------===//

AtomicFileWriter::AtomicFileWriter(std::string path)
    : path_(std::move(path)), tmpPath_(path_ + ".tmp") {
  fd_ =
      ::open(tmpPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw InputError(systemError("create", tmpPath_));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmpPath_.c_str());
  }
}

void AtomicFileWriter::write(const void *data, size_t bytes) {
  const char *source = static_cast<const char *>(data);
  while (bytes > 0) {
    ssize_t put = ::write(fd_, source, bytes);
    if (put < 0 && errno == EINTR)
      continue;
    if (put < 0)
      throw InputError(systemError("write", tmpPath_));
    source += put;
    bytes -= size_t(put);
  }
}

void AtomicFileWriter::commit() {
  if (::fsync(fd_) != 0)
    throw InputError(systemError("sync", tmpPath_));
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    std::string message = systemError("close", tmpPath_);
    ::unlink(tmpPath_.c_str());
    throw InputError(message);
  }
  if (::rename(tmpPath_.c_str(), path_.c_str()) != 0) {
    std::string message = systemError("rename '" + tmpPath_ + "' to", path_);
    ::unlink(tmpPath_.c_str());
    throw InputError(message);
  }
}

} // namespace txrt::driver
