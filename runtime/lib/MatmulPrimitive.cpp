//===- MatmulPrimitive.cpp - oneDNN matmuls on strided views --------------===//
//
// Batch dimensions of size 1 are dropped; a batch stride of 0 becomes a
// broadcast dimension of size 1 (oneDNN broadcasts src/weights batch dims).
// Epilogue: output scale alpha, bias, then post-ops eltwise(act) ->
// binary_add(residual) -> sum(beta). oneDNN applies the output scale to the
// bias too, so a bias under alpha != 1 is a binary_add post-op instead.
// MatmulPlan adds the split over k for products oneDNN parallelises badly.
//
//===----------------------------------------------------------------------===//
#include "MatmulPrimitive.h"
#include "Kernel.h"

#include <omp.h>

#include <algorithm>
#include <vector>

using namespace txrt;

void MatmulSpec::appendTo(CacheKey &key) const {
  key << batch0 << batch1 << m << n << k;
  for (const auto *strides : {&aStrides, &bStrides, &cStrides})
    for (int64_t s : *strides)
      key << s;
  key << int64_t(hasBias) << int64_t(activation) << int64_t(hasGate)
      << int64_t(hasResidual) << alpha << beta << int64_t(bf16)
      << int64_t(packedB);
}

void txrt::requireActivation(int32_t activation) {
  require(activation >= TXRT_ACTIVATION_NONE &&
              activation <= TXRT_ACTIVATION_SILU,
          "unknown activation " + std::to_string(activation));
}

dnnl::algorithm txrt::eltwiseAlgorithm(int32_t activation) {
  switch (activation) {
  case TXRT_ACTIVATION_RELU:
    return dnnl::algorithm::eltwise_relu;
  case TXRT_ACTIVATION_GELU:
    return dnnl::algorithm::eltwise_gelu_erf;
  case TXRT_ACTIVATION_GELU_TANH:
    return dnnl::algorithm::eltwise_gelu_tanh;
  case TXRT_ACTIVATION_SILU:
    return dnnl::algorithm::eltwise_swish;
  default:
    throw Error(TXRT_ERROR_INVALID_ARGUMENT,
                "unknown activation " + std::to_string(activation));
  }
}

namespace {

/// The descriptor of one operand: rows x cols per matrix, batch dims kept
/// where the batch is > 1 (as 1 where the operand's batch stride is 0).
memory::desc operandDesc(const MatmulSpec &spec,
                         const std::array<int64_t, 4> &strides, int64_t rows,
                         int64_t cols,
                         memory::data_type type = memory::data_type::f32) {
  Dims dims, dimStrides;
  const int64_t batches[2] = {spec.batch0, spec.batch1};
  for (int i = 0; i < 2; ++i) {
    if (batches[i] == 1)
      continue;
    dims.push_back(strides[i] == 0 ? 1 : batches[i]);
    dimStrides.push_back(strides[i] == 0 ? 1 : strides[i]);
  }
  dims.push_back(rows);
  dims.push_back(cols);
  dimStrides.push_back(strides[2]);
  dimStrides.push_back(strides[3]);
  // oneDNN wants a consistent stride for a size-1 dim; any value is allowed
  // but keep them plausible (>= the extent of the inner dims).
  for (size_t i = 0; i + 2 < dims.size(); ++i)
    if (dims[i] == 1)
      dimStrides[i] = rows * cols;
  return memory::desc(dims, type, dimStrides);
}

/// The type of A and B (C, bias, gate and residual are f32).
memory::data_type inputType(const MatmulSpec &spec) {
  return spec.bf16 ? memory::data_type::bf16 : memory::data_type::f32;
}

int batchRank(const MatmulSpec &spec) {
  return (spec.batch0 > 1) + (spec.batch1 > 1);
}

} // namespace

