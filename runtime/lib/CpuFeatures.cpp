//===- CpuFeatures.cpp - which x86 extensions this CPU has (cpuid) --------===//
//
// txrt_cpu_has_feature answers for LLVM's name of an x86 instruction-set
// extension ("avx2", "avx512f", "amx-bf16"): the executable checks the
// features txc compiled its code for (the metadata's "cpu_features", the
// names in compiler/lib/CodeGen/ObjectEmitter.cpp) before any work, where
// an executable built with --mcpu=x86-64-v4 died of SIGILL in its first
// kernel on an AVX2 CPU. A vector extension counts only when the OS also
// saves its registers (XCR0), as oneDNN and the compilers' cpu_supports
// check it.
//
//===----------------------------------------------------------------------===//
#include "txrt/txrt.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace {

/// The OS state a feature's registers need (XCR0 bits).
enum class State { None, Avx, Avx512, Amx };

struct Feature {
  const char *name;
  unsigned leaf, subleaf;
  int reg; ///< 0 eax, 1 ebx, 2 ecx, 3 edx
  unsigned bit;
  State state;
};

constexpr Feature kFeatures[] = {
    {"sse3", 1, 0, 2, 0, State::None},
    {"pclmul", 1, 0, 2, 1, State::None},
    {"ssse3", 1, 0, 2, 9, State::None},
    {"fma", 1, 0, 2, 12, State::Avx},
    {"cx16", 1, 0, 2, 13, State::None},
    {"sse4.1", 1, 0, 2, 19, State::None},
    {"sse4.2", 1, 0, 2, 20, State::None},
    {"movbe", 1, 0, 2, 22, State::None},
    {"popcnt", 1, 0, 2, 23, State::None},
    {"aes", 1, 0, 2, 25, State::None},
    {"avx", 1, 0, 2, 28, State::Avx},
    {"f16c", 1, 0, 2, 29, State::Avx},
    {"rdrnd", 1, 0, 2, 30, State::None},
    {"bmi", 7, 0, 1, 3, State::None},
    {"avx2", 7, 0, 1, 5, State::Avx},
    {"bmi2", 7, 0, 1, 8, State::None},
    {"avx512f", 7, 0, 1, 16, State::Avx512},
    {"avx512dq", 7, 0, 1, 17, State::Avx512},
    {"rdseed", 7, 0, 1, 18, State::None},
    {"adx", 7, 0, 1, 19, State::None},
    {"avx512ifma", 7, 0, 1, 21, State::Avx512},
    {"avx512cd", 7, 0, 1, 28, State::Avx512},
    {"sha", 7, 0, 1, 29, State::None},
    {"avx512bw", 7, 0, 1, 30, State::Avx512},
    {"avx512vl", 7, 0, 1, 31, State::Avx512},
    {"avx512vbmi", 7, 0, 2, 1, State::Avx512},
    {"avx512vbmi2", 7, 0, 2, 6, State::Avx512},
    {"gfni", 7, 0, 2, 8, State::None},
    {"vaes", 7, 0, 2, 9, State::Avx},
    {"vpclmulqdq", 7, 0, 2, 10, State::Avx},
    {"avx512vnni", 7, 0, 2, 11, State::Avx512},
    {"avx512bitalg", 7, 0, 2, 12, State::Avx512},
    {"avx512vpopcntdq", 7, 0, 2, 14, State::Avx512},
    {"amx-bf16", 7, 0, 3, 22, State::Amx},
    {"avx512fp16", 7, 0, 3, 23, State::Avx512},
    {"amx-tile", 7, 0, 3, 24, State::Amx},
    {"amx-int8", 7, 0, 3, 25, State::Amx},
    {"avxvnni", 7, 1, 0, 4, State::Avx},
    {"avx512bf16", 7, 1, 0, 5, State::Avx512},
    {"lzcnt", 0x80000001u, 0, 2, 5, State::None},
    {"sse4a", 0x80000001u, 0, 2, 6, State::None},
    {"prfchw", 0x80000001u, 0, 2, 8, State::None},
    {"xop", 0x80000001u, 0, 2, 11, State::Avx},
    {"fma4", 0x80000001u, 0, 2, 16, State::Avx},
    {"tbm", 0x80000001u, 0, 2, 21, State::None},
};

