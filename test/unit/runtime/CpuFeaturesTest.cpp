//===- CpuFeaturesTest.cpp - txrt_cpu_has_feature against the compiler ----===//
//
// txrt_cpu_has_feature reads cpuid (and XCR0) itself; GCC's
// __builtin_cpu_supports reads the same bits through libgcc: the two agree
// on every extension both know, on whatever CPU runs the test. Unknown
// names answer -1, and TXRT_ASSUME_NO_CPU_FEATURES takes features away.
//
//===----------------------------------------------------------------------===//
#include "txrt/txrt.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

#define EXPECT_AS_GCC(llvmName, gccName)                                       \
  EXPECT_EQ(txrt_cpu_has_feature(llvmName),                                    \
            __builtin_cpu_supports(gccName) ? 1 : 0)                           \
      << llvmName

TEST(CpuFeaturesTest, AgreesWithTheCompilersCheck) {
  __builtin_cpu_init();
  EXPECT_AS_GCC("sse3", "sse3");
  EXPECT_AS_GCC("ssse3", "ssse3");
  EXPECT_AS_GCC("sse4.1", "sse4.1");
  EXPECT_AS_GCC("sse4.2", "sse4.2");
  EXPECT_AS_GCC("popcnt", "popcnt");
  EXPECT_AS_GCC("avx", "avx");
  EXPECT_AS_GCC("avx2", "avx2");
  EXPECT_AS_GCC("fma", "fma");
  EXPECT_AS_GCC("bmi", "bmi");
  EXPECT_AS_GCC("bmi2", "bmi2");
  EXPECT_AS_GCC("avx512f", "avx512f");
  EXPECT_AS_GCC("avx512bw", "avx512bw");
  EXPECT_AS_GCC("avx512vl", "avx512vl");
  EXPECT_AS_GCC("avx512dq", "avx512dq");
  EXPECT_AS_GCC("avx512cd", "avx512cd");
  EXPECT_AS_GCC("avx512vnni", "avx512vnni");
  EXPECT_AS_GCC("avx512bf16", "avx512bf16");
}

TEST(CpuFeaturesTest, UnknownNamesAreMinusOne) {
  EXPECT_EQ(txrt_cpu_has_feature("avx9000"), -1);
  EXPECT_EQ(txrt_cpu_has_feature(""), -1);
  EXPECT_EQ(txrt_cpu_has_feature(nullptr), -1);
  EXPECT_EQ(txrt_cpu_has_feature("64bit"), -1); // a mode, not checked
}

TEST(CpuFeaturesTest, TheEnvironmentTakesFeaturesAway) {
  ASSERT_EQ(setenv("TXRT_ASSUME_NO_CPU_FEATURES", "fma,avx2", 1), 0);
  EXPECT_EQ(txrt_cpu_has_feature("avx2"), 0);
  EXPECT_EQ(txrt_cpu_has_feature("fma"), 0);
  EXPECT_EQ(txrt_cpu_has_feature("avx"), __builtin_cpu_supports("avx") ? 1 : 0);
  EXPECT_EQ(txrt_cpu_has_feature("avx2x"), -1);
  ASSERT_EQ(unsetenv("TXRT_ASSUME_NO_CPU_FEATURES"), 0);
}

// What the library was compiled for: names the check knows, comma-separated
// without empty items, and all of them on the CPU the tests run on (the
// library runs here).
TEST(CpuFeaturesTest, TheRuntimesOwnFeaturesAreKnownAndPresent) {
  const std::string names = txrt_runtime_cpu_features();
  EXPECT_FALSE(!names.empty() && names.back() == ',') << names;
  size_t begin = 0;
  while (begin < names.size()) {
    size_t end = names.find(',', begin);
    if (end == std::string::npos)
      end = names.size();
    const std::string name = names.substr(begin, end - begin);
    EXPECT_FALSE(name.empty()) << names;
    EXPECT_EQ(txrt_cpu_has_feature(name.c_str()), 1) << name;
    begin = end + 1;
  }
  EXPECT_STRNE(txrt_runtime_arch(), "");
}

} // namespace
