//===- FileIOTest.cpp - atomic writes, writer locks -----------------------===//
#include "formats/FileIO.h"
#include "TestUtil.h"
#include "core/Error.h"

#include <filesystem>

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

TEST(FileIOTest, AWriteThroughASymlinkReplacesItsTarget) {
  // `latest.safetensors -> run3.safetensors`: the save replaced the link
  // with a regular file and left run3 at its old step.
  ScratchDir dir;
  std::filesystem::create_directory(dir.file("runs"));
  writeFile(dir.file("runs/run3.bin"), "old");
  std::filesystem::create_symlink("runs/run3.bin", dir.file("latest.bin"));
  {
    AtomicFileWriter writer(dir.file("latest.bin"));
    // The temporary sits beside the target, on its file system.
    EXPECT_NE(writer.temporaryPath().find("runs/run3.bin.tmp."),
              std::string::npos);
    writer.write("new");
    writer.commit();
  }
  EXPECT_TRUE(std::filesystem::is_symlink(dir.file("latest.bin")));
  EXPECT_EQ(readFile(dir.file("runs/run3.bin")), "new");
  EXPECT_EQ(readFile(dir.file("latest.bin")), "new");

  // A chain of links, one of them absolute, to a file not there yet.
  std::filesystem::create_symlink(dir.file("runs/fresh.bin"),
                                  dir.file("runs/abs.bin"));
  std::filesystem::create_symlink("runs/abs.bin", dir.file("chain.bin"));
  {
    AtomicFileWriter writer(dir.file("chain.bin"));
    writer.write("made");
    writer.commit();
  }
  EXPECT_TRUE(std::filesystem::is_symlink(dir.file("chain.bin")));
  EXPECT_EQ(readFile(dir.file("runs/fresh.bin")), "made");

  // An uncommitted writer leaves the target as it was.
  {
    AtomicFileWriter writer(dir.file("latest.bin"));
    writer.write("half");
  }
  EXPECT_EQ(readFile(dir.file("runs/run3.bin")), "new");
}

TEST(FileIOTest, AStampChangesWhenTheFileDoes) {
  // train streams a seq2seq --data file twice (vocabulary, then encoding):
  // it compares the stamps from before the first pass and after the last.
  ScratchDir dir;
  const std::string path = dir.file("data.tsv");
  writeFile(path, "a\tb\n");
  const std::optional<FileStamp> first = regularFileStamp(path);
  ASSERT_TRUE(first);
  EXPECT_EQ(regularFileStamp(path), first);
  // Rewritten in place with the same size (a timestamp tick later).
  usleep(30000);
  {
    const int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, "c", 1, 0), 1);
    ::close(fd);
  }
  const std::optional<FileStamp> rewritten = regularFileStamp(path);
  ASSERT_TRUE(rewritten);
  EXPECT_NE(*rewritten, *first);
  // Replaced by another file (cp over it, a rename).
  writeFile(dir.file("other.tsv"), "c\tb\n");
  std::filesystem::rename(dir.file("other.tsv"), path);
  EXPECT_NE(regularFileStamp(path), rewritten);
  // Not a regular file: no stamp (a pipe is read once).
  EXPECT_FALSE(regularFileStamp(dir.file("missing.tsv")));
  EXPECT_FALSE(regularFileStamp(dir.path()));
}

TEST(FileIOTest, APlainPathIsReplaced) {
  ScratchDir dir;
  writeFile(dir.file("a.txt"), "one");
  AtomicFileWriter writer(dir.file("a.txt"));
  writer.write("two");
  writer.commit();
  EXPECT_EQ(readFile(dir.file("a.txt")), "two");
  EXPECT_FALSE(std::filesystem::is_symlink(dir.file("a.txt")));
}

/// Sets or clears FS_IMMUTABLE_FL (chattr +i / -i); false where the file
/// system or the user cannot.
bool setImmutable(const std::string &path, bool on) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  int flags = 0;
  bool done = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
  if (done) {
    flags = on ? (flags | FS_IMMUTABLE_FL) : (flags & ~FS_IMMUTABLE_FL);
    done = ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
  }
  ::close(fd);
  return done;
}

// A checkpoint whose rename fails after the run (another user's file in a
// sticky directory, an immutable file) was removed with its temporary: the
// run's work was lost. It is kept beside it and the error names it; other
// outputs' temporaries are removed as before.
TEST(FileIOTest, AWriteThatCannotReplaceKeepsWhatWasWrittenWhenAsked) {
  ScratchDir dir;
  const std::string path = dir.file("c.safetensors");
  writeFile(path, "old");
  if (!setImmutable(path, true))
    GTEST_SKIP() << "cannot make a file immutable here (chattr +i needs "
                    "root and ext4/xfs/btrfs)";
  {
    AtomicFileWriter writer(path, AtomicFileWriter::WhenNotReplaced::Keep);
    writer.write("trained");
    EXPECT_THROW_MESSAGE(writer.commit(), ResourceError, "cannot rename '",
                         "' to '" + path + "': ",
                         "('" + path +
                             "' is left as it was; what was to "
                             "replace it is kept as '" +
                             dir.file("c.unsaved.safetensors") + "')");
  }
  EXPECT_EQ(readFile(dir.file("c.unsaved.safetensors")), "trained");
  {
    AtomicFileWriter writer(path);
    writer.write("curve");
    EXPECT_THROW_MESSAGE(writer.commit(), ResourceError, "is left as it was");
  }
  setImmutable(path, false);
  EXPECT_EQ(readFile(path), "old");
  size_t files = 0;
  for (const auto &entry : std::filesystem::directory_iterator(dir.path()))
    files += entry.is_regular_file();
  EXPECT_EQ(files, 2u); // no temporary left
}

