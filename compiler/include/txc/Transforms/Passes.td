//===- Passes.td - txc passes -------------------------------*- tablegen -*-===//
//
// Every txc pass is declared here and implemented in one file named after it
// (without the Pass suffix): in compiler/lib/Transforms, or in
// compiler/lib/Conversion (tx-lower-entries) and compiler/lib/CodeGen (the
// lowering to LLVM's own passes).
//
//===----------------------------------------------------------------------===//
#ifndef TXC_TRANSFORMS_PASSES_TD
#define TXC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ShapeCheckPass : Pass<"tx-shape-check", "mlir::ModuleOp"> {
  let summary = "checks that entries are well-formed tx programs";
  let description = [{
    Re-infers the result type of every tx op and checks it against the IR,
    checks that every `tx.param` names a `tx.parameter` of the same type,
    that every entry (`func.func` with `tx.entry`) returns ranked tensors,
    and that symbolic dimensions with the same symbol carry the same bound
    throughout the module. Runs after the frontend and after every rewrite.
  }];
}

def StripDropoutPass : Pass<"tx-strip-dropout", "mlir::ModuleOp"> {
  let summary = "removes tx.dropout from entries that do not train";
  let description = [{
    Dropout is the identity outside training. This pass replaces every
    `tx.dropout` in an entry whose `tx.entry` kind is not `train` (and in
    every entry when `all` is set) by its input, and sets the `dropout` of
    their fused `tx.attention` ops to 0.
  }];
  let options = [
    Option<"all", "all", "bool", /*default=*/"false",
           "also strip dropout from train entries">,
  ];
}