Primitive txrt::makeMatmulPrimitive(Context &ctx, const MatmulSpec &spec,
                                    int threadSlots, memory::desc *bLayout) {
  for (const auto *strides : {&spec.aStrides, &spec.bStrides, &spec.cStrides})
    require((*strides)[2] == 1 || (*strides)[3] == 1,
            "each matrix needs a unit row or column stride");
  require((spec.batch0 == 1 || spec.cStrides[0] != 0) &&
              (spec.batch1 == 1 || spec.cStrides[1] != 0),
          "the output cannot be broadcast over a batch dimension");
  requireActivation(spec.activation);

  const memory::data_type inputs = inputType(spec);
  memory::desc a = operandDesc(spec, spec.aStrides, spec.m, spec.k, inputs);
  memory::desc b =
      spec.packedB && batchRank(spec) == 0
          ? memory::desc({spec.k, spec.n}, inputs, memory::format_tag::any)
          : operandDesc(spec, spec.bStrides, spec.k, spec.n, inputs);
  memory::desc c = operandDesc(spec, spec.cStrides, spec.m, spec.n);

  // oneDNN scales the bias together with the product (alpha * (A.B +
  // bias)); with alpha != 1 the bias becomes the first post-op instead.
  const bool biasPostOp = spec.hasBias && spec.alpha != 1.0f;
  Dims biasDims(batchRank(spec) + 2, 1);
  biasDims.back() = spec.n;

  dnnl::primitive_attr attr = userScratchpadAttr();
  if (spec.alpha != 1.0f)
    attr.set_output_scales(0, {spec.alpha});
  dnnl::post_ops ops;
  int postOps = 0, biasIndex = -1, gateIndex = -1, residualIndex = -1;
  if (biasPostOp) {
    ops.append_binary(dnnl::algorithm::binary_add, denseDesc(biasDims));
    biasIndex = postOps++;
  }
  if (spec.activation != TXRT_ACTIVATION_NONE)
    postOps += appendActivation(ops, spec.activation);
  if (spec.hasGate) {
    ops.append_binary(dnnl::algorithm::binary_mul, c);
    gateIndex = postOps++;
  }
  if (spec.hasResidual) {
    ops.append_binary(dnnl::algorithm::binary_add, c);
    residualIndex = postOps++;
  }
  if (spec.beta != 0.0f)
    ops.append_sum(spec.beta);
  attr.set_post_ops(ops);

  std::vector<int> args = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
  dnnl::matmul::primitive_desc pd;
  try {
    if (spec.hasBias && !biasPostOp) {
      dnnl::matmul::desc desc(a, b, denseDesc(biasDims), c);
      pd = dnnl::matmul::primitive_desc(desc, attr, ctx.engine());
      args.push_back(DNNL_ARG_BIAS);
    } else {
      dnnl::matmul::desc desc(a, b, c);
      pd = dnnl::matmul::primitive_desc(desc, attr, ctx.engine());
    }
  } catch (const dnnl::error &) {
    // oneDNN has bf16 products only on AVX-512 CPUs; a program embedding a
    // --precision=bf16 object elsewhere got "could not create a primitive
    // descriptor iterator" (the executable's driver says this up front).
    if (spec.bf16 && !txrt_cpu_has_bf16())
      throw Error(TXRT_ERROR_BACKEND,
                  "bf16 products need a CPU with avx512_bf16 or amx_bf16, "
                  "and this one has neither (txrt_cpu_has_bf16() is 0); "
                  "compile the model with --precision=fp32");
    throw;
  }
  if (bLayout)
    *bLayout = pd.weights_desc();
  if (biasPostOp)
    args.push_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(biasIndex) | DNNL_ARG_SRC_1);
  if (spec.hasGate)
    args.push_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(gateIndex) | DNNL_ARG_SRC_1);
  if (spec.hasResidual)
    args.push_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(residualIndex) |
                   DNNL_ARG_SRC_1);
  return Primitive(ctx, pd, std::move(args), threadSlots);
}

//===----------------------------------------------------------------------===//
// MatmulPlan
//===----------------------------------------------------------------------===//

float txrt::eltwiseAlpha(int32_t activation) {
  return activation == TXRT_ACTIVATION_SILU ? 1.0f : 0.0f;
}

