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

extern "C" {
extern const char txc_model_json[];
extern const txc_entry_fn txc_entry_table[];
}

int main(int argc, char **argv) {
  return txrt::driver::driverMain(argc, argv, txc_model_json, txc_entry_table);
}
