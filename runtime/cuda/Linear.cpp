//===- Linear.cpp - linear layers through cuBLASLt -------------------------===//
//
// Row-major [m, n] is column-major [n, m], so y = x w^T is computed as the
// column-major y^T = w x^T: A = w (stored k x n, transposed), B = x^T
// (stored k x m). The bias of cuBLASLt's epilogue runs along D's rows, which
// are y's columns, as nn.Linear's bias does. Strict fp32
// (CUBLAS_COMPUTE_32F) unless the context allows TF32.
//
//===----------------------------------------------------------------------===//
#include "CublasLt.h"
#include "CudaContext.h"
#include "Kernels.h"

using namespace txrt::cuda;

namespace {

/// A column-major GEMM D = alpha op(A) op(B) + beta C (C = D) with an
/// epilogue: D is rows x cols, op(A) rows x inner, op(B) inner x cols.
struct Gemm {
  int64_t rows, cols, inner;
  const float *a;
  int64_t lda;
  bool transA;
  const float *b;
  int64_t ldb;
  bool transB;
  float *d;
  int64_t ldd;
  float beta = 0.0f;
  float alpha = 1.0f;
  const float *c = nullptr; ///< NULL: D's old value when beta != 0
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const float *bias = nullptr;
};

/// RAII for the descriptors of one call.
struct Descriptors {
  const CublasLtApi &api;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  ~Descriptors() {
    if (preference)
      api.preferenceDestroy(preference);
    for (cublasLtMatrixLayout_t layout : {a, b, d})
      if (layout)
        api.layoutDestroy(layout);
    if (op)
      api.descDestroy(op);
  }
};

/// Runs `g` with the first `workspaceBytes` of the context's workspace
/// (all of it by default).
void runGemm(txrt_cuda_context &ctx, const Gemm &g, size_t workspaceBytes = 0) {
  if (workspaceBytes == 0)
    workspaceBytes = ctx.workspaceBytes;
  const CublasLtApi &api = cublasLt();
  Descriptors desc{api};
  cublasComputeType_t compute =
      ctx.allowTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  checkCublas(api.descCreate(&desc.op, compute, CUDA_R_32F),
              "cublasLtMatmulDescCreate");
  cublasOperation_t opA = g.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = g.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  checkCublas(api.descSetAttribute(desc.op, CUBLASLT_MATMUL_DESC_TRANSA, &opA,
                                   sizeof(opA)),
              "CUBLASLT_MATMUL_DESC_TRANSA");
  checkCublas(api.descSetAttribute(desc.op, CUBLASLT_MATMUL_DESC_TRANSB, &opB,
                                   sizeof(opB)),
              "CUBLASLT_MATMUL_DESC_TRANSB");
  checkCublas(api.descSetAttribute(desc.op, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                   &g.epilogue, sizeof(g.epilogue)),
              "CUBLASLT_MATMUL_DESC_EPILOGUE");
  if (g.bias)
    checkCublas(api.descSetAttribute(desc.op,
                                     CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                     &g.bias, sizeof(g.bias)),
                "CUBLASLT_MATMUL_DESC_BIAS_POINTER");
  // Stored shapes: op(X) = X^T means X is stored transposed.
  checkCublas(api.layoutCreate(&desc.a, CUDA_R_32F,
                               g.transA ? g.inner : g.rows,
                               g.transA ? g.rows : g.inner, g.lda),
              "cublasLtMatrixLayoutCreate(A)");
  checkCublas(api.layoutCreate(&desc.b, CUDA_R_32F,
                               g.transB ? g.cols : g.inner,
                               g.transB ? g.inner : g.cols, g.ldb),
              "cublasLtMatrixLayoutCreate(B)");
  checkCublas(api.layoutCreate(&desc.d, CUDA_R_32F, g.rows, g.cols, g.ldd),
              "cublasLtMatrixLayoutCreate(D)");
  checkCublas(api.preferenceCreate(&desc.preference),
              "cublasLtMatmulPreferenceCreate");
  uint64_t workspace = workspaceBytes;
  checkCublas(api.preferenceSetAttribute(
                  desc.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                  &workspace, sizeof(workspace)),
              "CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES");
  cublasLtMatmulHeuristicResult_t heuristic = {};
  int found = 0;
  auto handle = reinterpret_cast<cublasLtHandle_t>(ctx.lt);
  checkCublas(api.algoGetHeuristic(handle, desc.op, desc.a, desc.b, desc.d,
                                   desc.d, desc.preference, 1, &heuristic,
                                   &found),
              "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0)
    throw CudaError(TXRT_ERROR_BACKEND,
                    "cuBLASLt has no algorithm for this GEMM");
  const float *c = g.c ? g.c : g.d;
  checkCublas(api.matmul(handle, desc.op, &g.alpha, g.a, desc.a, g.b, desc.b,
                         &g.beta, c, desc.d, g.d, desc.d, &heuristic.algo,
                         ctx.workspace, workspaceBytes, ctx.stream),
              "cublasLtMatmul");
}

} // namespace

extern "C" {

txrt_status txrt_cuda_linear_fwd(txrt_cuda_context *ctx, int64_t site,
                                 int64_t m, int64_t n, int64_t k,
                                 const float *x, const float *w,
                                 const float *bias, int32_t activation,
                                 const float *residual, float *y) {
  return runCuda(ctx, "txrt_cuda_linear_fwd", [&](txrt_cuda_context &c) {
    require(m >= 0 && n >= 0 && k >= 0, "m, n and k must be non-negative");
    require(activation >= TXRT_ACTIVATION_NONE &&
                activation <= TXRT_ACTIVATION_SILU,
            "unknown activation");
    if (m == 0 || n == 0)
      return;
    require(y, "y must not be NULL");
    if (k == 0) {
      // An empty product: y = act(bias) + residual.
      check(cudaMemsetAsync(y, 0, size_t(m * n) * sizeof(float), c.stream),
            "cudaMemsetAsync");
      launchEpilogue(c.stream, m, n, y, bias, activation, nullptr, residual);
      return;
    }
    require(x && w, "x and w must not be NULL");
    Gemm g{n, m, k, w, k, true, x, k, false, y, n};
    bool epilogueDone = false;
    if (activation == TXRT_ACTIVATION_NONE) {
      g.epilogue = bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
      if (residual) {
        g.beta = 1.0f;
        g.c = residual;
      }
      epilogueDone = true;
    }
    // relu too goes to our epilogue: cuBLASLt's RELU epilogue is documented
    // as max(x, 0), which need not keep a NaN as torch.relu does.
    if (g.epilogue != CUBLASLT_EPILOGUE_DEFAULT)
      g.bias = bias;
    runGemm(c, g);
    if (epilogueDone)
      return;
    if (g.epilogue == CUBLASLT_EPILOGUE_DEFAULT)
      // GELU (exact or tanh), SiLU: bias and activation here. cuBLASLt's
      // GELU epilogue is its own tanh approximation; ours is PyTorch's
      // formula, as the CPU kernel computes it.
      launchEpilogue(c.stream, m, n, y, bias, activation, nullptr, residual);
    else if (residual)
      launchEpilogue(c.stream, m, n, y, nullptr, TXRT_ACTIVATION_NONE,
                     nullptr, residual);
  });
}

txrt_status txrt_cuda_linear_gated_fwd(txrt_cuda_context *ctx, int64_t site,
                                       int64_t m, int64_t n, int64_t k,
                                       const float *x, const float *w,
                                       const float *bias, int32_t activation,
                                       const float *gate,
                                       const float *residual, float *y) {
  return runCuda(ctx, "txrt_cuda_linear_gated_fwd", [&](txrt_cuda_context &c) {
    require(m >= 0 && n >= 0 && k >= 0, "m, n and k must be non-negative");
    require(activation >= TXRT_ACTIVATION_NONE &&
                activation <= TXRT_ACTIVATION_SILU,
            "unknown activation");
    if (m == 0 || n == 0)
      return;
    require(y && gate, "y and gate must not be NULL");
    require(y != gate, "y must not be the gate");
    // y may be the residual: the product goes to the workspace first.
    require(size_t(m * n) * sizeof(float) <= c.workspaceBytes / 2,
            "m * n over half the workspace (16 MiB)");
    float *product = static_cast<float *>(c.workspace) +
                     c.workspaceBytes / 2 / sizeof(float);
    if (k == 0) {
      check(cudaMemsetAsync(product, 0, size_t(m * n) * sizeof(float),
                            c.stream),
            "cudaMemsetAsync");
    } else {
      require(x && w, "x and w must not be NULL");
      Gemm g{n, m, k, w, k, true, x, k, false, product, n};
      runGemm(c, g, c.workspaceBytes / 2);
    }
    launchEpilogue(c.stream, m, n, product, bias, activation, gate, residual);
    check(cudaMemcpyAsync(y, product, size_t(m * n) * sizeof(float),
                          cudaMemcpyDeviceToDevice, c.stream),
          "cudaMemcpyAsync");
  });
}

txrt_status txrt_cuda_matmul(txrt_cuda_context *ctx, int64_t site,
                             int64_t batch0, int64_t batch1, int64_t m,
                             int64_t n, int64_t k, const float *a,
                             const int64_t *a_strides, const float *b,
                             const int64_t *b_strides, float *c,
                             const int64_t *c_strides, const float *bias,
                             int32_t activation, const float *residual,
                             float alpha, float beta) {
  return runCuda(ctx, "txrt_cuda_matmul", [&](txrt_cuda_context &cx) {
    require(batch0 >= 0 && batch1 >= 0 && m >= 0 && n >= 0 && k >= 0,
            "sizes must be non-negative");
    require(activation >= TXRT_ACTIVATION_NONE &&
                activation <= TXRT_ACTIVATION_SILU,
            "unknown activation");
    if (batch0 == 0 || batch1 == 0 || m == 0 || n == 0)
      return;
    require(c && c_strides, "c and c_strides must not be NULL");
    const int64_t perBatch = m * n, total = batch0 * batch1 * perBatch;
    // alpha A.B of every batch, dense [batch0 * batch1, m, n], in the second
    // half of the workspace; the first half is cuBLASLt's.
    require(size_t(total) * sizeof(float) <= cx.workspaceBytes / 2,
            "batch0 * batch1 * m * n over 4M floats (the workspace's half)");
    float *product = static_cast<float *>(cx.workspace) +
                     cx.workspaceBytes / 2 / sizeof(float);
    if (k == 0) { // as the CPU kernel: the epilogue of a zero product
      check(
          cudaMemsetAsync(product, 0, size_t(total) * sizeof(float), cx.stream),
          "cudaMemsetAsync");
      launchStridedEpilogue(cx.stream, batch0, batch1, m, n, product, c,
                            c_strides, bias, activation, residual, beta);
      return;
    }
    require(a && b, "a and b must not be NULL");
    require(a_strides && b_strides, "strides must not be NULL");
    require(a_strides[2] == 1 || a_strides[3] == 1,
            "a: the row or the column stride must be 1");
    require(b_strides[2] == 1 || b_strides[3] == 1,
            "b: the row or the column stride must be 1");
    // Column-major: product^T [n x m] (ld n) = op(B^T) [n x k] . op(A^T)
    // [k x m]. B^T is B stored row-major (column stride 1, ld = row stride)
    // or B column-major transposed; likewise A^T.
    auto layout = [](const int64_t *strides, int64_t rows, int64_t cols,
                     bool &transposed, int64_t &ld) {
      if (strides[3] == 1) { // row-major: X^T column-major
        transposed = false;
        ld = rows > 1 ? strides[2] : cols;
      } else { // column-major X: transpose it
        transposed = true;
        ld = cols > 1 ? strides[3] : rows;
      }
    };
    bool transB, transA;
    int64_t ldb, lda;
    layout(b_strides, k, n, transB, ldb);
    layout(a_strides, m, k, transA, lda);
    for (int64_t i0 = 0; i0 < batch0; ++i0) {
      for (int64_t i1 = 0; i1 < batch1; ++i1) {
        const float *aBatch = a + i0 * a_strides[0] + i1 * a_strides[1];
        const float *bBatch = b + i0 * b_strides[0] + i1 * b_strides[1];
        float *out = product + (i0 * batch1 + i1) * perBatch;
        Gemm g{n, m, k, bBatch, ldb, transB, aBatch, lda, transA, out, n};
        g.alpha = alpha;
        runGemm(cx, g, cx.workspaceBytes / 2);
      }
    }
    launchStridedEpilogue(cx.stream, batch0, batch1, m, n, product, c,
                          c_strides, bias, activation, residual, beta);
  });
}

txrt_status txrt_cuda_linear_bwd(txrt_cuda_context *ctx, int64_t site,
                                 int64_t m, int64_t n, int64_t k,
                                 const float *x, const float *w,
                                 const float *dy, float *dx, float *dw,
                                 float *dbias, int32_t accumulate_dx,
                                 int32_t accumulate_params) {
  return runCuda(ctx, "txrt_cuda_linear_bwd", [&](txrt_cuda_context &c) {
    require(m >= 0 && n >= 0 && k >= 0, "m, n and k must be non-negative");
    auto zero = [&](float *p, int64_t count) {
      check(cudaMemsetAsync(p, 0, size_t(count) * sizeof(float), c.stream),
            "cudaMemsetAsync");
    };
    if (dx && m * k > 0) {
      if (n == 0) {
        if (!accumulate_dx)
          zero(dx, m * k);
      } else {
        require(dy && w, "dy and w must not be NULL");
        // dx^T [k, m] = w^T [k, n] . dy^T [n, m]
        Gemm g{k, m, n, w, k, false, dy, n, false, dx, k};
        g.beta = accumulate_dx ? 1.0f : 0.0f;
        runGemm(c, g);
      }
    }
    if (dw && n * k > 0) {
      if (m == 0) {
        if (!accumulate_params)
          zero(dw, n * k);
      } else {
        require(dy && x, "dy and x must not be NULL");
        // dw^T [k, n] = x^T [k, m] . dy [m, n]
        Gemm g{k, n, m, x, k, false, dy, n, true, dw, k};
        g.beta = accumulate_params ? 1.0f : 0.0f;
        runGemm(c, g);
      }
    }
    if (dbias && n > 0) {
      require(m == 0 || dy, "dy must not be NULL");
      launchColumnSum(c.stream, m, n, dy, dbias, accumulate_params != 0);
    }
  });
}

} // extern "C"
