//===- FileIO.cpp - checked file reading and atomic file writing ----------===//
//
// POSIX file descriptors (open/pread/write/fsync/rename) so every error
// carries errno; EINTR and short transfers are retried. Files are opened
// with O_NONBLOCK so that opening a FIFO returns at once and fstat can
// refuse it.
//
//===----------------------------------------------------------------------===//
#include "formats/FileIO.h"
#include "core/Error.h"

#include <algorithm>
#include <filesystem>
#include <random>
#include <vector>

#include <cctype>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace txrt::driver {

namespace {

std::string systemError(const std::string &what, const std::string &path) {
  return "cannot " + what + " '" + path + "': " + std::strerror(errno);
}

/// "a directory", "a FIFO (named pipe)", ... for a non-regular file.
std::string describeFileType(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO (named pipe)";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

int openForReading(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    throw InputError(systemError("open", path));
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    std::string message = systemError("stat", path);
    ::close(fd);
    throw InputError(message);
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    throw InputError("cannot read '" + path + "': it is " +
                     describeFileType(info.st_mode) + ", not a regular file");
  }
  return fd;
}

/// Errors of creating a file that come from where the user pointed us.
bool isDestinationErrno(int error) {
  return error == EACCES || error == EPERM || error == EROFS ||
         error == ENOENT || error == ENOTDIR || error == EISDIR ||
         error == ENAMETOOLONG || error == ELOOP;
}

std::string directoryOf(const std::string &path) {
  std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

std::string fileNameOf(const std::string &path) {
  return std::filesystem::path(path).filename().string();
}

} // namespace

void removeStaleTemporaries(const std::string &path) {
  std::string dir = directoryOf(path), target = fileNameOf(path);
  DIR *listing = ::opendir(dir.c_str());
  if (!listing)
    return;
  while (const struct dirent *entry = ::readdir(listing)) {
    long pid = 0;
    if (!isTemporaryOf(entry->d_name, target, &pid) || pid == long(::getpid()))
      continue;
    if (::kill(pid_t(pid), 0) == 0 || errno != ESRCH)
      continue; // its writer may still run (or belongs to another user)
    ::unlink((dir + "/" + entry->d_name).c_str());
  }
  ::closedir(listing);
}

namespace {

std::string randomSuffix() {
  static std::random_device device;
  char text[17];
  std::snprintf(text, sizeof(text), "%08x%08x", device(), device());
  return text;
}

} // namespace

std::string readWholeFile(const std::string &path) {
  BinaryFile file(path);
  std::string content(size_t(file.size()), '\0');
  file.readAt(0, content.data(), content.size());
  return content;
}

std::string pathTooLong(const std::string &path) {
  return "the path is too long (" + std::to_string(path.size()) +
         " characters; the system takes at most " +
         std::to_string(PATH_MAX - 1) + "): give a shorter one" +
         (path.empty() || path[0] != '/' ? "" : ", or a relative one");
}

void checkParentDirectory(const std::string &path, const std::string &what) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code error;
  if (parent.empty() || std::filesystem::is_directory(parent, error))
    return;
  if (error == std::errc::too_many_symbolic_link_levels)
    throw InputError(what + ": cannot write '" + path + "': '" +
                     parent.string() + "': its symbolic links form a loop");
  // A path over PATH_MAX read as a directory that "does not exist".
  if (error == std::errc::filename_too_long)
    throw InputError(what + ": cannot write '" + path +
                     "': " + pathTooLong(path));
  // Say which: a typo in the directory is the common case.
  bool exists = std::filesystem::exists(parent, error);
  throw InputError(what + ": cannot write '" + path + "': '" + parent.string() +
                   (exists ? "' is not a directory" : "' does not exist"));
}

std::string shellWord(std::string_view word) {
  auto plain = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') ||
           std::string_view("_./:=@%+,-").find(c) != std::string_view::npos;
  };
  if (!word.empty() && std::all_of(word.begin(), word.end(), plain))
    return std::string(word);
  std::string quoted = "'";
  for (char c : word)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string escapeForMessage(std::string_view text) {
  std::string shown;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const unsigned char next =
        i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    char hex[16];
    if (c == '\n') {
      shown += "\\n";
    } else if (c == '\t') {
      shown += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      std::snprintf(hex, sizeof(hex), "\\x%02x", c);
      shown += hex;
    } else if (c == 0xC2 && next >= 0x80 && next <= 0x9F) {
      // C1 controls (U+0085 NEL, U+009B CSI) break lines or drive the
      // terminal as C0's do.
      std::snprintf(hex, sizeof(hex), "\\u%04x", unsigned(next));
      shown += hex;
      ++i;
    } else if (c == 0xE2 && next == 0x80 && i + 2 < text.size() &&
               (static_cast<unsigned char>(text[i + 2]) == 0xA8 ||
                static_cast<unsigned char>(text[i + 2]) == 0xA9)) {
      // U+2028 LINE and U+2029 PARAGRAPH SEPARATOR.
      std::snprintf(hex, sizeof(hex), "\\u%04x",
                    0x2000u + static_cast<unsigned char>(text[i + 2]) - 0x80u);
      shown += hex;
      i += 2;
    } else {
      shown += char(c);
    }
  }
  return shown;
}

