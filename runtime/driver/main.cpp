//===- main.cpp - main() of every executable txc links --------------------===//
//
// The only file of libtxrt_driver: it references the two symbols txc's
// object file defines (ModelAbi.h) and hands them to the driver, so linking
// [model.o, libtxrt_driver.a, libtxrt_driver_core.a, libtxrt.a] yields the
// model's executable.
//
//===----------------------------------------------------------------------===//
#include "commands/Driver.h"
#include "core/ModelAbi.h"
#include "txrt/txrt.h"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

extern "C" {
extern const char txc_model_json[];
extern const txc_entry_fn txc_entry_table[];
}

namespace {

/// The file mapped at `address` (/proc/self/maps): its path ("" if none is
/// named) and inode (0 if none).
struct MappedFile {
  std::string path;
  unsigned long inode = 0;
};

MappedFile mappedFile(const void *address) {
  std::FILE *maps = std::fopen("/proc/self/maps", "r");
  if (!maps)
    return {};
  const uintptr_t at = reinterpret_cast<uintptr_t>(address);
  std::string found;
  unsigned long inode = 0;
  char line[8192];
  while (std::fgets(line, sizeof(line), maps)) {
    uintptr_t begin = 0, end = 0;
    int pathStart = 0;
    if (std::sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %*s %*s %lu %n",
                    &begin, &end, &inode, &pathStart) < 3 ||
        at < begin || at >= end)
      continue;
    found = line + pathStart;
    while (!found.empty() && (found.back() == '\n' || found.back() == ' '))
      found.pop_back();
    break;
  }
  std::fclose(maps);
  return {found.empty() || found[0] != '/' ? "" : found, inode};
}

} // namespace

int main(int argc, char **argv) {
  // A stack too small for even the start (`ulimit -s 16`) segfaulted before
  // the driver's own check: said here, first, with the least stack.
  struct rlimit stack;
  if (getrlimit(RLIMIT_STACK, &stack) == 0 && stack.rlim_cur != RLIM_INFINITY &&
      stack.rlim_cur < 64 * 1024) {
    static const char message[] =
        "error: the stack limit (ulimit -s) is below the 64K the executable "
        "needs to start; raise it (ulimit -s 8192 is the usual default)\n";
    ssize_t written = write(2, message, sizeof message - 1);
    (void)written;
    return 2;
  }
  // libgomp read OMP_WAIT_POLICY / GOMP_SPINCOUNT when it was loaded. Where
  // the environment names no policy, set txrt's default and start again so
  // that libgomp reads it (if the exec fails, run on libgomp's default).
  if (txrt_apply_default_wait_policy()) {
    char self[4096];
    ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (length > 0) {
      self[length] = '\0';
      // Run through the dynamic loader (`ld-linux-x86-64.so.2 ./model`, as
      // on a noexec mount), /proc/self/exe is the loader, and argv no
      // longer names the program: the loader is given the program again
      // (it took 'info' for the program and failed to load it).
      // Told apart by inode: the path in /proc/self/maps loses a name's
      // trailing spaces and escapes its newlines, and such an executable
      // was taken for the loader (its path became argv[1]: "unknown
      // command").
      const MappedFile program =
          mappedFile(reinterpret_cast<const void *>(&mappedFile));
      struct stat exe;
      const bool isLoader = !program.path.empty() && program.inode != 0 &&
                            stat(self, &exe) == 0 &&
                            exe.st_ino != program.inode;
      if (isLoader) {
        std::vector<char *> args = {self,
                                    const_cast<char *>(program.path.c_str())};
        args.insert(args.end(), argv + 1, argv + argc);
        args.push_back(nullptr);
        execv(self, args.data());
      } else {
        execv(self, argv);
      }
    }
  }
  return txrt::driver::driverMain(argc, argv, txc_model_json, txc_entry_table);
}