def FuseAttentionPass : Pass<"tx-fuse-attention", "mlir::ModuleOp"> {
  let summary = "fuses scaled dot-product attention into tx.attention";
  let description = [{
    First, rotary embeddings written out, `x * cos(emb) + rotate_half(x) *
    sin(emb)` with `emb = concat(F, F)` and `rotate_half(x) =
    concat(-x[..., h:], x[..., :h])`, become `tx.rope x angles F` (on
    `split_heads(z)`: a rope of z, then the split), when F is one `[T, d/2]`
    table that depends on no parameter (reported as `tx-fuse-rope`).

    Rewrites attention written out from primitives,
    `matmul(softmax(masked_fill(matmul(Q, Kᵀ) · scale, fill_mask, v)), V)`
    with an optional `tx.dropout` on the probabilities, into one
    `tx.attention` that computes the same function on every input. `Kᵀ` is
    a `tx.transpose` of the last two dimensions or `transpose_rhs`; the
    scale is any product of `tx.div` / `tx.mul` by f32 constants and
    `tx.scale`, on either side of the mask (none: 1); the masked score `v`
    (times the factors after it) becomes the op's `fill`, so rows whose keys
    are all masked still give the mean of V; the keep mask is the negation
    of the fill mask, whatever it is made of: a causal factor becomes the
    `causal` attribute, `reshape(ids != pad)` to `[B, 1, 1, S]` a
    `tx.padding_mask`, anything else stays a bool tensor the kernel reads
    (`tx.not` / `tx.and` built once per mask). Softmax is over the last
    axis. Q, K and V come from `tx.split_heads` and the result goes to
    `tx.merge_heads` (the layout libtxrt's kernel reads); K and V may have
    fewer heads than Q: one head broadcast by the matmuls (multi-query), or
    grouped-query attention written with rank-5 reshapes
    (`[B, hkv, g, T, d]` queries over `[B, hkv, 1, S, d]` keys). Anything
    else — another softmax axis, a non-constant scale, an additive mask, a
    non-finite masked score, scores or probabilities with other users — is
    left alone; `stats` prints each decline with its reason.
  }];
  let options = [
    Option<"stats", "stats", "bool", /*default=*/"false",
           "print what was fused and what was declined (and why) to stderr">,
  ];
}

def FuseAddNormPass : Pass<"tx-fuse-add-norm", "mlir::ModuleOp"> {
  let summary = "fuses layer_norm / rms_norm(x + y) into tx.add_layer_norm / tx.add_rms_norm";
  let description = [{
    First recognizes RMSNorm written out, `w * (x * rsqrt(mean(x ** 2, -1,
    keepdim) + eps))` (or `x * x`, `x / sqrt(...)`, any factor order) whose
    intermediates have no other users, as `tx.rms_norm x, w`. Then rewrites
    `tx.layer_norm(tx.add(x, y), weight, bias)` into one
    `tx.add_layer_norm x, y, weight, bias` (one pass over memory in the
    runtime), and `tx.rms_norm(tx.add(x, y), weight)` into
    `tx.add_rms_norm`, for either operand order. When the sum has other users, they
    use the fused op's second result (only when they come after the norm).
    Adds whose operands have different types (broadcasting) are left
    alone.
  }];
  let options = [
    Option<"stats", "stats", "bool", /*default=*/"false",
           "print what was fused and what was declined (and why) to stderr">,
  ];
}

def FuseLinearPass : Pass<"tx-fuse-linear", "mlir::ModuleOp"> {
  let summary = "folds activations, gates and residual adds into tx.linear epilogues";
  let description = [{
    `act(linear(x))` for act in relu, gelu, gelu_tanh, silu becomes
    `linear(x)` with that `activation`; `linear(x) * g` (either order, same
    type) becomes `linear(x)` with `gate g` (GLU, SwiGLU, GeGLU; when both
    factors are linears the activated one hosts it); `linear(x) + r` (either
    order, same type, no broadcasting) becomes `linear(x)` with `residual r`
    — oneDNN post-ops in the runtime. A linear whose result has other users,
    or that already has the epilogue part, is left alone. In the train entry
    an activation other than relu, and any gate, is left unfused: its
    gradient needs the pre-activation, which the fused form would recompute
    with another matrix product. A linear written by hand,
    `matmul(x, transpose(W)) + b` (or `transpose_rhs`) with a `[N, K]`
    weight and a rank-1 bias `[N]`, first becomes `tx.linear x, W bias b`
    when the product has no other user; with `bias-free`, any other
    `matmul(x, transpose(W))` with a static 2-D weight (GPT's tied output
    projection) becomes a bias-free `tx.linear x, W`, whose weight gradient
    is one product over all rows instead of one per batch element.
  }];
  let options = [
    Option<"stats", "stats", "bool", /*default=*/"false",
           "print what was fused and what was declined (and why) to stderr">,
    Option<"biasFree", "bias-free", "bool", /*default=*/"true",
           "also turn a bias-free matmul(x, transpose(W)) into a tx.linear "
           "(txc: not under --precision=bf16, where a tx.matmul stays f32)">,
  ];
}

def DecodeStepPass : Pass<"tx-decode-step", "mlir::ModuleOp"> {
  let summary = "derives KV-cached incremental decoding entries (decode_step, lm_step)";
  let description = [{
    From the fused `decode` entry, builds `decode_init` (memory -> the keys
    and values of every cross-attention, `cross_k.i` / `cross_v.i`) and
    `decode_step` (decode's inputs without memory, plus those and the
    self-attention caches `self_k.j` / `self_v.j` [B, cache, d]): each causal
    self-attention projects keys and values of the new positions only,
    writes them into its caches in place (tx.cache_write) and attends over
    the cache; positional encodings start at row `cache - T`. A new
    symbolic dim `cache` (bounded like the target length) counts the cached
    positions. Declines, leaving the module alone, unless every other op of
    decode works position by position.

    In a language model (`tx.kind = "language_model"`) it derives
    `lm_step(ids, cache_ids, self_k.j, self_v.j ...) -> logits` from the
    entry with role `logits` the same way: the caches hold what each causal
    self-attention's keys and values split (GQA: the key/value heads),
    `cache_ids` [B, cache] gives the padding mask over every cached position,
    and positional encodings, rope and arange start at `cache - T`. The
    attentions' masks must be made of padding_mask and causal_mask of the
    `@tokens` input.
  }];
  let options = [
    Option<"verbose", "verbose", "bool", /*default=*/"false",
           "say on stderr why no decode_step (or lm_step) was derived">,
  ];
}

def AutodiffPass : Pass<"tx-autodiff", "mlir::ModuleOp"> {
  let summary = "reverse-mode differentiation of the train entry";
  let description = [{
    Appends to the `train` entry (`tx.entry = "train"`) the gradient of its
    scalar loss with respect to every parameter it reads: a reverse walk
    over the forward ops that asks each one for its vector-Jacobian product
    (DifferentiableOpInterface), sums gradients where a value has several
    users, gives none to ids and masks, and ends each parameter's gradient
    in a `tx.store_grad`. Before that, every random op (dropout, attention
    with dropout) gets an RNG key `tx.rng` shared with its gradient, so
    backward regenerates masks, and tx.attention becomes
    tx.attention_train, which saves the log-sum-exp for attention_grad.
    Dead backward code is removed. The entry gets `tx.train_kind = "grad"`.
  }];
}

def OptimizerPass : Pass<"tx-optimizer", "mlir::ModuleOp"> {
  let summary = "turns the spec's optimizer into parameter updates";
  let description = [{
    After tx-autodiff: keeps a copy of the differentiated train entry as
    `<train>_grad` (`tx.train_kind = "grad"`: gradients stored in the
    parameter arena), and in the train entry itself replaces every
    `tx.store_grad` by the update of the module's `tx.optimizer` (Adam with
    its learning-rate schedule; `tx.train_kind = "step"`). With `clip`, the
    updates follow one `tx.grad_norm` of all gradients and scale them by
    its clipping factor.
  }];
}