std::string quotedForMessage(const std::string &name) {
  // At most 80 bytes, not cut inside a character.
  size_t cut = std::min<size_t>(name.size(), 80);
  while (cut < name.size() && cut > 0 &&
         (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80)
    --cut;
  return "'" + escapeForMessage(std::string_view(name).substr(0, cut)) +
         (cut < name.size() ? "..." : "") + "'";
}

namespace {

/// `path`, then each file its last component's symlinks lead to, in turn
/// (a chain to a file that may not exist yet); `ended` says whether the
/// chain ended within 40 hops (false: a loop, or a chain as long).
std::vector<std::string> symlinkChain(const std::string &path, bool &ended) {
  std::vector<std::string> chain = {path};
  std::filesystem::path current = path;
  std::error_code error;
  for (int hops = 0; hops < 40; ++hops) {
    if (!std::filesystem::is_symlink(current, error)) {
      ended = true;
      return chain;
    }
    std::filesystem::path next = std::filesystem::read_symlink(current, error);
    if (error) {
      ended = true;
      return chain;
    }
    current = next.is_absolute() ? next : current.parent_path() / next;
    chain.push_back(current.string());
  }
  ended = false;
  return chain;
}

/// Whether `path`, or a symbolic link on the way from it, is a file
/// descriptor's name (/dev/stdout -> /proc/self/fd/1, /dev/fd/N).
bool namesFileDescriptor(const std::string &path) {
  bool ended = false;
  for (const std::string &hop : symlinkChain(path, ended)) {
    const bool procFd =
        hop.rfind("/proc/", 0) == 0 && hop.find("/fd/") != std::string::npos;
    if (procFd || hop.rfind("/dev/fd/", 0) == 0 || hop == "/dev/stdout" ||
        hop == "/dev/stderr" || hop == "/dev/stdin")
      return true;
  }
  return false;
}

/// Refuses a symbolic link on the way to `path` (the file, a directory of
/// its path, or a link a link leads to) that lies in a world-writable
/// directory with the sticky bit (/tmp) and belongs to neither this user
/// nor the directory's owner, as the kernel does with
/// fs.protected_symlinks = 1 (most distributions' default): outputs resolve
/// their links themselves to write beside the target, so another user's
/// link in /tmp led root's export, or its --out-dir, into any directory.
/// (`output`: the path the user gave, which the message names.)
void checkLinksOnTheWay(const std::string &output, const std::string &path,
                        const std::string &what, int depth) {
  const uid_t me = ::geteuid();
  std::filesystem::path prefix;
  for (const std::filesystem::path &part : std::filesystem::path(path)) {
    prefix /= part;
    struct stat link, dir;
    if (::lstat(prefix.c_str(), &link) != 0 || !S_ISLNK(link.st_mode))
      continue;
    const std::string directory = directoryOf(prefix.string());
    if (::stat(directory.c_str(), &dir) == 0 && (dir.st_mode & S_ISVTX) &&
        (dir.st_mode & S_IWOTH) && link.st_uid != me &&
        link.st_uid != dir.st_uid)
      throw InputError(
          what + ": cannot write '" + output + "': '" + prefix.string() +
          "' is a symbolic link of another user (uid " +
          std::to_string(link.st_uid) + ") in '" + directory +
          "', a world-writable directory with the sticky bit, and such a "
          "link is not followed (as the kernel does not with "
          "fs.protected_symlinks = 1); give another path");
    // Where it leads, and the links on that way.
    std::error_code error;
    std::filesystem::path target = std::filesystem::read_symlink(prefix, error);
    if (!error && depth < 16)
      checkLinksOnTheWay(
          output,
          (target.is_absolute() ? target : prefix.parent_path() / target)
              .string(),
          what, depth + 1);
  }
}

} // namespace

void checkSymlinksTrusted(const std::string &path, const std::string &what) {
  checkLinksOnTheWay(path, path, what, 0);
}

std::string followSymlinks(const std::string &path) {
  bool ended = false;
  std::vector<std::string> chain = symlinkChain(path, ended);
  return ended ? chain.back() : path; // a loop: open() would fail on it too
}

void checkReplaceable(const std::string &path, const std::string &what) {
  // `--save /dev/stdout >> log` replaced `log` (the file fd 1 is) with the
  // checkpoint, and the run's other outputs went to /dev/stdout.loss.csv.
  if (namesFileDescriptor(path))
    throw InputError(what + ": cannot write '" + path +
                     "': it names a file descriptor (the file or pipe it "
                     "stands for would be replaced, not written to); give "
                     "a file name");
  checkSymlinksTrusted(path, what);
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) {
    if (errno == ELOOP)
      throw InputError(what + ": cannot write '" + path +
                       "': its symbolic links form a loop");
    return;
  }
  // A file its owner made read-only (chmod a-w) is one to keep: the
  // temporary-and-rename replaced it without a word (a directory's write
  // permission is all rename() asks), as cp and shells refuse to.
  if (S_ISREG(info.st_mode) && (info.st_mode & 0222) == 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", unsigned(info.st_mode & 07777));
    throw InputError(what + ": cannot write '" + path +
                     "': it is read-only (mode " + mode +
                     "); make it writable (chmod u+w) to replace it, or "
                     "give another file");
  }
  if (S_ISREG(info.st_mode))
    return;
  throw InputError(what + ": cannot write '" + path + "': it is " +
                   describeFileType(info.st_mode) +
                   ", not a regular file (only regular files are replaced)");
}

