//===- MatmulLimit.cpp - the matmul-bound time of a logged run ------------===//
//
// txrt-matmul-limit reads a ONEDNN_VERBOSE=1 log (stdin) of a run of N
// steps and prints, for the step's matmul shapes exactly as executed, the
// time bare dnnl_sgemm takes for them (same M, N, K and transposes, fastest
// of --reps repetitions, on $TXRT_NUM_THREADS threads): the step's
// matmul-bound limit. Its operands are on transparent huge pages, as the
// executable's arenas are (unless TXRT_HUGE_PAGES=0, as there). It also counts the matmuls oneDNN ran on an
// implementation other than brgemm (e.g. the `gemm:jit` fallback) and, with
// --require-brgemm, exits 1 naming them (on a CPU where oneDNN ran no
// brgemm matmul at all, e.g. AVX2 only, gemm:jit is the best it has and
// nothing is flagged). Output, one line each:
//   shape <MxK:KxN> <transA><transB> calls <n> sgemm <ms> ms  (per call)
//   matmul-limit <ms> ms per step (<calls> matmuls per step)
//   fallbacks <n> [<impl> <shape> ...]
//
//===----------------------------------------------------------------------===//
#include <dnnl.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace {

/// `count` floats set to `value`, 2 MiB aligned and marked MADV_HUGEPAGE
/// before the first touch, as the driver's arenas (runtime/driver/core/
/// Tensor.cpp): the limit must not run on better pages than the step.
class Operand {
public:
  Operand(size_t count, float value) : bytes_(count * sizeof(float)) {
    constexpr size_t kHuge = size_t(2) << 20;
    size_t rounded = (bytes_ + kHuge - 1) / kHuge * kHuge;
    data_ = static_cast<float *>(std::aligned_alloc(kHuge, rounded));
    if (!data_) {
      std::fprintf(stderr, "error: cannot allocate %zu bytes\n", rounded);
      std::exit(1);
    }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const char *huge = std::getenv("TXRT_HUGE_PAGES");
    if (!huge || std::strcmp(huge, "0") != 0)
      (void)madvise(data_, rounded, MADV_HUGEPAGE);
#endif
    std::fill(data_, data_ + count, value);
  }
  ~Operand() { std::free(data_); }
  Operand(const Operand &) = delete;
  Operand &operator=(const Operand &) = delete;
  float *data() { return data_; }

private:
  size_t bytes_;
  float *data_;
};

struct Shape {
  long m = 0, n = 0, k = 0, batch = 1;
  bool transA = false, transB = false;
  bool operator<(const Shape &o) const {
    return std::tie(m, n, k, batch, transA, transB) <
           std::tie(o.m, o.n, o.k, o.batch, o.transA, o.transB);
  }
};

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> parts;
  std::stringstream stream(s);
  std::string part;
  while (std::getline(stream, part, sep))
    parts.push_back(part);
  return parts;
}

/// Whether the memory descriptor of `arg` (e.g. "src_f32::blocked:ba:f0")
/// in the descriptor field has its last two dims swapped.
bool transposed(const std::string &descs, const std::string &arg) {
  size_t at = descs.find(arg + "_f32::blocked:");
  if (at == std::string::npos)
    return false;
  std::string tag = descs.substr(at + arg.size() + 14);
  tag = tag.substr(0, tag.find(':'));
  return tag.size() >= 2 && tag[tag.size() - 1] < tag[tag.size() - 2];
}

/// "AxBxMxK:...:..." -> the product of the leading dims and M, K.
bool parseDims(const std::string &s, long &batch, long &rows, long &cols) {
  std::vector<std::string> dims = split(s, 'x');
  if (dims.size() < 2)
    return false;
  batch = 1;
  for (size_t i = 0; i + 2 < dims.size(); ++i)
    batch *= std::atol(dims[i].c_str());
  rows = std::atol(dims[dims.size() - 2].c_str());
  cols = std::atol(dims.back().c_str());
  return rows > 0 && cols > 0;
}