def PrecisionPass : Pass<"tx-precision", "mlir::ModuleOp"> {
  let summary = "runs the linears in bf16 (txc --precision=bf16)";
  let description = [{
    Records the module's precision as `tx.precision` ("fp32" or "bf16").
    With bf16, after tx-autodiff and tx-optimizer: every `tx.linear` without
    a gate and every `tx.linear_grad` reads its input and weight through a
    `tx.cast` to bf16 (one cast per value, placed after its definition, so
    a forward linear and its gradient share the bf16 activation and the
    f32 activation can die early); results and gradients stay f32. Every
    other op (norms, softmax, attention, the loss, reductions, the
    optimizer) stays f32. docs/precision.md gives the policy per op.
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"fp32\"",
           "fp32 or bf16">,
  ];
}

def AttentionLayoutPass : Pass<"tx-attention-layout", "mlir::ModuleOp"> {
  let summary = "routes every other reader of fused attention through its layout";
  let description = [{
    After tx-autodiff, before tx-plan-memory. libtxrt's attention kernels
    read Q, K, V (and dO) through the tx.split_heads that made them and
    write O (and dQ, dK, dV) in the [B, T, h*d] layout the tx.merge_heads
    after them reads. An operand made otherwise becomes
    `split_heads(merge_heads(x))`, and a result that something else reads
    (a gradient summed with another: Q and K the same tensor, Q also read by
    a residual; the `attention` builtin's result used as [B, h, T, d]) is read
    through `split_heads(merge_heads(r))`. Programs of the usual shape are
    left as they are.
  }];
}

def InferenceFingerprintPass
    : Pass<"tx-inference-fingerprint", "mlir::ModuleOp"> {
  let summary = "hashes what the inference entries compute";
  let description = [{
    After tx-strip-dropout and tx-precision, before tx-plan-memory. Sets
    the module's `tx.inference_fingerprint` (16 hex digits) to a hash of
    every entry that does not train (its `tx.entry` kind is not `train`):
    their names, signatures, ops, operands, result types and attributes.
    Dim bounds are left out (a larger batch bound computes the same
    function), as are locations. Two builds with the same fingerprint
    compute the same function of the same parameters in those entries, so
    the executable can tell a checkpoint trained with another dropout or
    warmup (the same fingerprint) from one trained with other heads or eps
    (another), and warn only about the second (the metadata's
    `inference_fingerprint`; docs/driver.md).

    ```mlir
    module attributes {tx.inference_fingerprint = "3f0c9a27d1e45b68"} {
    ```
  }];
}

def PlanMemoryPass : Pass<"tx-plan-memory", "mlir::ModuleOp"> {
  let summary = "assigns every tensor an offset in an arena from liveness";
  let description = [{
    Parameters get offsets in the parameter arena (`offset` on each
    `tx.parameter`, total in the module's `tx.param_arena_bytes`). In each
    entry, every intermediate tensor gets an offset in one activation arena:
    its size is its upper bound (symbolic dimensions at their bounds, 64-byte
    aligned), its lifetime runs from its definition to its last use (to the
    end for returned values), and buffers are placed largest first at the
    lowest offset that no buffer with an overlapping lifetime occupies.
    `tx.reshape` results share their operand's buffer, and an element-wise op
    whose first operand dies at it writes in place, as do a linear into its
    residual and add + layer norm into an addend. A value the entry
    returns (with the values sharing its buffer) is computed straight into
    the caller's output buffer instead of the arena. Each op gets
    `tx.offsets` (one offset per result; -1 for none, -2-k for entry output
    k); each entry gets
    `tx.arena_bytes` (the arena) and `tx.tensor_bytes` (the sum of all its
    buffers without reuse).
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "byte alignment of every buffer">,
  ];
}

def LowerEntriesPass : Pass<"tx-lower-entries", "mlir::ModuleOp"> {
  let summary = "lowers planned entries to runtime calls and linalg glue";
  let description = [{
    Replaces each planned entry `@name` by
    `func.func @txc_entry_name(ctx, params, arena, dims, inputs, outputs) -> i32`
    (all pointers): tensors become addresses (inputs, parameter offsets,
    planned arena offsets); heavy ops (linear, matmul, layer_norm,
    add_layer_norm, softmax, embedding, cross_entropy, dropout, attention,
    gelu, reductions) become calls into libtxrt declared through the runtime
    registry, each followed by a status check that returns the status on
    failure; element-wise and layout ops become `linalg.generic` on memref
    views. Returned values are copied to `outputs`. `tx.parameter`s are
    removed (their layout is in the model metadata).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::cf::ControlFlowDialect",
    "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def ApproximateMathPass : Pass<"tx-approximate-math", "mlir::ModuleOp"> {
  let summary = "expands the math ops LLVM has no intrinsic for";
  let description = [{
    Rewrites `math.tanh` (tx.tanh, tx.gelu_tanh and their gradients) into
    MLIR's rational approximation of arith ops (a few ulp, exact 0 and ±1 at
    the ends, NaN kept), which LLVM vectorizes; the other math ops of glue
    kernels (exp, log, sqrt, rsqrt, abs, powf, sin, cos) have LLVM
    intrinsics and are left to convert-math-to-llvm (libm accuracy). Only
    the functions that hold a `math.tanh` are rewritten (and folded, without
    region simplification); the others, the entries, are left as they are.
    Runs in the lowering to LLVM, after tx-lower-entries.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
  ];
}

def LinalgToLoopsPass : Pass<"tx-linalg-to-loops", "mlir::ModuleOp"> {
  let summary = "lowers the glue kernels' linalg ops to scf.for loops";
  let description = [{
    Rewrites every `linalg` op on buffers into a nest of `scf.for` loops
    (MLIR's `linalg::linalgOpToLoops`) and folds what that leaves (affine
    applies, `memref.dim`), as MLIR's convert-linalg-to-loops does, but only
    in the functions that hold a linalg op (the glue kernels) and without
    region simplification. MLIR's pass rewrites and folds the whole module:
    the entries, thousands of status-check blocks on deep models, with
    region simplification over them, took time that grew faster than the
    model's depth (docs/benchmarks.md). Runs in the lowering to LLVM, after
    tx-lower-entries.
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def ExpandStridedMetadataPass
    : Pass<"tx-expand-strided-metadata", "mlir::ModuleOp"> {
  let summary = "expands memref views into their base, offset, sizes and strides";
  let description = [{
    MLIR's expand-strided-metadata patterns (`memref.subview`,
    `expand_shape`, `collapse_shape` and `extract_aligned_pointer_as_index`
    of a view rewritten over `memref.extract_strided_metadata` and
    `memref.reinterpret_cast`, which finalize-memref-to-llvm lowers), with
    folding, one function at a time and without region simplification: the
    same rewrite as MLIR's pass, whose region simplification over the
    entries' thousands of blocks grew faster than the model's depth.
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

#endif // TXC_TRANSFORMS_PASSES_TD
