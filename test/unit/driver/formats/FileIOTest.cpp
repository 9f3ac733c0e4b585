//===- FileIOTest.cpp - atomic writes through symlinks --------------------===//
#include "formats/FileIO.h"
#include "TestUtil.h"

#include <filesystem>

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

TEST(FileIOTest, APlainPathIsReplaced) {
  ScratchDir dir;
  writeFile(dir.file("a.txt"), "one");
  AtomicFileWriter writer(dir.file("a.txt"));
  writer.write("two");
  writer.commit();
  EXPECT_EQ(readFile(dir.file("a.txt")), "two");
  EXPECT_FALSE(std::filesystem::is_symlink(dir.file("a.txt")));
}

} // namespace