double timeSgemm(const Shape &s, int reps) {
  Operand a(size_t(s.m) * s.k, 0.5f), b(size_t(s.k) * s.n, 0.25f),
      c(size_t(s.m) * s.n, 0.0f);
  const long lda = s.transA ? s.m : s.k, ldb = s.transB ? s.k : s.n;
  double best = 1e30;
  for (int r = 0; r < reps + 1; ++r) { // the first run warms up
    auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < s.batch; ++i)
      dnnl_sgemm(s.transA ? 'T' : 'N', s.transB ? 'T' : 'N', s.m, s.n, s.k,
                 1.0f, a.data(), lda, b.data(), ldb, 0.0f, c.data(), s.n);
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    if (r > 0)
      best = std::min(best, ms);
  }
  return best;
}

} // namespace

int main(int argc, char **argv) {
  int steps = 1, reps = 5;
  bool requireBrgemm = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--steps" && i + 1 < argc)
      steps = std::atoi(argv[++i]);
    else if (arg == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (arg == "--require-brgemm")
      requireBrgemm = true;
    else {
      std::fprintf(stderr,
                   "error: unknown argument '%s' (usage: txrt-matmul-limit "
                   "[--steps N] [--reps R] [--require-brgemm] < verbose.log)\n",
                   argv[i]);
      return 2;
    }
  }
  if (steps < 1 || reps < 1) {
    std::fprintf(stderr, "error: --steps and --reps must be >= 1\n");
    return 2;
  }
  if (const char *env = std::getenv("TXRT_NUM_THREADS"))
    if (std::atoi(env) > 0)
      omp_set_num_threads(std::atoi(env));

  std::map<Shape, long> calls;
  std::map<std::string, long> fallbacks;
  long brgemmCalls = 0;
  std::string line;
  while (std::getline(std::cin, line)) {
    // onednn_verbose,exec,cpu,matmul,<impl>,undef,<descs>,<attrs>,,<dims>,ms
    std::vector<std::string> f = split(line, ',');
    if (f.size() < 11 || f[1] != "exec" || f[3] != "matmul")
      continue;
    std::vector<std::string> dims = split(f[9], ':');
    Shape s;
    long kRows, n;
    if (dims.size() < 2 || !parseDims(dims[0], s.batch, s.m, s.k) ||
        !parseDims(dims[1], kRows, kRows, n))
      continue;
    s.n = n;
    s.transA = transposed(f[6], "src");
    s.transB = transposed(f[6], "wei");
    ++calls[s];
    if (f[4].rfind("brg:", 0) == 0)
      ++brgemmCalls;
    else
      ++fallbacks[f[4] + " " + f[9]];
  }
  if (calls.empty()) {
    std::fprintf(stderr, "error: no oneDNN matmul in the log on stdin (run "
                         "the step with ONEDNN_VERBOSE=1)\n");
    return 2;
  }
  double total = 0;
  long count = 0;
  for (const auto &[s, n] : calls) {
    double ms = timeSgemm(s, reps);
    std::printf("shape %ldx%ldx%ld:%ldx%ld %c%c calls %ld sgemm %.3f ms\n",
                s.batch, s.m, s.k, s.k, s.n, s.transA ? 'T' : 'N',
                s.transB ? 'T' : 'N', n, ms);
    total += ms * double(n);
    count += n;
  }
  std::printf("matmul-limit %.3f ms per step (%ld matmuls per step)\n",
              total / steps, count / steps);
  if (brgemmCalls == 0) {
    // Without AVX-512 oneDNN 2.6 has no brgemm matmul: gemm:jit is its best.
    std::printf("fallbacks n/a (no brgemm matmul on this CPU)\n");
    return 0;
  }
  long fallbackCount = 0;
  for (const auto &[what, n] : fallbacks)
    fallbackCount += n;
  std::printf("fallbacks %ld", fallbackCount / steps);
  for (const auto &[what, n] : fallbacks)
    std::printf(" [%ldx %s]", n / steps, what.c_str());
  std::printf("\n");
  if (requireBrgemm && fallbackCount) {
    std::fprintf(stderr,
                 "error: %ld matmuls per step ran on a fallback "
                 "implementation instead of brgemm\n",
                 fallbackCount / steps);
    return 1;
  }
  return 0;
}