/// Whether `name` is in TXRT_ASSUME_NO_CPU_FEATURES (a comma-separated
/// list; tests make a CPU without a feature it has).
bool assumedMissing(const char *name) {
  const char *list = std::getenv("TXRT_ASSUME_NO_CPU_FEATURES");
  if (!list)
    return false;
  std::string items = std::string(",") + list + ",";
  return items.find(std::string(",") + name + ",") != std::string::npos;
}

#if defined(__x86_64__) || defined(__i386__)
bool osSaves(State state) {
  if (state == State::None)
    return true;
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27)))
    return false; // no OSXSAVE: no XCR0 to read, no vector state saved
  unsigned low, high;
  __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  switch (state) {
  case State::Avx:
    return (low & 0x6u) == 0x6u;
  case State::Avx512:
    return (low & 0xe6u) == 0xe6u;
  case State::Amx:
    return (low & 0x60000u) == 0x60000u;
  default:
    return true;
  }
}

bool cpuHas(const Feature &feature) {
  unsigned regs[4] = {0, 0, 0, 0};
  unsigned maxLeaf = __get_cpuid_max(feature.leaf & 0x80000000u, nullptr);
  if (maxLeaf < feature.leaf)
    return false;
  if (feature.leaf == 7 && feature.subleaf > 0) {
    unsigned subleaves[4];
    __cpuid_count(7, 0, subleaves[0], subleaves[1], subleaves[2],
                  subleaves[3]);
    if (subleaves[0] < feature.subleaf)
      return false;
  }
  __cpuid_count(feature.leaf, feature.subleaf, regs[0], regs[1], regs[2],
                regs[3]);
  return (regs[feature.reg] >> feature.bit & 1u) && osSaves(feature.state);
}
#endif

} // namespace

extern "C" int32_t txrt_cpu_has_feature(const char *name) {
  if (!name)
    return -1;
  for (const Feature &feature : kFeatures) {
    if (std::strcmp(feature.name, name) != 0)
      continue;
    if (assumedMissing(name))
      return 0;
#if defined(__x86_64__) || defined(__i386__)
    return cpuHas(feature) ? 1 : 0;
#else
    return 0;
#endif
  }
  return -1;
}

// The extensions GCC may use anywhere in this library, from the macros
// -march=${TXRT_ARCH} defines: the runtime's own loops (attention, norms,
// dropout, Adam) are vectorized for them. An executable built with
// txc --mcpu=x86-64 checked only its generated code's features and ran the
// runtime's AVX2 loops on any CPU.
namespace {
/// The names, each followed by a comma.
constexpr const char kRuntimeFeatures[] = ""
#ifdef __SSE3__
                                          "sse3,"
#endif
#ifdef __SSSE3__
                                          "ssse3,"
#endif
#ifdef __SSE4_1__
                                          "sse4.1,"
#endif
#ifdef __SSE4_2__
                                          "sse4.2,"
#endif
#ifdef __POPCNT__
                                          "popcnt,"
#endif
#ifdef __AVX__
                                          "avx,"
#endif
#ifdef __F16C__
                                          "f16c,"
#endif
#ifdef __FMA__
                                          "fma,"
#endif
#ifdef __BMI__
                                          "bmi,"
#endif
#ifdef __BMI2__
                                          "bmi2,"
#endif
#ifdef __AVX2__
                                          "avx2,"
#endif
#ifdef __AVX512F__
                                          "avx512f,"
#endif
#ifdef __AVX512DQ__
                                          "avx512dq,"
#endif
#ifdef __AVX512CD__
                                          "avx512cd,"
#endif
#ifdef __AVX512BW__
                                          "avx512bw,"
#endif
#ifdef __AVX512VL__
                                          "avx512vl,"
#endif
#ifdef __AVX512VNNI__
                                          "avx512vnni,"
#endif
#ifdef __AVX512BF16__
                                          "avx512bf16,"
#endif
#ifdef __AVX512FP16__
                                          "avx512fp16,"
#endif
    ;
} // namespace

extern "C" const char *txrt_runtime_cpu_features(void) {
  // Without the last comma.
  static const std::string names(
      kRuntimeFeatures, std::max<size_t>(sizeof kRuntimeFeatures, 2) - 2);
  return names.c_str();
}

extern "C" const char *txrt_runtime_arch(void) {
#ifdef TXRT_ARCH_NAME
  return TXRT_ARCH_NAME;
#else
  return "unknown";
#endif
}
