//===- FileIO.h - checked file reading and atomic file writing --*- C++ -*-===//
//
// Every failure becomes an error that names the file and the cause
// (strerror), never a crash or a hang:
//
//  - reading: only regular files (a FIFO, a device or a directory is
//    refused without blocking on it); whole (text) files, or random-access
//    reads of a binary file whose size is known up front;
//  - writing: FILE goes through a temporary FILE.tmp.<pid>.<random> in the
//    same directory (created exclusively, so concurrent writers never share
//    one), fsync, rename over FILE, fsync of the directory. A failed write
//    removes its temporary and leaves FILE as it was; temporaries left by a
//    killed process (whose pid no longer runs) are removed by the next
//    writer of the same FILE. Only a regular file (or nothing) is replaced.
//
// A destination the user chose badly (no such directory, permission
// denied, not a regular file) is an InputError (exit 2); a failure while
// writing (disk full, file size limit, I/O error) is a ResourceError
// (exit 1).
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_FILEIO_H
#define TXRT_DRIVER_FILEIO_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace txrt::driver {

/// The whole content of a regular file.
std::string readWholeFile(const std::string &path);

/// Why a path over PATH_MAX cannot be written: "the path is too long (N
/// characters; ...): give a shorter one" (its existing directory was said
/// not to exist).
std::string pathTooLong(const std::string &path);

/// Fails (InputError naming `what`, e.g. "--save") before any work is done
/// when `path` cannot be created because its directory does not exist.
void checkParentDirectory(const std::string &path, const std::string &what);

/// Fails (InputError naming `what`) when `path` exists and is not a regular
/// file (a directory, a FIFO, a device, a socket): writing would replace it.
void checkReplaceable(const std::string &path, const std::string &what);

/// Whether `text` (a file or tensor name) ends with `suffix`.
inline bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// `word` as a shell word in a command a message advises: as it is when
/// it needs no quoting, else in single quotes (a path with a blank was
/// two arguments when pasted).
std::string shellWord(std::string_view word);

/// `text` for a message: its control characters escaped (\n, \t, \x1b,
/// \x00: a NUL cut the message short; C1 controls and the line and
/// paragraph separators as \u0085, \u2028), other bytes as they are.
std::string escapeForMessage(std::string_view text);

/// escapeForMessage of `text`, quoted and cut after 80 bytes.
std::string quotedForMessage(const std::string &text);

/// Refuses (InputError naming `what`) a symbolic link on the way to `path`
/// (the file, a directory of its path, or a link a link leads to) that lies
/// in a world-writable directory with the sticky bit (/tmp) and belongs to
/// neither this user nor the directory's owner, as the kernel does with
/// fs.protected_symlinks = 1; checkReplaceable does it for outputs.
void checkSymlinksTrusted(const std::string &path, const std::string &what);

/// `path` with the symlinks of its last component followed (a chain, to
/// a file that may not exist yet); `path` itself when it is no symlink.
std::string followSymlinks(const std::string &path);

/// A read-only regular file with bounds-checked positional reads.
class BinaryFile {
public:
  /// Opens `path`; InputError when it is missing, unreadable or not a
  /// regular file.
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

/// While alive, files that AtomicFileWriter makes new (none was at the
/// path) are no more readable by the group and others than `model` is,
/// when `model` is a regular file: train's outputs beside a private (0600)
/// --save (`.best`, step copies, the loss curve, tokenizer copies) took
/// the umask's 0644. Only narrows: the owner keeps read and write, and a
/// tighter umask stays. One at a time (nested, the inner one holds).
class NewFilesPrivateLike {
public:
  explicit NewFilesPrivateLike(const std::string &model);
  NewFilesPrivateLike(const NewFilesPrivateLike &) = delete;
  NewFilesPrivateLike &operator=(const NewFilesPrivateLike &) = delete;
  ~NewFilesPrivateLike();

private:
  int previous_;
};

/// Said by AtomicFileWriter::commit when the rename succeeded but syncing
/// the directory failed: the file already holds the new content (a caller
/// must not say it is left as it was).
constexpr const char *kReplacedNotDurable = "it holds the new content";

/// Writes `path` atomically (see the file comment): write() to the
/// temporary, commit() makes it `path`. Destroying an uncommitted writer
/// removes the temporary. A `path` that is a symlink is written through:
/// its target is replaced (the temporary beside the target), and the link
/// stays a link, as `open()` would write through it (`latest.safetensors
/// -> run3.safetensors` keeps pointing at the new run3).
class AtomicFileWriter {
public:
  /// The most characters the temporary's name adds to the file's:
  /// ".tmp.<pid>.<16 hex digits>", a pid of at most 10 digits.
  static constexpr size_t kTemporaryNameExtra = 32;