bool isTemporaryOf(const std::string &name, const std::string &target,
                   long *pid) {
  // TARGET.tmp.<pid>.<16 hex digits>
  const std::string prefix = target + ".tmp.";
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix))
    return false;
  size_t pos = prefix.size(), digits = 0;
  long value = 0;
  while (pos < name.size() && name[pos] >= '0' && name[pos] <= '9' &&
         digits < 10) {
    value = value * 10 + (name[pos++] - '0');
    ++digits;
  }
  if (digits == 0 || pos >= name.size() || name[pos] != '.' ||
      name.size() - pos - 1 != 16)
    return false;
  for (size_t i = pos + 1; i < name.size(); ++i)
    if (!std::isxdigit(static_cast<unsigned char>(name[i])))
      return false;
  if (pid)
    *pid = value;
  return true;
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

std::string temporaryNameFor(const std::string &target) {
  return target + ".tmp." + std::to_string(long(::getpid())) + "." +
         randomSuffix();
}

//===----------------------------------------------------------------------===//
// AtomicFileWriter
//===----------------------------------------------------------------------===//

namespace {
/// NewFilesPrivateLike's group and others bits; -1 when none is alive.
int gNewFileAccess = -1;
} // namespace

NewFilesPrivateLike::NewFilesPrivateLike(const std::string &model)
    : previous_(gNewFileAccess) {
  struct stat status;
  if (::stat(model.c_str(), &status) == 0 && S_ISREG(status.st_mode))
    gNewFileAccess = int(status.st_mode & 0077);
}

NewFilesPrivateLike::~NewFilesPrivateLike() { gNewFileAccess = previous_; }

AtomicFileWriter::AtomicFileWriter(std::string path,
                                   WhenNotReplaced whenNotReplaced)
    : path_(std::move(path)), target_(followSymlinks(path_)),
      keepWhenNotReplaced_(whenNotReplaced == WhenNotReplaced::Keep) {
  // (Kept: the file is checked at the commit; links that lead elsewhere
  // are refused before anything is written beside their target.)
  if (!keepWhenNotReplaced_)
    checkReplaceable(path_, "output");
  else
    checkSymlinksTrusted(path_, "output");
  removeStaleTemporaries(target_);
  for (int attempt = 0; fd_ < 0; ++attempt) {
    tmpPath_ = temporaryNameFor(target_);
    fd_ =
        ::open(tmpPath_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ >= 0) {
      // The replaced file's permissions, not the umask's: a private (0600)
      // checkpoint became world-readable at its next save.
      struct stat existing;
      existed_ = ::stat(target_.c_str(), &existing) == 0;
      if (existed_ && S_ISREG(existing.st_mode))
        (void)::fchmod(fd_, existing.st_mode & 07777);
      else if (struct stat made;
               gNewFileAccess >= 0 && ::fstat(fd_, &made) == 0)
        (void)::fchmod(fd_, made.st_mode & (0700 | gNewFileAccess) & 07777);
      break;
    }
    if (errno == EEXIST && attempt < 8)
      continue;
    // Named as the temporary it is: the file the user asked for is path_.
    std::string message = systemError("create", tmpPath_) +
                          " (the temporary file that replaces '" + path_ +
                          "' when complete)";
    if (isDestinationErrno(errno))
      throw InputError(message);
    throw ResourceError(message);
  }
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0)
    ::close(fd_);
  if (!committed_)
    ::unlink(tmpPath_.c_str());
}