// A checkpoint made read-only, or replaced by a directory, while the run
// trained failed the check before the rename, and the temporary went with
// the error: a tester lost 4310 steps. It is kept as when the rename fails.
TEST(FileIOTest, ADestinationThatBecameUnreplaceableKeepsWhatWasWritten) {
  ScratchDir dir;
  const std::string path = dir.file("c.safetensors");
  const std::string kept = dir.file("c.unsaved.safetensors");
  writeFile(path, "old");
  {
    AtomicFileWriter writer(path, AtomicFileWriter::WhenNotReplaced::Keep);
    writer.write("trained");
    ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
    EXPECT_THROW_MESSAGE(writer.commit(), ResourceError,
                         "it is read-only (mode 0444)",
                         "('" + path +
                             "' is left as it was; what was to replace it "
                             "is kept as '" +
                             kept + "')");
  }
  EXPECT_EQ(readFile(kept), "trained");
  EXPECT_EQ(readFile(path), "old");
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  std::filesystem::remove(kept);
  {
    AtomicFileWriter writer(path, AtomicFileWriter::WhenNotReplaced::Keep);
    writer.write("trained again");
    std::filesystem::remove(path);
    std::filesystem::create_directory(path);
    EXPECT_THROW_MESSAGE(writer.commit(), ResourceError, "is a directory",
                         "kept as '" + kept + "'");
  }
  EXPECT_EQ(readFile(kept), "trained again");
  // Read-only before the save began (the final save of a run): the same.
  std::filesystem::remove(path);
  std::filesystem::remove(kept);
  writeFile(path, "old");
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  {
    AtomicFileWriter writer(path, AtomicFileWriter::WhenNotReplaced::Keep);
    writer.write("trained at last");
    EXPECT_THROW_MESSAGE(writer.commit(), ResourceError, "read-only",
                         "kept as '" + kept + "'");
  }
  EXPECT_EQ(readFile(kept), "trained at last");
  // Its owner may write it (it took the read-only file's mode, and could
  // not be resumed in place).
  struct stat keptMode;
  ASSERT_EQ(::stat(kept.c_str(), &keptMode), 0);
  EXPECT_TRUE(keptMode.st_mode & S_IWUSR);
  // A file already at the kept name (the user's, or earlier kept work) is
  // never replaced: the next free name (it replaced the user's notes).
  writeFile(kept, "my notes");
  {
    AtomicFileWriter writer(path, AtomicFileWriter::WhenNotReplaced::Keep);
    writer.write("trained once more");
    EXPECT_THROW_MESSAGE(writer.commit(), ResourceError,
                         "kept as '" + dir.file("c.unsaved-2.safetensors") +
                             "'");
  }
  EXPECT_EQ(readFile(kept), "my notes");
  EXPECT_EQ(readFile(dir.file("c.unsaved-2.safetensors")), "trained once more");
  std::filesystem::remove(dir.file("c.unsaved-2.safetensors"));
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  // Other outputs' temporaries go with the error, as before.
  std::filesystem::remove(path);
  writeFile(path, "old");
  {
    AtomicFileWriter writer(path);
    writer.write("curve");
    ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
    EXPECT_THROW_MESSAGE(writer.commit(), InputError, "read-only");
  }
  size_t files = 0;
  for (const auto &entry : std::filesystem::directory_iterator(dir.path()))
    files += entry.is_regular_file();
  EXPECT_EQ(files, 2u); // c and c.unsaved, no temporary
}