  /// What a commit that cannot replace the file (it became read-only or
  /// a directory during the run, another user's file in a sticky
  /// directory, an immutable file) does with what was written: removes it,
  /// or, for outputs that cost a run (checkpoints), keeps it as
  /// FILE.unsaved.safetensors for FILE.safetensors, else FILE.unsaved, or
  /// the temporary itself where that cannot be made; the error names it.
  /// Keep checks the file at the commit only: a checkpoint made read-only
  /// during a run was refused here and the run's work lost.
  enum class WhenNotReplaced { Remove, Keep };

  explicit AtomicFileWriter(std::string path, WhenNotReplaced whenNotReplaced =
                                                  WhenNotReplaced::Remove);
  AtomicFileWriter(const AtomicFileWriter &) = delete;
  AtomicFileWriter &operator=(const AtomicFileWriter &) = delete;
  ~AtomicFileWriter();

  void write(const void *data, size_t bytes);
  void write(std::string_view text) { write(text.data(), text.size()); }
  /// Flushes what was written to the disk (a full disk fails here, before
  /// anything is replaced); commit() does it too.
  void sync();
  /// Replaces the file with what was written (keeping the replaced file's
  /// permissions).
  void commit();
  /// The temporary file's name (for tests).
  const std::string &temporaryPath() const { return tmpPath_; }

private:
  [[noreturn]] void fail(const std::string &operation);

  std::string path_;   ///< as given: what messages name
  std::string target_; ///< `path_` with its symlinks resolved: what is replaced
  std::string tmpPath_;
  int fd_ = -1;
  bool committed_ = false;
  bool existed_ = false; ///< path_ was there to replace
  bool keepWhenNotReplaced_ = false; ///< WhenNotReplaced::Keep
};

/// A run's claim on a file it will write again and again (train's
/// --save): an advisory lock (flock) on FILE.lock beside FILE (its
/// symlinks resolved, so a link and its target share one), held until the
/// object is destroyed, which removes FILE.lock. A second process asking
/// for the same FILE gets an InputError naming `what` and the holder's
/// pid; a holder that was killed holds nothing (the kernel drops its lock),
/// so a left-over FILE.lock never blocks. On a file system without locks
/// the claim is skipped.
class WriterLock {
public:
  WriterLock(const std::string &path, const std::string &what);
  WriterLock(const WriterLock &) = delete;
  WriterLock &operator=(const WriterLock &) = delete;
  ~WriterLock();

  const std::string &lockPath() const { return lockPath_; }

private:
  std::string lockPath_;
  int fd_ = -1;
};

/// What identifies a file's content without reading it: the file (device,
/// inode), its size and its modification time (nanoseconds).
struct FileStamp {
  uint64_t device = 0, inode = 0;
  int64_t size = 0, modifiedSeconds = 0, modifiedNanoseconds = 0;
  bool operator==(const FileStamp &other) const {
    return device == other.device && inode == other.inode &&
           size == other.size && modifiedSeconds == other.modifiedSeconds &&
           modifiedNanoseconds == other.modifiedNanoseconds;
  }
  bool operator!=(const FileStamp &other) const { return !(*this == other); }
};

/// The stamp of the regular file at `path` (symlinks followed); nullopt
/// for anything else (a pipe, a device) or when it cannot be stat'ed.
std::optional<FileStamp> regularFileStamp(const std::string &path);

/// Whether `name` (a file name, no directory) is a temporary of
/// AtomicFileWriter for a file named `target`; sets `pid` to its writer.
bool isTemporaryOf(const std::string &name, const std::string &target,
                   long *pid = nullptr);

/// A new temporary's name for `target` (a path), as AtomicFileWriter names
/// its own: TARGET.tmp.<pid>.<16 random hex digits>. Temporaries of writers
/// that no longer run are removed with removeStaleTemporaries.
std::string temporaryNameFor(const std::string &target);

/// Removes the temporaries of `path` whose writer process no longer exists.
void removeStaleTemporaries(const std::string &path);

} // namespace txrt::driver

#endif // TXRT_DRIVER_FILEIO_H