void txrt::columnSum(Context &ctx, const float *dy, int64_t rows, int64_t cols,
                     float *db, bool accumulate) {
  constexpr int64_t kChunk = 256;
  const int64_t chunks = (cols + kChunk - 1) / kChunk;
  const int threads = ctx.numThreads();
  // Few columns over many rows (a narrow linear): the rows are split among
  // the threads, each summing every column, then the partial sums added.
  const int64_t slices =
      chunks >= threads || rows < 4096 ? 1 : std::min<int64_t>(threads, rows);
  std::vector<double> partial(size_t(slices * chunks * kChunk), 0.0);
#pragma omp parallel for collapse(2) num_threads(threads) schedule(static)
  for (int64_t slice = 0; slice < slices; ++slice)
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      const int64_t begin = chunk * kChunk;
      const int64_t width = std::min(kChunk, cols - begin);
      const int64_t first = rows * slice / slices,
                    last = rows * (slice + 1) / slices;
      double *sums = partial.data() + (slice * chunks + chunk) * kChunk;
      for (int64_t i = first; i < last; ++i) {
        const float *row = dy + i * cols + begin;
#pragma omp simd
        for (int64_t j = 0; j < width; ++j)
          sums[j] += double(row[j]);
      }
    }
  for (int64_t j = 0; j < cols; ++j) {
    const int64_t chunk = j / kChunk, at = j % kChunk;
    double sum = accumulate ? double(db[j]) : 0.0;
    for (int64_t slice = 0; slice < slices; ++slice)
      sum += partial[size_t((slice * chunks + chunk) * kChunk + at)];
    db[j] = float(sum);
  }
}

int txrt::appendActivation(dnnl::post_ops &ops, int32_t activation) {
  if (activation != TXRT_ACTIVATION_RELU) {
    ops.append_eltwise(1.0f, eltwiseAlgorithm(activation),
                       eltwiseAlpha(activation), 0.0f);
    return 1;
  }
  // oneDNN's ReLU with alpha 0 is max(s, 0), which turns a NaN into 0 where
  // torch.relu (and the unfused tx.relu) keep it. ELU with alpha 0 is
  // `s > 0 ? s : 0 * (exp(s) - 1)`: s, NaN kept, and -0 for s < 0, which
  // the `1 * s + 0` after it makes +0. The exp costs about 4 % of a
  // 512x512x2048 product on one Zen 1 thread.
  ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_elu, 0.0f, 0.0f);
  ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, 1.0f, 0.0f);
  return 2;
}

namespace {

/// Whether to split k: a single product, no epilogue besides beta, k much
/// larger than the output's sides, at least 256 of k per thread, and an
/// output too small to give every thread 4 of brgemm's 32x64 blocks. A
/// larger output keeps the whole product: oneDNN parallelises it well, and
/// its k slices (A with a row stride wider than the slice) would fall back
/// from brgemm to gemm:jit (base.tx's 512x2048.2048x512 data gradients ran
/// no faster split on Zen 4).
bool splitsK(const Context &ctx, const MatmulSpec &spec) {
  const int64_t outputBlocks = ((spec.m + 31) / 32) * ((spec.n + 63) / 64);
  return ctx.numThreads() > 1 && !spec.bf16 && spec.batch0 == 1 &&
         spec.batch1 == 1 &&
         !spec.hasBias && spec.activation == TXRT_ACTIVATION_NONE &&
         !spec.hasGate && !spec.hasResidual &&
         spec.k >= 4 * std::max(spec.m, spec.n) &&
         spec.k >= 256 * ctx.numThreads() &&
         outputBlocks < 4 * ctx.numThreads();
}

/// Whether `layout` is a dense row- or column-major matrix with no blocks.
/// oneDNN's gemm-based matmul (CPUs without AVX-512: no brgemm) asks for
/// such a layout when given `any`: the weights' copy would then be their
/// transpose, which runs no faster here (AMD Zen 3: the two orders within
/// the noise at m = 512, the weights' own one faster at m = 8), costs the
/// weights' memory again, and sums in another order than the training
/// forward (a 1e-5 difference between the inference and training logits).
bool isPlainLayout(const memory::desc &layout) {
  const dnnl_memory_desc_t &d = layout.data;
  return d.format_kind == dnnl_blocked &&
         d.format_desc.blocking.inner_nblks == 0 && d.extra.flags == 0;
}

} // namespace