void AtomicFileWriter::fail(const std::string &operation) {
  // (A new file: nothing is there, and nothing "left as it was".)
  std::string message =
      "cannot " + operation + " '" + path_ + "': " + std::strerror(errno) +
      (existed_ ? " ('" + path_ + "' is left as it was)" : std::string());
  throw ResourceError(message); // the destructor removes the temporary
}

void AtomicFileWriter::write(const void *data, size_t bytes) {
  const char *source = static_cast<const char *>(data);
  while (bytes > 0) {
    ssize_t put = ::write(fd_, source, bytes);
    if (put < 0 && errno == EINTR)
      continue;
    if (put < 0)
      fail("write");
    source += put;
    bytes -= size_t(put);
  }
}

void AtomicFileWriter::sync() {
  if (::fsync(fd_) != 0)
    fail("sync");
}

void AtomicFileWriter::commit() {
  if (::fsync(fd_) != 0)
    fail("sync");
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0)
    fail("close");
  // What was to replace the file, kept beside it when it cannot be
  // (WhenNotReplaced::Keep): TARGET.unsaved.safetensors, or the temporary
  // where no rename may move it (a read-only file system).
  // A file already there (the user's, or an earlier run's kept work) is
  // never replaced: the next free name, TARGET.unsaved-2.safetensors, ...
  // (it replaced the user's notes). The kept file is its owner's to write
  // (a --save made read-only gave its mode to the kept file, which could
  // not be resumed in place).
  auto keep = [&] {
    const std::string suffix = ".safetensors";
    const bool safetensors =
        target_.size() > suffix.size() && endsWith(target_, suffix);
    const std::string stem =
        safetensors ? target_.substr(0, target_.size() - suffix.size())
                    : target_;
    struct stat written;
    if (::stat(tmpPath_.c_str(), &written) == 0)
      (void)::chmod(tmpPath_.c_str(), (written.st_mode & 07777) | S_IWUSR);
    std::string kept = tmpPath_;
    for (int n = 1; n <= 100; ++n) {
      const std::string name = stem + ".unsaved" +
                               (n > 1 ? "-" + std::to_string(n) : "") +
                               (safetensors ? suffix : "");
      // (A file system without RENAME_NOREPLACE: a hard link, which does
      // not replace either.)
      bool moved = ::renameat2(AT_FDCWD, tmpPath_.c_str(), AT_FDCWD,
                               name.c_str(), RENAME_NOREPLACE) == 0;
      if (!moved && errno == EINVAL &&
          ::link(tmpPath_.c_str(), name.c_str()) == 0) {
        ::unlink(tmpPath_.c_str());
        moved = true;
      }
      if (moved) {
        kept = name;
        break;
      }
      if (errno != EEXIST)
        break; // a read-only file system: where it is
    }
    committed_ = true; // nothing to remove
    return " ('" + path_ +
           "' is left as it was; what was to replace it is kept as '" + kept +
           "')";
  };
  // The destination may have become a FIFO or device since the writer was
  // created; never replace one. A checkpoint made read-only (or replaced
  // by a directory) during a run lost the run: the temporary was removed
  // with the error.
  try {
    checkReplaceable(path_, "output");
  } catch (const InputError &error) {
    if (!keepWhenNotReplaced_)
      throw;
    throw ResourceError(error.what() + keep());
  }
  if (::rename(tmpPath_.c_str(), target_.c_str()) != 0) {
    if (!keepWhenNotReplaced_)
      fail("rename '" + tmpPath_ + "' to");
    const int renameErrno = errno;
    throw ResourceError("cannot rename '" + tmpPath_ + "' to '" + path_ +
                        "': " + std::strerror(renameErrno) + keep());
  }
  committed_ = true;
  // Make the rename itself durable.
  std::string dir = directoryOf(target_);
  int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd < 0)
    throw ResourceError(systemError("open the directory", dir));
  int synced = ::fsync(dirFd);
  int syncErrno = errno;
  ::close(dirFd);
  if (synced != 0) {
    errno = syncErrno;
    throw ResourceError(systemError("sync the directory", dir) +
                        " after replacing '" + path_ + "' (" +
                        kReplacedNotDurable +
                        "; a crash before the directory reaches the disk "
                        "may bring back what it held before)");
  }
}

