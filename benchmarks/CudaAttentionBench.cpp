//===- CudaAttentionBench.cpp - the CUDA attention kernels, timed ---------===//
//
// txrt-cuda-bench: txrt_cuda_attention_fwd and _bwd of one shape (causal
// self-attention, no mask, no dropout, strict fp32), timed over --repeat
// calls after --warmup, each batch of calls closed by
// txrt_cuda_synchronize. scripts/bench-gpu.sh runs it beside PyTorch's
// scaled_dot_product_attention on the same shape (scripts/bench_torch.py
// attention). Prints
//   txc_attention_fwd_ms MEDIAN
//   txc_attention_bwd_ms MEDIAN
// (the backward alone: its forward's O and lse are computed once first).
// The default kernels are the tensor-core ones (3xTF32);
// TXRT_CUDA_ATTENTION=simt times the tiled CUDA-core kernels, =rows the
// per-row reference kernels.
//
//===----------------------------------------------------------------------===//
#include "txrt/txrt_cuda.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

struct Options {
  int64_t batch = 8, heads = 8, length = 256, headDim = 64;
  int repeat = 20, warmup = 3;
};

[[noreturn]] void usage(const char *problem) {
  std::fprintf(stderr,
               "txrt-cuda-bench: error: %s\n"
               "usage: txrt-cuda-bench [--batch B] [--heads H] [--len T] "
               "[--head-dim D] [--repeat N] [--warmup N]\n",
               problem);
  std::exit(2);
}

Options parse(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc)
      usage(("missing value after " + flag).c_str());
    char *end = nullptr;
    const long long value = std::strtoll(argv[++i], &end, 10);
    if (!end || *end || value <= 0)
      usage((flag + " needs a positive integer").c_str());
    if (flag == "--batch")
      options.batch = value;
    else if (flag == "--heads")
      options.heads = value;
    else if (flag == "--len")
      options.length = value;
    else if (flag == "--head-dim")
      options.headDim = value;
    else if (flag == "--repeat")
      options.repeat = int(value);
    else if (flag == "--warmup")
      options.warmup = int(value);
    else
      usage(("unknown flag " + flag).c_str());
  }
  return options;
}

txrt_cuda_context *context = nullptr;

void check(txrt_status status, const char *what) {
  if (status == TXRT_OK)
    return;
  // The library's message names the call; `what` when it has none.
  const char *message = txrt_cuda_last_error(context);
  std::fprintf(stderr, "txrt-cuda-bench: error: %s\n",
               message && *message ? message : what);
  std::exit(1);
}

/// A device buffer of n floats: random in [-1, 1], or zeros.
float *deviceFloats(size_t n, unsigned seed, bool random = true) {
  std::vector<float> host(n, 0.0f);
  if (random) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (float &value : host)
      value = uniform(generator);
  }
  void *device = nullptr;
  check(txrt_cuda_malloc(context, n * sizeof(float), &device),
        "txrt_cuda_malloc");
  check(txrt_cuda_copy_to_device(context, device, host.data(),
                                 n * sizeof(float)),
        "txrt_cuda_copy_to_device");
  return static_cast<float *>(device);
}

/// The median over `repeat` rounds of one call's milliseconds.
double medianMs(const Options &options, const std::function<void()> &call) {
  for (int i = 0; i < options.warmup; ++i)
    call();
  check(txrt_cuda_synchronize(context), "txrt_cuda_synchronize");
  std::vector<double> times;
  for (int i = 0; i < options.repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    call();
    check(txrt_cuda_synchronize(context), "txrt_cuda_synchronize");
    times.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  const Options o = parse(argc, argv);
  check(txrt_cuda_context_create(0, &context), "txrt_cuda_context_create");
  const int64_t width = o.heads * o.headDim, rows = o.batch * o.length;
  float *q = deviceFloats(rows * width, 1), *k = deviceFloats(rows * width, 2),
        *v = deviceFloats(rows * width, 3), *dO = deviceFloats(rows * width, 4);
  float *out = deviceFloats(rows * width, 0, false),
        *lse = deviceFloats(o.batch * o.heads * o.length, 0, false),
        *dq = deviceFloats(rows * width, 0, false),
        *dk = deviceFloats(rows * width, 0, false),
        *dv = deviceFloats(rows * width, 0, false);
  const float scale = 1.0f / std::sqrt(float(o.headDim));
  const int64_t t = o.length, d = o.headDim, h = o.heads;
  auto forward = [&] {
    check(txrt_cuda_attention_fwd(context, 0, o.batch, h, h, t, t, d, q, width,
                                  k, width, v, width, out, width, lse, nullptr,
                                  0, 0, 0, 0, 1, scale, -INFINITY, 0.0f, 0, 0),
          "txrt_cuda_attention_fwd");
  };
  auto backward = [&] {
    check(txrt_cuda_attention_bwd(context, 1, 0, o.batch, h, h, t, t, d, q,
                                  width, k, width, v, width, out, width, lse,
                                  dO, width, dq, width, dk, width, dv, width,
                                  nullptr, 0, 0, 0, 0, 1, scale, -INFINITY,
                                  0.0f, 0, 0),
          "txrt_cuda_attention_bwd");
  };
  const char *kernels = std::getenv("TXRT_CUDA_ATTENTION");
  std::printf("# B=%lld heads=%lld T=%lld head_dim=%lld causal, fp32, %s "
              "kernels\n",
              (long long)o.batch, (long long)h, (long long)t, (long long)d,
              kernels && *kernels ? kernels : "tensor-core");
  std::printf("txc_attention_fwd_ms %.4f\n", medianMs(o, forward));
  forward();
  std::printf("txc_attention_bwd_ms %.4f\n", medianMs(o, backward));
  for (float *buffer : {q, k, v, dO, out, lse, dq, dk, dv})
    txrt_cuda_free(context, buffer);
  txrt_cuda_context_destroy(context);
  return 0;
}
