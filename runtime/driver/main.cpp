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

#include <unistd.h>

extern "C" {
extern const char txc_model_json[];
extern const txc_entry_fn txc_entry_table[];
}

int main(int argc, char **argv) {
  // libgomp read OMP_WAIT_POLICY / GOMP_SPINCOUNT when it was loaded. Where
  // the environment names no policy, set txrt's default and start again so
  // that libgomp reads it (if the exec fails, run on libgomp's default).
  if (txrt_apply_default_wait_policy()) {
    char self[4096];
    ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (length > 0) {
      self[length] = '\0';
      execv(self, argv);
    }
  }
  return txrt::driver::driverMain(argc, argv, txc_model_json, txc_entry_table);
}