//===----------------------------------------------------------------------===//
// WriterLock
//===----------------------------------------------------------------------===//

namespace {

/// What a lock file holds: nothing yet, or the holder's pid and a newline.
bool looksLikeLockFile(const char *text, ssize_t size) {
  if (size < 0)
    return false;
  ssize_t digits = 0;
  while (digits < size && text[digits] >= '0' && text[digits] <= '9')
    ++digits;
  return size == 0 ||
         (digits > 0 &&
          (digits == size || (digits + 1 == size && text[digits] == '\n')));
}

} // namespace

WriterLock::WriterLock(const std::string &path, const std::string &what)
    : lockPath_(followSymlinks(path) + ".lock") {
  // Anything at FILE.lock that is not a lock file (a checkpoint someone
  // named so, a directory, a symlink) is refused: the run took it for its
  // lock, wrote its pid over it and deleted it at the end, or ran
  // without a lock beside another run.
  auto notALock = [&](const std::string &why) {
    return InputError(what + " '" + path + "': '" + lockPath_ + "', where " +
                      "a run keeps its lock on that file, " + why +
                      "; move it away");
  };
  // The holder may remove FILE.lock between our open() and our flock():
  // the lock is then on a name that no longer exists, so open it again.
  for (int attempt = 0; attempt < 8; ++attempt) {
    fd_ = ::open(lockPath_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
                 0644);
    if (fd_ < 0) {
      const int error = errno;
      if (error == ELOOP)
        throw notALock("is a symbolic link");
      if (error == EISDIR)
        throw notALock("is a directory");
      throw InputError(systemError("create", lockPath_) + " (the lock of " +
                       what + " '" + path + "')");
    }
    struct stat held;
    char text[32] = {};
    const ssize_t got = ::pread(fd_, text, sizeof(text) - 1, 0);
    if (::fstat(fd_, &held) != 0 || !S_ISREG(held.st_mode) ||
        held.st_size >= ssize_t(sizeof(text)) ||
        !looksLikeLockFile(text, got)) {
      ::close(fd_);
      fd_ = -1;
      throw notALock("holds something else than a lock (a run's pid)");
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      ::close(fd_);
      fd_ = -1;
      if (error != EWOULDBLOCK)
        return; // ENOLCK and the like: a file system without locks
      std::string holder;
      if (long pid = std::strtol(text, nullptr, 10); pid > 0)
        holder = " (pid " + std::to_string(pid) + ")";
      throw InputError(what + " '" + path +
                       "' is being written by another "
                       "run" +
                       holder + " that holds '" + lockPath_ +
                       "': two runs saving to one file replace each "
                       "other's checkpoints. Let that run end (or stop it), "
                       "or give this one another file");
    }
    struct stat named;
    if (::stat(lockPath_.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino) {
      std::string pid = std::to_string(long(::getpid())) + "\n";
      if (::ftruncate(fd_, 0) == 0 &&
          ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
        // The pid is for the message of a second run only.
      }
      return;
    }
    ::close(fd_);
    fd_ = -1;
  }
}

std::optional<FileStamp> regularFileStamp(const std::string &path) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode))
    return std::nullopt;
  FileStamp stamp;
  stamp.device = uint64_t(info.st_dev);
  stamp.inode = uint64_t(info.st_ino);
  stamp.size = int64_t(info.st_size);
  stamp.modifiedSeconds = int64_t(info.st_mtim.tv_sec);
  stamp.modifiedNanoseconds = int64_t(info.st_mtim.tv_nsec);
  return stamp;
}

WriterLock::~WriterLock() {
  if (fd_ < 0)
    return;
  // Removed while still held, so no one locks a name about to vanish
  // except by the re-open above; and only while the name is still this
  // file (something saved over it meanwhile is not ours to delete).
  struct stat held, named;
  if (::fstat(fd_, &held) == 0 && ::lstat(lockPath_.c_str(), &named) == 0 &&
      held.st_dev == named.st_dev && held.st_ino == named.st_ino)
    ::unlink(lockPath_.c_str());
  ::close(fd_);
}

} // namespace txrt::driver
