//===- MatmulPrimitive.h - oneDNN matmuls on strided views ------*- C++ -*-===//
//
// The one place that turns a strided matrix-product description (batch dims,
// {batch0, batch1, row, column} strides per operand, epilogue) into a oneDNN
// matmul primitive (MatmulPlan: how a call site runs it). Used by
// txrt_matmul and the linear kernels.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_LIB_MATMULPRIMITIVE_H
#define TXRT_LIB_MATMULPRIMITIVE_H

#include "Primitive.h"

#include <array>

namespace txrt {

/// C = act(alpha * A.B + bias) + residual + beta * C, for (batch0 x batch1)
/// matrices; see txrt_matmul in txrt.h for the exact meaning of the fields.
struct MatmulSpec {
  int64_t batch0 = 1, batch1 = 1, m = 0, n = 0, k = 0;
  std::array<int64_t, 4> aStrides{}, bStrides{}, cStrides{};
  bool hasBias = false;
  int32_t activation = TXRT_ACTIVATION_NONE;
  bool hasGate = false; // C's layout, multiplied in after the activation
  bool hasResidual = false;
  float alpha = 1.0f, beta = 0.0f;
  /// A and B are bf16 (C, bias, gate, residual stay f32; f32 accumulation).
  bool bf16 = false;
  /// B lies in the context's frozen range (PackedWeights.h): a single
  /// product reads it from a copy in the layout oneDNN prefers.
  bool packedB = false;

  /// Appends every field to a cache key.
  void appendTo(CacheKey &key) const;
};

/// Builds the primitive of `spec`. Its execute() takes, in order: a, b, c,
/// then bias (if hasBias), gate (if hasGate), residual (if hasResidual).
/// With spec.packedB (a single product) B's layout is oneDNN's choice,
/// returned in `bLayout`.
Primitive makeMatmulPrimitive(Context &ctx, const MatmulSpec &spec,
                              int threadSlots = 1,
                              memory::desc *bLayout = nullptr);

/// How one call site runs a MatmulSpec: one primitive, or, for a single
/// product whose k dwarfs m and n (e.g. the data gradient of the vocabulary
/// projection), k split across the threads. oneDNN 2.6 parallelises matmul
/// over m and n only, so there every thread would pack all of B; split, each
/// runs a single-threaded primitive on its slice of k and the partial
/// products are summed. With spec.packedB the product reads B from the
/// context's packed copy (never split: the packing was the split's reason)
/// and falls back to the plain primitive when there is no copy.
class MatmulPlan : public CacheEntry {
public:
  MatmulPlan(Context &ctx, const MatmulSpec &spec);
  /// C = the spec's product of a and b (bias, residual, gate: NULL unless
  /// the spec has them).
  void run(Context &ctx, const void *a, const void *b, float *c,
           const float *bias, const float *residual,
           const float *gate = nullptr);

  /// Whether the product is split over k (MatmulPrimitive.cpp, splitsK).
  bool splitsOverK() const { return parts_ > 1; }
  /// oneDNN's implementation of the whole product (over the packed B when
  /// there is one), or of the first k slice.
  const char *implementation() const {
    return (parts_ > 1 ? first_ : hasPacked_ ? packed_ : whole_)
        .implementation();
  }
  /// Whether the product reads B from the context's packed copy.
  bool readsPackedB() const { return hasPacked_; }

private:
  void runSplit(Context &ctx, const float *a, const float *b, float *c);

  MatmulSpec spec_;
  Primitive whole_;
  bool hasWhole_ = false;
  // spec.packedB: the primitive over the blocked B and the plain B's layout
  // the copy is made from (hasPacked_ false when oneDNN chose the plain one,
  // or a plain transpose of it: isPlainLayout in MatmulPrimitive.cpp).
  Primitive packed_;
  bool hasPacked_ = false;
  memory::desc plainB_, packedB_;
  // Split over k: `parts` slices of `chunk` (the last one `tail`); the first
  // accumulates into C with the spec's beta, the others into temporaries.
  int parts_ = 1;
  int64_t chunk_ = 0, tail_ = 0;
  Primitive first_, middle_, last_;
};

/// The cached plan of `spec` at `site` under the kernel tag `kernel`.
MatmulPlan &cachedMatmul(Context &ctx, int64_t site, Kernel kernel,
                         const MatmulSpec &spec);

/// A linear's forward, y = act(x . w^T + bias) * gate + residual (gate,
/// bias, residual optional), on f32 or (`bf16`) bf16 x and w; y is f32.
/// Counts the product's flops on `c`.
void linearForward(Context &c, int64_t site, bool bf16, int64_t m, int64_t n,
                   int64_t k, const void *x, const void *w, const float *bias,
                   int32_t activation, const float *gate,
                   const float *residual, float *y);

/// linearForward of a gated linear (txrt_linear_gated_fwd and its bf16
/// form): the gate is required and must not be y.
void gatedLinearForward(Context &c, int64_t site, bool bf16, int64_t m,
                        int64_t n, int64_t k, const void *x, const void *w,
                        const float *bias, int32_t activation,
                        const float *gate, const float *residual, float *y);

/// A linear's backward products, dx = dy . w and dw = dy^T . x (each when
/// its output is non-NULL), on f32 or (`bf16`) bf16 dy, x and w.
void linearBackwardProducts(Context &c, int64_t site, bool bf16, int64_t m,
                            int64_t n, int64_t k, const void *dy,
                            const void *x, const void *w, float *dx,
                            float *dw, bool accumulateDx,
                            bool accumulateParams);

/// A linear's backward when m, n or k is 0 (an empty batch, an empty
/// feature): a gradient that sums over nothing is zeros (left as it is when
/// accumulating), and dbias still sums dy's rows when only k is 0.
void emptyLinearBackward(Context &c, int64_t m, int64_t n, int64_t k,
                         const float *dy, float *dx, float *dw, float *dbias,
                         bool accumulateDx, bool accumulateParams);

/// Throws TXRT_ERROR_INVALID_ARGUMENT unless `activation` is a known
/// TXRT_ACTIVATION_* value.
void requireActivation(int32_t activation);

/// The oneDNN eltwise algorithm of a TXRT_ACTIVATION_* (not NONE).
dnnl::algorithm eltwiseAlgorithm(int32_t activation);

/// The eltwise algorithm's alpha for a TXRT_ACTIVATION_* (swish's is 1).
float eltwiseAlpha(int32_t activation);

/// db[j] (+)= sum_i dy[i, j] over dy [rows, cols]: a linear's bias
/// gradient. Summed in double, rounded once: a running f32 sum was 1 %
/// off at 2^20 rows of a constant gradient (torch's f32 cascade: 1e-6).
void columnSum(Context &ctx, const float *dy, int64_t rows, int64_t cols,
               float *db, bool accumulate);

/// Appends a TXRT_ACTIVATION_* (not NONE) to `ops` as torch computes it
/// (relu keeps a NaN); returns the number of post-ops appended.
int appendActivation(dnnl::post_ops &ops, int32_t activation);

} // namespace txrt

#endif // TXRT_LIB_MATMULPRIMITIVE_H
