//===- ProtectedFiles.h - files the tools never write over --------*- C++ -*-===//
//
// txc and tx-opt write their outputs where -o says; neither replaces a file
// the compiled executables wrote and nothing else can make again: a
// checkpoint or parameters (safetensors) or an array (.npy). An object or
// executable also replaces only an ELF file (an older build) or an empty
// one: `txc m.tx -o train.tsv` replaced the data. And every output is
// written whole or not at all: through a temporary beside the file, renamed
// over it once every byte is written, so a full disk, `ulimit -f` or a
// signal leaves the previous file as it was (txc deleted it, or left a
// half-written executable that crashed when run).
//
//===----------------------------------------------------------------------===//
#ifndef TXC_TOOLS_PROTECTEDFILES_H
#define TXC_TOOLS_PROTECTEDFILES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <optional>
#include <string>

namespace txc {

/// What the tools' temporaries add to an output's name (StagedOutput).
constexpr llvm::StringLiteral kStagedSuffix = ".txc-XXXXXX";

/// Why no file can be made at `path` because of its directory or its
/// length (the system's PATH_MAX, the file system's name limit, both with
/// the temporary's suffix: a name of 250 of 255 characters failed as
/// "cannot create a file in '.'"; a parent that is a file or missing), or
/// "" when it can. A path over the limit read as a directory that "does
/// not exist".
inline std::string directoryProblem(llvm::StringRef path) {
  const size_t extra = kStagedSuffix.size();
  if (path.size() + extra >= PATH_MAX)
    return "the path is too long (" + std::to_string(path.size()) + " bytes, " +
           std::to_string(path.size() + extra) +
           " with the temporary written beside it; the system takes at most " +
           std::to_string(PATH_MAX - 1) + "): give a shorter one" +
           (llvm::sys::path::is_absolute(path) ? ", or a relative one" : "");
  llvm::SmallString<256> parent(llvm::sys::path::parent_path(path));
  if (parent.empty())
    parent = ".";
  if (!llvm::sys::fs::is_directory(parent)) {
    // The first that is there and no directory (a file's name used as
    // one) is what to name.
    for (llvm::StringRef above = parent; !above.empty();
         above = llvm::sys::path::parent_path(above))
      if (llvm::sys::fs::exists(above)) {
        if (!llvm::sys::fs::is_directory(above))
          return "'" + above.str() + "' is not a directory";
        break;
      }
    return "directory '" + parent.str().str() + "' does not exist";
  }
  llvm::StringRef name = llvm::sys::path::filename(path);
  long nameMax = ::pathconf(parent.c_str(), _PC_NAME_MAX);
  if (nameMax > 0 && name.size() + extra > size_t(nameMax))
    return "too long a file name (" + std::to_string(name.size()) +
           " bytes; the file system's limit is " + std::to_string(nameMax) +
           ", and the temporary written beside it "
           "adds " +
           std::to_string(extra) + ": at most " +
           std::to_string(nameMax - long(extra)) + ")";
  return "";
}

/// What the existing regular file at `path` is when an output (`binary`:
/// an object or executable) must not replace it ("a safetensors file
/// ..."); empty when it may be replaced, is empty, or does not exist.
inline std::string protectedKindOf(llvm::StringRef path, bool binary) {
  uint64_t size = 0;
  if (!llvm::sys::fs::is_regular_file(path) ||
      llvm::sys::fs::file_size(path, size) || size == 0)
    return "";
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> head =
      llvm::MemoryBuffer::getFileSlice(path, std::min<uint64_t>(size, 4096), 0);
  if (!head)
    return "";
  llvm::StringRef bytes = (*head)->getBuffer();
  if (bytes.starts_with("\x93NUMPY"))
    return "an .npy array";
  // safetensors: an 8-byte little-endian header length, then a JSON object.
  uint64_t headerBytes = 0;
  if (bytes.size() > 8 && bytes[8] == '{') {
    for (int i = 7; i >= 0; --i)
      headerBytes = headerBytes << 8 | uint8_t(bytes[i]);
    if (headerBytes + 8 <= size)
      return "a safetensors file (a checkpoint or parameters)";
  }
  if (binary && !bytes.starts_with("\x7f"
                                   "ELF"))
    return bytes.contains('\0') ? "a file that is no executable or object"
                                 : "a text file";
  return "";
}

/// The path the symlink `current` names (relative to its directory), or
/// "" when it is no symlink or cannot be read.
inline std::string nextLinkHop(const std::string &current) {
  if (!llvm::sys::fs::is_symlink_file(current))
    return "";
  char buffer[4096];
  ssize_t length = ::readlink(current.c_str(), buffer, sizeof buffer);
  if (length <= 0 || size_t(length) >= sizeof buffer)
    return "";
  llvm::StringRef link(buffer, size_t(length));
  if (llvm::sys::path::is_absolute(link))
    return link.str();
  llvm::SmallString<256> next(llvm::sys::path::parent_path(current));
  llvm::sys::path::append(next, link);
  return std::string(next);
}

/// The file a symlink `path` names, its links followed (also when the
/// last one names a file that does not exist yet: a dangling link is a
/// name for a new file); `path` itself when it is no symlink or a link
/// loops.
inline std::string symlinkTarget(llvm::StringRef path) {
  std::string current = path.str();
  for (int hops = 0; hops < 40 && llvm::sys::fs::is_symlink_file(current);
       ++hops) {
    current = nextLinkHop(current);
    if (current.empty())
      return path.str();
  }
  return llvm::sys::fs::is_symlink_file(current) ? path.str() : current;
}

/// Why a symbolic link on the way to `path` (the file, a directory of its
/// path, or a link a link leads to) is not followed, or "": one in a
/// world-writable directory with the sticky bit (/tmp) that belongs to
/// neither this user nor the directory's owner, which the kernel does not
/// follow with fs.protected_symlinks = 1 (most distributions' default).
/// The tools resolve links themselves to write beside the target, so
/// another user's link in /tmp led root's `-o` into any directory.
inline std::string untrustedSymlink(llvm::StringRef path, int depth = 0) {
  llvm::SmallString<256> prefix;
  for (auto part = llvm::sys::path::begin(path),
            end = llvm::sys::path::end(path);
       part != end; ++part) {
    llvm::sys::path::append(prefix, *part);
    struct stat link, dir;
    if (::lstat(prefix.c_str(), &link) != 0 || !S_ISLNK(link.st_mode))
      continue;
    llvm::SmallString<256> parent(llvm::sys::path::parent_path(prefix));
    if (parent.empty())
      parent = ".";
    if (::stat(parent.c_str(), &dir) == 0 && (dir.st_mode & S_ISVTX) &&
        (dir.st_mode & S_IWOTH) && link.st_uid != ::geteuid() &&
        link.st_uid != dir.st_uid)
      return "'" + std::string(prefix) +
             "' is a symbolic link of another user (uid " +
             std::to_string(link.st_uid) + ") in '" + std::string(parent) +
             "', a world-writable directory with the sticky bit, and such a "
             "link is not followed (as the kernel does not with "
             "fs.protected_symlinks = 1); give another path";
    std::string next = nextLinkHop(std::string(prefix));
    if (!next.empty() && depth < 16)
      if (std::string why = untrustedSymlink(next, depth + 1); !why.empty())
        return why;
  }
  return "";
}

/// The descriptor `path` names (/dev/stdout, /dev/stderr, /dev/fd/N,
/// /proc/self/fd/N), or -1: writing there means writing to what the
/// descriptor is, where it is (`-o /dev/stdout >> log` appends to log);
/// replaced through a temporary, log lost its contents.
inline int namedFileDescriptor(llvm::StringRef path) {
  if (path == "/dev/stdin")
    return 0;
  if (path == "/dev/stdout")
    return 1;
  if (path == "/dev/stderr")
    return 2;
  for (llvm::StringRef prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    unsigned fd = 0;
    if (path.starts_with(prefix) &&
        !path.drop_front(prefix.size()).getAsInteger(10, fd) && fd < 1u << 20)
      return int(fd);
  }
  return -1;
}

/// Whether `path` is written to as it is, not replaced: "-" (stdout), a
/// descriptor's name, or an existing device or FIFO (/dev/null, a pipe).
inline bool writtenInPlace(llvm::StringRef path) {
  llvm::sys::fs::file_status status;
  return path == "-" || namedFileDescriptor(path) >= 0 ||
         (!llvm::sys::fs::status(path, status) &&
          status.type() != llvm::sys::fs::file_type::regular_file &&
          status.type() != llvm::sys::fs::file_type::directory_file);
}

/// A temporary file beside `target` (`TARGET.txc-XXXXXX`, removed if the
/// process gets a signal) that a tool writes in full and commit() renames
/// over `target`; dropped without commit() it is removed and `target` is
/// as it was.
class StagedOutput {
public:
  /// "" or why the temporary cannot be made.
  std::string create(llvm::StringRef target) {
    target_ = target.str();
    llvm::Expected<llvm::sys::fs::TempFile> made =
        llvm::sys::fs::TempFile::create(
            target_ + ".txc-%%%%%%", // kStagedSuffix
            llvm::sys::fs::all_read | llvm::sys::fs::all_write);
    if (!made) {
      // The directory is what refused (a writable file in a read-only
      // directory was blamed itself).
      llvm::SmallString<256> directory(llvm::sys::path::parent_path(target_));
      if (directory.empty())
        directory = ".";
      std::string why = llvm::toString(made.takeError());
      if (std::string problem = directoryProblem(target_); !problem.empty())
        return problem;
      return "cannot create a file in '" + directory.str().str() + "' (" + why +
             "): the output is written through a temporary beside it, "
             "renamed over it when complete";
    }
    temp_.emplace(std::move(*made));
    return "";
  }
  const std::string &path() const { return temp_->TmpName; }
  int fd() const { return temp_->FD; }
  /// Renames the temporary over the target: "" or the problem. The
  /// target's permissions are kept (a private 0600 file became 0644), but
  /// for an executable whose target had no execute bit (the linker's).
  std::string commit(bool executable = false) {
    llvm::sys::fs::file_status existing;
    if (!llvm::sys::fs::status(target_, existing) &&
        existing.type() == llvm::sys::fs::file_type::regular_file &&
        (!executable || (existing.permissions() & llvm::sys::fs::all_exe)))
      (void)llvm::sys::fs::setPermissions(temp_->TmpName,
                                          existing.permissions());
    llvm::Error failed = temp_->keep(target_);
    temp_.reset();
    return failed ? llvm::toString(std::move(failed)) : "";
  }
  ~StagedOutput() {
    if (temp_)
      llvm::consumeError(temp_->discard());
  }

private:
  std::string target_;
  std::optional<llvm::sys::fs::TempFile> temp_;
};

/// Writes `text` to `path` whole or not at all: "-" and devices as they
/// are, any other file through a StagedOutput beside its target (a
/// symlink's file, not the link). "" or why it was not written.
inline std::string writeOutputWhole(llvm::StringRef path,
                                    llvm::StringRef text) {
  auto finish = [](llvm::raw_fd_ostream &out) -> std::string {
    out.flush();
    if (!out.has_error())
      return "";
    std::string problem = out.error().message();
    out.clear_error(); // (else its destructor ends the process)
    return problem;
  };
  if (path == "-") {
    llvm::outs() << text;
    return finish(llvm::outs());
  }
  if (int fd = namedFileDescriptor(path); fd >= 0) {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/false);
    out << text;
    return finish(out);
  }
  if (writtenInPlace(path)) {
    std::error_code failed;
    llvm::raw_fd_ostream out(path, failed);
    if (failed)
      return failed.message();
    out << text;
    return finish(out);
  }
  if (std::string why = untrustedSymlink(path); !why.empty())
    return why;
  StagedOutput staged;
  std::string problem = staged.create(symlinkTarget(path));
  if (!problem.empty())
    return problem;
  {
    llvm::raw_fd_ostream out(staged.fd(), /*shouldClose=*/false);
    out << text;
    problem = finish(out);
  }
  return problem.empty() ? staged.commit() : problem;
}

} // namespace txc

#endif // TXC_TOOLS_PROTECTEDFILES_H
