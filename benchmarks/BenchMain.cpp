//===- BenchMain.cpp - txrt-bench: libtxrt kernels vs their baselines -----===//
#include "BenchUtil.h"

#include <omp.h>

int main(int argc, char **argv) {
  // The baselines run on the same thread count as libtxrt's context.
  omp_set_num_threads(txrt_context_num_threads(txrt_bench::context()));
  benchmark::AddCustomContext(
      "txrt_threads",
      std::to_string(txrt_context_num_threads(txrt_bench::context())));
  txrt_bench::registerMatmulBenchmarks();
  txrt_bench::registerPackedProjectionBenchmarks();
  txrt_bench::registerPackedWeightsBenchmarks();
  txrt_bench::registerAttentionBenchmarks();
  txrt_bench::registerAddLayerNormBenchmarks();
  txrt_bench::registerAddRmsNormBenchmarks();
  txrt_bench::registerRopeAttentionBenchmarks();
  txrt_bench::registerDenormalsBenchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
