//===- SanitizerDefaults.cpp - ASan defaults for executables linking LLVM -===//
//
// Linked into every executable of a sanitizer build (-DTXC_SANITIZE=...)
// that links Debian's LLVM/MLIR libraries: txc, tx-opt, the MLIR unit tests
// and fuzz-spec-frontend (txc_sanitizer_defaults in CMakeLists.txt).
//
// Those libraries are not instrumented, and llvm/Support/Allocator.h makes
// that unsound for ASan's manual poisoning: BumpPtrAllocator (MLIR's
// storage for types, attributes, dialect tables, ...) poisons each new slab
// and unpoisons each allocation only where the including file is compiled
// with ASan (LLVM_ADDRESS_SANITIZER_BUILD). Its out-of-line AllocateSlow()
// exists in our instrumented objects and in the uninstrumented libraries,
// and the linker keeps one copy: ours, which poisons a fresh slab, while the
// inlined fast path Allocate() inside libMLIR hands out pieces of that slab
// without unpoisoning them. Our code then reads an attribute or a type MLIR
// allocated and ASan reports use-after-poison (shadow f7) on valid memory:
// the first report comes from `MLIRContext` construction itself.
//
// allow_user_poisoning=0 makes ASan ignore manual poisoning; every check of
// its own (heap, stack and global redzones, use after free, leaks) stays on.
// Only LLVM's slab poisoning is lost, which cannot be trusted anyway when the
// allocator's code is half instrumented. Our code does no manual poisoning,
// and libstdc++'s container annotations are off (_GLIBCXX_SANITIZE_VECTOR is
// not defined), so container-overflow checks are not affected either way.
// ASAN_OPTIONS in the environment still overrides this.
//
//===----------------------------------------------------------------------===//

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
extern "C" __attribute__((no_sanitize("address", "undefined"), used,
                          visibility("default"))) const char *
__asan_default_options() {
  return "allow_user_poisoning=0";
}
#endif
#endif
