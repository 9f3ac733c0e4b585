//===- bench-bf16-matmul.cpp - bare oneDNN matmuls over a step's shapes ---===//
//
// Usage: bench-bf16-matmul f32|bf16 REPEAT M,N,K[,COUNT] ...
// Times oneDNN matmuls (src and weights in the given type, dst f32, primitive
// created once) over the listed shapes, each run COUNT times per repeat, and
// prints the median total in ms, the FLOPs and the primitive's
// implementation: the matmul limit a train step of those shapes can reach
// (scripts/bench-bf16.sh).
//
//===----------------------------------------------------------------------===//
#include <dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s f32|bf16 REPEAT M,N,K[,COUNT] ...\n",
                 argv[0]);
    return 2;
  }
  using dt = dnnl::memory::data_type;
  dt in = std::string(argv[1]) == "bf16" ? dt::bf16 : dt::f32;
  int repeat = std::atoi(argv[2]);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  struct Shape {
    long m, n, k, count;
    dnnl::matmul prim;
    dnnl::memory a, b, c;
  };
  std::vector<Shape> shapes;
  double flops = 0;
  for (int i = 3; i < argc; ++i) {
    Shape s{0, 0, 0, 1, {}, {}, {}, {}};
    if (std::sscanf(argv[i], "%ld,%ld,%ld,%ld", &s.m, &s.n, &s.k, &s.count) < 3)
      return 2;
    dnnl::memory::desc a({s.m, s.k}, in, dnnl::memory::format_tag::ab);
    dnnl::memory::desc b({s.k, s.n}, in, dnnl::memory::format_tag::ba);
    dnnl::memory::desc c({s.m, s.n}, dt::f32, dnnl::memory::format_tag::ab);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), engine);
    std::printf("shape %ldx%ldx%ld x%ld: %s\n", s.m, s.n, s.k, s.count,
                pd.impl_info_str());
    s.prim = dnnl::matmul(pd);
    s.a = dnnl::memory(a, engine);
    s.b = dnnl::memory(b, engine);
    s.c = dnnl::memory(c, engine);
    std::fill_n(static_cast<char *>(s.a.get_data_handle()), a.get_size(), 0x3c);
    std::fill_n(static_cast<char *>(s.b.get_data_handle()), b.get_size(), 0x3c);
    flops += 2.0 * s.m * s.n * s.k * s.count;
    shapes.push_back(std::move(s));
  }
  std::vector<double> times;
  for (int r = 0; r < repeat + 1; ++r) {
    auto start = std::chrono::steady_clock::now();
    for (Shape &s : shapes)
      for (long j = 0; j < s.count; ++j)
        s.prim.execute(stream, {{DNNL_ARG_SRC, s.a},
                                {DNNL_ARG_WEIGHTS, s.b},
                                {DNNL_ARG_DST, s.c}});
    stream.wait();
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    if (r > 0) // the first round warms up
      times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  double median = times[times.size() / 2];
  std::printf("total %.2f ms for %.3f GFLOP: %.1f GFLOP/s\n", median,
              flops * 1e-9, flops * 1e-6 / median);
  return 0;
}