MatmulPlan::MatmulPlan(Context &ctx, const MatmulSpec &spec) : spec_(spec) {
  if (spec.packedB && spec.batch0 == 1 && spec.batch1 == 1) {
    const memory::data_type inputs = inputType(spec);
    plainB_ = operandDesc(spec, spec.bStrides, spec.k, spec.n, inputs);
    packed_ = makeMatmulPrimitive(ctx, spec, 1, &packedB_);
    hasPacked_ = packedB_ != plainB_ && !isPlainLayout(packedB_);
    if (packedB_ == plainB_) { // oneDNN reads the plain layout: nothing to pack
      whole_ = std::move(packed_);
      hasWhole_ = true;
    }
    if (!hasPacked_ && !hasWhole_) { // a transposed copy is no packing
      MatmulSpec plain = spec;
      plain.packedB = false;
      whole_ = makeMatmulPrimitive(ctx, plain);
      hasWhole_ = true;
    }
    return;
  }
  spec_.packedB = false;
  if (!splitsK(ctx, spec)) {
    whole_ = makeMatmulPrimitive(ctx, spec_);
    hasWhole_ = true;
    return;
  }
  parts_ = ctx.numThreads();
  chunk_ = (spec.k + parts_ - 1) / parts_;
  tail_ = spec.k - chunk_ * (parts_ - 1);
  ScopedMaxThreads single(1); // each part runs on one thread
  MatmulSpec part = spec;
  part.k = chunk_;
  first_ = makeMatmulPrimitive(ctx, part, ctx.numThreads());
  part.beta = 0.0f;
  part.cStrides = {0, 0, spec.n, 1}; // partials are dense
  middle_ = makeMatmulPrimitive(ctx, part, ctx.numThreads());
  part.k = tail_;
  last_ = makeMatmulPrimitive(ctx, part, ctx.numThreads());
}

void MatmulPlan::run(Context &ctx, const void *a, const void *b, float *c,
                     const float *bias, const float *residual,
                     const float *gate) {
  if (parts_ > 1) // never for bf16 (splitsK)
    return runSplit(ctx, static_cast<const float *>(a),
                    static_cast<const float *>(b), c);
  Primitive *primitive = &whole_;
  if (hasPacked_) {
    if (const void *copy = ctx.packedWeights.get(ctx.engine(), ctx.stream(),
                                                 b, plainB_, packedB_)) {
      b = copy;
      primitive = &packed_;
    } else if (!hasWhole_) { // no copy (over the budget): read B as it lies
      MatmulSpec plain = spec_;
      plain.packedB = false;
      whole_ = makeMatmulPrimitive(ctx, plain);
      hasWhole_ = true;
    }
  }
  const void *args[6] = {a, b, c};
  int count = 3;
  for (const float *extra : {bias, gate, residual})
    if (extra)
      args[count++] = extra;
  primitive->execute(ctx, args, count, /*thread=*/0);
}

void MatmulPlan::runSplit(Context &ctx, const float *a, const float *b,
                          float *c) {
  const int64_t m = spec_.m, n = spec_.n;
  // Parts 1.. write dense partial products; part 0 accumulates into C.
  float *partials = ctx.temp(0).as<float>(size_t(parts_ - 1) * m * n);
  size_t scratch =
      std::max({first_.scratchpadBytes(), middle_.scratchpadBytes(),
                last_.scratchpadBytes()});
  if (scratch)
    for (int t = 0; t < ctx.numThreads(); ++t)
      ctx.threadScratchpad(t).get(scratch);
  ParallelErrors errors;
#pragma omp parallel for num_threads(parts_) schedule(static, 1)
  for (int part = 0; part < parts_; ++part) {
    errors.capture([&] {
      const int thread = omp_get_thread_num();
      const int64_t k0 = part * chunk_;
      const float *aSlice = a + k0 * spec_.aStrides[3];
      const float *bSlice = b + k0 * spec_.bStrides[2];
      if (part == 0)
        first_.execute(ctx, {aSlice, bSlice, c}, thread);
      else
        (part == parts_ - 1 ? last_ : middle_)
            .execute(ctx, {aSlice, bSlice, partials + (part - 1) * m * n},
                     thread);
    });
  }
  errors.rethrow();
  const int64_t rowStride = spec_.cStrides[2], colStride = spec_.cStrides[3];
  const int partCount = parts_;
#pragma omp parallel for num_threads(ctx.numThreads()) schedule(static)
  for (int64_t i = 0; i < m; ++i) {
    float *cRow = c + i * rowStride;
    for (int part = 1; part < partCount; ++part) {
      const float *pRow = partials + (part - 1) * m * n + i * n;
      if (colStride == 1) {
#pragma omp simd
        for (int64_t j = 0; j < n; ++j)
          cRow[j] += pRow[j];
      } else {
        for (int64_t j = 0; j < n; ++j)
          cRow[j * colStride] += pRow[j];
      }
    }
  }
}

MatmulPlan &txrt::cachedMatmul(Context &ctx, int64_t site, Kernel kernel,
                               const MatmulSpec &spec) {
  CacheKey key(site, int32_t(kernel));
  spec.appendTo(key);
  return ctx.cached<MatmulPlan>(key, [&] { return new MatmulPlan(ctx, spec); });
}