// Another user's symbolic link in a world-writable sticky directory (/tmp)
// led root's save into the directory it named (outputs resolve links
// themselves, which fs.protected_symlinks does not cover): refused, as the
// kernel refuses to follow it. This user's links there are written through.
TEST(FileIOTest, AnotherUsersLinkInAStickyDirectoryIsNotFollowed) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "needs root to give a link another owner";
  ScratchDir dir;
  const std::string shared = dir.file("shared"), victim = dir.file("victim");
  std::filesystem::create_directory(shared);
  std::filesystem::create_directory(victim);
  ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
  writeFile(victim + "/params.safetensors", "root's");
  const std::string link = shared + "/out.safetensors";
  std::filesystem::create_symlink(victim + "/params.safetensors", link);
  ASSERT_EQ(::lchown(link.c_str(), 65534, 65534), 0);
  const std::string message = "'" + link +
                              "' is a symbolic link of another user (uid "
                              "65534) in '" +
                              shared + "', a world-writable directory";
  EXPECT_THROW_MESSAGE(checkReplaceable(link, "--save"), InputError, message);
  EXPECT_THROW_MESSAGE(
      AtomicFileWriter(link, AtomicFileWriter::WhenNotReplaced::Keep),
      InputError, message);
  EXPECT_THROW_MESSAGE(AtomicFileWriter{link}, InputError, message);
  EXPECT_EQ(readFile(victim + "/params.safetensors"), "root's");
  size_t files = 0;
  for (const auto &entry : std::filesystem::directory_iterator(victim))
    files += entry.is_regular_file();
  EXPECT_EQ(files, 1u); // no temporary beside the target
  // A directory of the path through such a link (--out-dir, --save
  // shared/dd/c.safetensors) led there too.
  const std::string dirLink = shared + "/dd";
  std::filesystem::create_symlink(victim, dirLink);
  ASSERT_EQ(::lchown(dirLink.c_str(), 65534, 65534), 0);
  EXPECT_THROW_MESSAGE(checkReplaceable(dirLink + "/new.safetensors", "--save"),
                       InputError,
                       "'" + dirLink + "' is a symbolic link of another user");
  // This user's own link there is followed.
  ASSERT_EQ(::lchown(link.c_str(), 0, 0), 0);
  {
    AtomicFileWriter writer(link);
    writer.write("mine");
    writer.commit();
  }
  EXPECT_EQ(readFile(victim + "/params.safetensors"), "mine");
}

// A path over PATH_MAX whose directory exists was said not to exist.
TEST(FileIOTest, APathTooLongIsNamedSo) {
  ScratchDir dir;
  std::string deep = dir.path();
  const std::string part(200, 'd');
  while (deep.size() < 4200)
    deep += "/" + part;
  EXPECT_THROW_MESSAGE(checkParentDirectory(deep + "/c.safetensors", "--save"),
                       InputError, "--save: cannot write '",
                       "': the path is too long (");
}

TEST(FileIOTest, OneWriterLockAtATime) {
  // Two runs with one --save each replaced the other's checkpoints.
  ScratchDir dir;
  const std::string path = dir.file("c.safetensors");
  {
    WriterLock first(path, "--save");
    EXPECT_EQ(first.lockPath(), path + ".lock");
    EXPECT_TRUE(std::filesystem::exists(path + ".lock"));
    // Another open file description of the same lock file conflicts, in
    // this process as in another one.
    EXPECT_THROW_MESSAGE(WriterLock(path, "--save"), InputError,
                         "--save '" + path +
                             "' is being written by another run (pid " +
                             std::to_string(long(::getpid())) +
                             ") that holds '" + path + ".lock'");
    // Through a symlink it is the same file, so the same lock.
    std::filesystem::create_symlink("c.safetensors", dir.file("latest"));
    EXPECT_THROW(WriterLock(dir.file("latest"), "--save"), InputError);
  }
  // Released: the lock file is gone and the next run takes it.
  EXPECT_FALSE(std::filesystem::exists(path + ".lock"));
  { WriterLock again(path, "--save"); }
  // A lock file left by a killed run (nothing holds it) does not block.
  writeFile(path + ".lock", "12345\n");
  { WriterLock after(path, "--save"); }
  EXPECT_FALSE(std::filesystem::exists(path + ".lock"));

  // Anything else there is refused, not taken for a lock: a checkpoint
  // named C.lock was overwritten with a pid and deleted at the end; with a
  // directory or a symlink there the run went on without a lock.
  writeFile(path + ".lock", "a checkpoint, not a lock");
  EXPECT_THROW_MESSAGE(WriterLock(path, "--save"), InputError,
                       "holds something else than a lock");
  EXPECT_EQ(readFile(path + ".lock"), "a checkpoint, not a lock");
  std::filesystem::remove(path + ".lock");
  std::filesystem::create_directory(path + ".lock");
  EXPECT_THROW_MESSAGE(WriterLock(path, "--save"), InputError,
                       "is a directory");
  std::filesystem::remove(path + ".lock");
  writeFile(dir.file("elsewhere"), "");
  std::filesystem::create_symlink(dir.file("elsewhere"), path + ".lock");
  EXPECT_THROW_MESSAGE(WriterLock(path, "--save"), InputError,
                       "is a symbolic link");
  std::filesystem::remove(path + ".lock");

  // A file saved over the lock meanwhile is not the holder's to delete.
  {
    WriterLock held(path, "--save");
    writeFile(dir.file("other"), "someone's checkpoint");
    std::filesystem::rename(dir.file("other"), path + ".lock");
  }
  EXPECT_EQ(readFile(path + ".lock"), "someone's checkpoint");
}

} // namespace
