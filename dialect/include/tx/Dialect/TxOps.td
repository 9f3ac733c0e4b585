//===- TxOps.td - tx dialect operations ---------------------*- tablegen -*-===//
//
// Every op of DESIGN.md §5: the forward ops a spec is written in, and the
// fused ops the fusion passes produce (attention, add_layer_norm, linear with
// an epilogue). Result types are inferred (InferTypeOpAdaptor); the shape
// rules are in each op's description and enforced by its inference/verifier.
//
//===----------------------------------------------------------------------===//
#ifndef TX_OPS_TD
#define TX_OPS_TD

include "tx/Dialect/TxDialect.td"
include "tx/Dialect/TxAttrs.td"
include "tx/Dialect/TxInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

class Tx_TensorOf<list<Type> elts, string what>
    : Type<And<[RankedTensorOf<elts>.predicate,
                CPred<"::mlir::tx::isWellFormedTensor($_self)">]>,
           "ranked tensor of " # what # " (with #tx.dims for its dynamic dims)",
           "::mlir::RankedTensorType">;

def Tx_F32Tensor : Tx_TensorOf<[F32], "f32">;
def Tx_IdTensor : Tx_TensorOf<[I32], "i32">;
def Tx_MaskTensor : Tx_TensorOf<[I1], "i1">;
def Tx_NumTensor : Tx_TensorOf<[F32, I32], "f32 or i32">;
def Tx_AnyTensor : Tx_TensorOf<[F32, I32, I1], "f32, i32 or i1">;
/// The operands a bf16 product may read (docs/precision.md).
def Tx_FloatTensor : Tx_TensorOf<[F32, BF16], "f32 or bf16">;

/// Ops with a VJP rule (dialect/lib/TxVJP.cpp).
def TxDifferentiable : DeclareOpInterfaceMethods<DifferentiableOpInterface,
                                                 ["buildVJP"]>;

class Tx_InferOp<string mnemonic, list<Trait> traits = []>
    : Tx_Op<mnemonic, !listconcat([Pure, InferTypeOpAdaptor], traits)>;

//===----------------------------------------------------------------------===//
// Constants and parameters
//===----------------------------------------------------------------------===//

def Tx_ConstantOp : Tx_Op<"constant", [Pure, ConstantLike,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "a constant tensor";
  let description = [{
    A tensor of static shape whose value is known at compile time. The result
    type is the type of `value`.

    ```mlir
    %c = tx.constant dense<8.0> : tensor<f32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Tx_AnyTensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
  let builders = [OpBuilder<(ins "::mlir::ElementsAttr":$value), [{
    build($_builder, $_state, value.getType(), value);
  }]>];
}

def Tx_ParameterOp : Tx_ModuleOp<"parameter", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "a trainable parameter of the model";
  let description = [{
    Declares a parameter at module level, named in PyTorch state_dict style,
    with its (static) type and initializer. Entries read it with `tx.param`.
    `std` is the standard deviation of the `normal` initializer (default 1;
    only with `normal`).

    ```mlir
    tx.parameter @"encoder.layers.0.self_attn.W_q.weight" : tensor<512x512xf32> {init = #tx.init<xavier_uniform>}
    tx.parameter @"wpe" : tensor<1024x768xf32> {init = #tx.init<normal>, std = 2.000000e-02 : f32}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<AnyRankedTensor>:$type,
                       Tx_InitAttr:$init, OptionalAttr<F32Attr>:$std);
  let assemblyFormat = "$sym_name `:` $type attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
}

def Tx_ParamOp : Tx_Op<"param", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "reads a parameter";
  let description = [{
    The value of the `tx.parameter` named by `name`; the result type must be
    the parameter's type.

    ```mlir
    %w = tx.param @"decoder.final.weight" : tensor<8000x512xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def Tx_CastOp : Tx_Op<"cast", [Pure, TxDifferentiable]> {
  let summary = "converts between f32 and bf16";
  let description = [{
    The same tensor in the other floating-point type: f32 to bf16 rounds to
    nearest, ties to even (NaN stays NaN); bf16 to f32 is exact. Operand and
    result have the same shape and #tx.dims. tx-precision inserts casts in
    front of the products it runs in bf16; the VJP casts the gradient back.

    `by_producer` (set by tx-precision) says that the op defining the input
    writes the rounded copy itself, in the pass that writes its f32 result
    (the same values: rounding in the producer is rounding after it), so
    the cast is no pass of its own: the planner makes its buffer live from
    the producer on and the lowering passes that buffer to the producer's
    bf16 kernel. Only an f32 to bf16 cast of the first result of a
    `tx.add_layer_norm`, `tx.rms_norm` or `tx.add_rms_norm` may carry it.

    ```mlir
    %xb = tx.cast %x : tensor<?x512xf32, #tx.dims<N: 4096>> to tensor<?x512xbf16, #tx.dims<N: 4096>>
    %y, %s = tx.add_layer_norm %a, %b, %g, %beta : (...) -> (...)
    %yb = tx.cast %y {by_producer} : tensor<?x512xf32, #tx.dims<N: 4096>> to tensor<?x512xbf16, #tx.dims<N: 4096>>
    ```
  }];
  let arguments = (ins Tx_FloatTensor:$input, UnitAttr:$by_producer);
  let results = (outs Tx_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Embeddings and masks
//===----------------------------------------------------------------------===//

def Tx_EmbeddingOp : Tx_InferOp<"embedding", [TxDifferentiable]> {
  let summary = "looks up token ids in an embedding table";
  let description = [{
    `result[i..., :] = table[ids[i...], :]`. `ids` is i32 of any rank,
    `table` is f32 `[vocab, dim]`; the result is f32 `[ids..., dim]`.

    ```mlir
    %e = tx.embedding %ids, %table : (tensor<?x?xi32, #tx.dims<B: 64, S: 256>>, tensor<8000x512xf32>) -> tensor<?x?x512xf32, #tx.dims<B: 64, S: 256>>
    ```
  }];
  let arguments = (ins Tx_IdTensor:$ids, Tx_F32Tensor:$table);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$ids `,` $table attr-dict `:` functional-type(operands, results)";
}

def Tx_PositionalEncodingOp : Tx_InferOp<"positional_encoding"> {
  let summary = "sinusoidal positional encodings";
  let description = [{
    For `x` of shape `[..., T, d]` (rank >= 2, `d` static and even), the
    `[T, d]` table of the paper: `pe[p, 2i] = sin(p / 10000^(2i/d))`,
    `pe[p, 2i+1] = cos(p / 10000^(2i/d))`. Add it to `x` (broadcasting).

    ```mlir
    %pe = tx.positional_encoding %x : (tensor<?x?x512xf32, #tx.dims<B: 64, S: 256>>) -> tensor<?x512xf32, #tx.dims<S: 256>>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$input);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tx_RopeOp : Tx_InferOp<"rope", [TxDifferentiable]> {
  let summary = "rotary position embedding";
  let description = [{
    Rotates each head of `input` `[..., T, heads * d]` (`d` even, static) by
    its position `p` along `T` (0, 1, ..., plus the decoding offset the
    lowering knows for a `decode_step`), as Llama (GPT-NeoX, Hugging Face)
    does with `x * cos + rotate_half(x) * sin`: for `i < d/2`, with
    `theta = p * base^(-2i/d)`,

        y[i]       = x[i] * cos(theta) - x[i + d/2] * sin(theta)
        y[i + d/2] = x[i + d/2] * cos(theta) + x[i] * sin(theta)

    `rotary_dims` `r` (even, `0 < r < d`; 0, the default, is the whole
    head) rotates only each head's first `r` features, with `d` read as `r`
    above (`theta = p * base^(-2i/r)`, pairs `i` and `i + r/2`), and copies
    the other `d - r` (GPT-NeoX's `rotary_pct`, Phi's
    `partial_rotary_factor`, GPT-J's `rotary_dim`, in the rotate_half
    convention).

    `inverse` rotates by `-theta` (the gradient). A `[B, h, T, d]` tensor is
    one head (`heads = 1`); on `[B, T, h * d]`, before `tx.split_heads`, the
    attention kernel reads the result in place.

    With `angles` `[T, r/2]` (rotary embeddings written out, `x * cos(emb)
    + rotate_half(x) * sin(emb)` with `emb = concat(angles, angles)`, which
    tx-fuse-attention finds), `theta = angles[t, i]` instead and `base` is
    unused; the angles take no gradient (they may not depend on a
    parameter).

    ```mlir
    %q = tx.rope %x {heads = 8 : i64, base = 1.000000e+04 : f32} : (tensor<?x?x512xf32, #tx.dims<B: 64, T: 256>>) -> tensor<?x?x512xf32, #tx.dims<B: 64, T: 256>>
    %k = tx.rope %y angles %a {heads = 8 : i64} : (tensor<?x?x512xf32, #tx.dims<B: 64, T: 256>>, tensor<?x32xf32, #tx.dims<T: 256>>) -> tensor<?x?x512xf32, #tx.dims<B: 64, T: 256>>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$input, Optional<Tx_F32Tensor>:$angles,
                       DefaultValuedAttr<I64Attr, "1">:$heads,
                       DefaultValuedAttr<F32Attr, "10000.0f">:$base,
                       DefaultValuedAttr<I64Attr, "0">:$rotary_dims,
                       UnitAttr:$inverse);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$input (`angles` $angles^)? attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    /// The features of each head that rotate: rotary_dims, or the head.
    int64_t getRotatedDims();
  }];
}

def Tx_PaddingMaskOp : Tx_InferOp<"padding_mask"> {
  let summary = "mask of non-padding key positions";
  let description = [{
    For i32 `ids` of shape `[B, S]`, the i1 mask `[B, 1, 1, S]` that is true
    where `ids != pad` (the seeds' `(src != 0).unsqueeze(1).unsqueeze(2)`).

    ```mlir
    %m = tx.padding_mask %src {pad = 0 : i64} : (tensor<?x?xi32, #tx.dims<B: 64, S: 256>>) -> tensor<?x1x1x?xi1, #tx.dims<B: 64, S: 256>>
    ```
  }];
  let arguments = (ins Tx_IdTensor:$ids, DefaultValuedAttr<I64Attr, "0">:$pad);
  let results = (outs Tx_MaskTensor:$result);
  let assemblyFormat = "$ids attr-dict `:` functional-type(operands, results)";
}

def Tx_CausalMaskOp : Tx_InferOp<"causal_mask"> {
  let summary = "lower-triangular mask over the last dimension of `ids`";
  let description = [{
    For `ids` of shape `[..., T]`, the i1 mask `[T, T]` that is true where
    key position <= query position (the seeds' "nopeak" mask).

    ```mlir
    %c = tx.causal_mask %tgt : (tensor<?x?xi32, #tx.dims<B: 64, T: 256>>) -> tensor<?x?xi1, #tx.dims<T: 256, T: 256>>
    ```
  }];
  let arguments = (ins Tx_AnyTensor:$ids);
  let results = (outs Tx_MaskTensor:$result);
  let assemblyFormat = "$ids attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Element-wise ops (NumPy broadcasting)
//===----------------------------------------------------------------------===//

class Tx_BinaryOp<string mnemonic, string what>
    : Tx_InferOp<mnemonic, [TxDifferentiable]> {
  let summary = "element-wise " # what # " with broadcasting";
  let description = [{
    Element-wise }] # what # [{ of two f32 tensors. Shapes broadcast like
    NumPy (see the dialect description); the result has the broadcast shape.

    ```mlir
    %r = tx.}] # mnemonic # [{ %a, %b : (tensor<?x?x512xf32, #tx.dims<B: 64, S: 256>>, tensor<f32>) -> tensor<?x?x512xf32, #tx.dims<B: 64, S: 256>>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$lhs, Tx_F32Tensor:$rhs);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return inferBroadcastResult(loc, adaptor.getLhs().getType(),
                                  adaptor.getRhs().getType(),
                                  /*resultElement=*/nullptr, types);
    }
  }];
}

def Tx_AddOp : Tx_BinaryOp<"add", "sum">;
def Tx_SubOp : Tx_BinaryOp<"sub", "difference">;
def Tx_MulOp : Tx_BinaryOp<"mul", "product">;
def Tx_DivOp : Tx_BinaryOp<"div", "quotient">;

class Tx_UnaryOp<string mnemonic, string what, list<Trait> traits = []>
    : Tx_InferOp<mnemonic, !listconcat([TxDifferentiable], traits)> {
  let summary = what;
  let arguments = (ins Tx_F32Tensor:$input);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      types.push_back(adaptor.getInput().getType());
      return ::mlir::success();
    }
  }];
}

def Tx_NegOp : Tx_UnaryOp<"neg", "element-wise negation"> {
  let description = [{
    `-x`, element-wise; the result has the input's type.

    ```mlir
    %r = tx.neg %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
}

def Tx_ReluOp : Tx_UnaryOp<"relu", "rectified linear unit"> {
  let description = [{
    `max(x, 0)`, element-wise; the result has the input's type.

    ```mlir
    %r = tx.relu %x : (tensor<?x2048xf32, #tx.dims<N: 4096>>) -> tensor<?x2048xf32, #tx.dims<N: 4096>>
    ```
  }];
}

def Tx_GeluOp : Tx_UnaryOp<"gelu", "Gaussian error linear unit"> {
  let description = [{
    `x * Φ(x)` (erf form), element-wise; the result has the input's type.

    ```mlir
    %r = tx.gelu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
}

def Tx_ScaleOp : Tx_InferOp<"scale", [TxDifferentiable]> {
  let summary = "multiplies by a compile-time constant";
  let description = [{
    `x * factor` for an f32 constant `factor`; the result has the input's
    type.

    ```mlir
    %r = tx.scale %x {factor = 0.125 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$input, F32Attr:$factor);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tx_CmpOp : Tx_InferOp<"cmp"> {
  let summary = "element-wise comparison with broadcasting";
  let description = [{
    Compares two tensors of the same element type (f32 or i32) element-wise;
    the result is an i1 tensor of the broadcast shape.

    ```mlir
    %m = tx.cmp ne, %ids, %pad : (tensor<?x?xi32, #tx.dims<B: 64, S: 256>>, tensor<i32>) -> tensor<?x?xi1, #tx.dims<B: 64, S: 256>>
    ```
  }];
  let arguments = (ins Tx_CmpPredicateAttr:$predicate, Tx_NumTensor:$lhs,
                       Tx_NumTensor:$rhs);
  let results = (outs Tx_MaskTensor:$result);
  let assemblyFormat = "$predicate `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

class Tx_LogicalOp<string mnemonic, string what> : Tx_InferOp<mnemonic> {
  let summary = "element-wise logical " # what # " of masks";
  let description = [{
    Logical }] # what # [{ of two i1 tensors with broadcasting (the seeds'
    `tgt_pad_mask & look_ahead_mask`).

    ```mlir
    %m = tx.}] # mnemonic # [{ %pad, %causal : (tensor<?x1x1x?xi1, #tx.dims<B: 64, T: 256>>, tensor<?x?xi1, #tx.dims<T: 256, T: 256>>) -> tensor<?x1x?x?xi1, #tx.dims<B: 64, T: 256, T: 256>>
    ```
  }];
  let arguments = (ins Tx_MaskTensor:$lhs, Tx_MaskTensor:$rhs);
  let results = (outs Tx_MaskTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return inferBroadcastResult(loc, adaptor.getLhs().getType(),
                                  adaptor.getRhs().getType(),
                                  /*resultElement=*/nullptr, types);
    }
  }];
}

def Tx_AndOp : Tx_LogicalOp<"and", "and">;
def Tx_OrOp : Tx_LogicalOp<"or", "or">;

def Tx_NotOp : Tx_InferOp<"not"> {
  let summary = "element-wise logical not of a mask";
  let description = [{
    ```mlir
    %r = tx.not %m : (tensor<?x1x1x?xi1, #tx.dims<B: 64, S: 256>>) -> tensor<?x1x1x?xi1, #tx.dims<B: 64, S: 256>>
    ```
  }];
  let arguments = (ins Tx_MaskTensor:$input);
  let results = (outs Tx_MaskTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tx_MaskedFillOp : Tx_InferOp<"masked_fill", [TxDifferentiable]> {
  let summary = "replaces elements where a mask is true";
  let description = [{
    `result = mask ? value : input` (PyTorch `masked_fill`). The mask
    broadcasts to the input's shape (it may not grow it); the result has the
    input's type.

    ```mlir
    %s = tx.masked_fill %scores, %m {value = -1.0e+09 : f32} : (tensor<?x8x?x?xf32, #tx.dims<B: 64, T: 256, S: 256>>, tensor<?x1x1x?xi1, #tx.dims<B: 64, S: 256>>) -> tensor<?x8x?x?xf32, #tx.dims<B: 64, T: 256, S: 256>>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$input, Tx_MaskTensor:$mask, F32Attr:$value);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$input `,` $mask attr-dict `:` functional-type(operands, results)";
}

def Tx_DropoutOp : Tx_InferOp<"dropout", [TxDifferentiable]> {
  let summary = "inverted dropout (active only in training entries)";
  let description = [{
    Zeroes each element with probability `rate` and scales the rest by
    `1 / (1 - rate)` in the `train` entry; the identity elsewhere. `rate` is
    in [0, 1). The mask comes from a counter-based RNG keyed by seed, step and
    this op, so backward regenerates it.

    ```mlir
    %r = tx.dropout %x {rate = 1.000000e-01 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$input, F32Attr:$rate);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tx_StopGradientOp : Tx_InferOp<"stop_gradient"> {
  let summary = "the identity, through which no gradient flows";
  let description = [{
    Its input's value (`torch.Tensor.detach`, `jax.lax.stop_gradient`).
    Not differentiable: tx-autodiff sends no gradient through it, then
    replaces it by its input, as tx-strip-dropout does in every other
    entry (the frontend writes it in `train` entries only).

    ```mlir
    %r = tx.stop_gradient %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$input);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

def Tx_MatmulOp : Tx_InferOp<"matmul", [TxDifferentiable]> {
  let summary = "batched matrix product";
  let description = [{
    `lhs [..., M, K] x rhs [..., K, N] -> [..., M, N]` (after transposing the
    last two dimensions of an operand whose `transpose_lhs`/`transpose_rhs` is
    set). Both operands have rank >= 2; their batch dimensions broadcast like
    NumPy; the contracted dimensions must be equal.

    ```mlir
    %s = tx.matmul %q, %k {transpose_rhs} : (tensor<?x8x?x64xf32, #tx.dims<B: 64, T: 256>>, tensor<?x8x?x64xf32, #tx.dims<B: 64, S: 256>>) -> tensor<?x8x?x?xf32, #tx.dims<B: 64, T: 256, S: 256>>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$lhs, Tx_F32Tensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def Tx_LinearOp : Tx_InferOp<"linear", [TxDifferentiable,
    AttrSizedOperandSegments]> {
  let summary = "affine map with an optional epilogue";
  let description = [{
    `y = act(x · weightᵀ + bias) * gate + residual` with PyTorch's layout:
    `x` is `[..., in]`, `weight` is `[out, in]`, the optional `bias` is
    `[out]`, the result is `[..., out]`. The epilogue — `activation` (none,
    relu, gelu, gelu_tanh, silu), the optional `gate` and the optional
    `residual` (both of the result's type) — maps to oneDNN post-ops
    (eltwise, binary_mul, binary_add); tx-fuse-linear forms it from
    separate ops. A gated linear is a GLU: SwiGLU's `silu(x·W1ᵀ) * (x·W3ᵀ)`
    is `linear(x, W1, activation = silu, gate = linear(x, W3))`.

    ```mlir
    %h = tx.linear %x, %w1 bias %b1 {activation = #tx.activation<relu>} : (tensor<?x512xf32, #tx.dims<N: 4096>>, tensor<2048x512xf32>, tensor<2048xf32>) -> tensor<?x2048xf32, #tx.dims<N: 4096>>
    %g = tx.linear %x, %w1 gate %u {activation = #tx.activation<silu>} : (tensor<?x512xf32, #tx.dims<N: 4096>>, tensor<1376x512xf32>, tensor<?x1376xf32, #tx.dims<N: 4096>>) -> tensor<?x1376xf32, #tx.dims<N: 4096>>
    ```
  }];
  let arguments = (ins Tx_FloatTensor:$input, Tx_FloatTensor:$weight,
                       Optional<Tx_F32Tensor>:$bias,
                       Optional<Tx_F32Tensor>:$gate,
                       Optional<Tx_F32Tensor>:$residual,
                       DefaultValuedAttr<Tx_ActivationAttr,
                                         "::mlir::tx::Activation::none">:$activation);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`bias` $bias^)? (`gate` $gate^)?
    (`residual` $residual^)? attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

def Tx_SoftmaxOp : Tx_InferOp<"softmax", [TxDifferentiable]> {
  let summary = "softmax along one axis";
  let description = [{
    `exp(x - max) / sum(exp(x - max))` along `axis` (negative counts from the
    end; default -1). The result has the input's type.

    ```mlir
    %p = tx.softmax %s {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$input, DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tx_LogSoftmaxOp : Tx_InferOp<"log_softmax", [TxDifferentiable]> {
  let summary = "log of softmax along one axis";
  let description = [{
    `x - max - log(sum(exp(x - max)))` along `axis` (default -1). The result
    has the input's type.

    ```mlir
    %p = tx.log_softmax %s {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$input, DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tx_LayerNormOp : Tx_InferOp<"layer_norm", [TxDifferentiable]> {
  let summary = "layer normalization over the last dimension";
  let description = [{
    `(x - mean) / sqrt(var + epsilon) * weight + bias` over the last
    dimension `d` of `x` (biased variance, as nn.LayerNorm). `weight` and the
    optional `bias` are `[d]` (no bias: nn.LayerNorm(bias=False)); `d` is
    static. The result has the input's type.

    ```mlir
    %y = tx.layer_norm %x, %g, %b {epsilon = 9.99999974E-6 : f32} : (tensor<?x512xf32, #tx.dims<N: 4096>>, tensor<512xf32>, tensor<512xf32>) -> tensor<?x512xf32, #tx.dims<N: 4096>>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$input, Tx_F32Tensor:$weight,
                       Optional<Tx_F32Tensor>:$bias,
                       DefaultValuedAttr<F32Attr, "1.0e-5f">:$epsilon);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
}

def Tx_RmsNormOp : Tx_InferOp<"rms_norm", [TxDifferentiable]> {
  let summary = "root-mean-square normalization over the last dimension";
  let description = [{
    `x / sqrt(mean(x ** 2) + epsilon) * weight` over the last dimension `d`
    of `x` (no centering, no bias: nn.RMSNorm, Llama's norm). `weight` is
    `[d]`; `d` is static. The result has the input's type.

    ```mlir
    %y = tx.rms_norm %x, %g {epsilon = 9.99999997E-7 : f32} : (tensor<?x512xf32, #tx.dims<N: 4096>>, tensor<512xf32>) -> tensor<?x512xf32, #tx.dims<N: 4096>>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$input, Tx_F32Tensor:$weight,
                       DefaultValuedAttr<F32Attr, "1.0e-6f">:$epsilon);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$input `,` $weight attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def Tx_ReshapeOp : Tx_Op<"reshape", [Pure, TxDifferentiable]> {
  let summary = "reinterprets a tensor with another shape";
  let description = [{
    Same elements in row-major order, another shape (the result type). The
    element type is kept; static element counts must agree; symbolic
    dimensions must appear in the result as in the input (same symbols, same
    count), so the element counts agree for every binding of them.

    ```mlir
    %r = tx.reshape %x : (tensor<?x?x512xf32, #tx.dims<B: 64, S: 256>>) -> tensor<?x?x8x64xf32, #tx.dims<B: 64, S: 256>>
    ```
  }];
  let arguments = (ins Tx_AnyTensor:$input);
  let results = (outs Tx_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Tx_TransposeOp : Tx_InferOp<"transpose", [TxDifferentiable]> {
  let summary = "permutes dimensions";
  let description = [{
    `result.shape[i] = input.shape[permutation[i]]`; `permutation` is a
    permutation of `0 .. rank-1`.

    ```mlir
    %t = tx.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<?x8x?x64xf32, #tx.dims<B: 64, S: 256>>) -> tensor<?x8x64x?xf32, #tx.dims<B: 64, S: 256>>
    ```
  }];
  let arguments = (ins Tx_AnyTensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Tx_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tx_SplitHeadsOp : Tx_InferOp<"split_heads", [TxDifferentiable]> {
  let summary = "splits the model dimension into heads";
  let description = [{
    `[B, T, d] -> [B, heads, T, d / heads]` (the seeds'
    `x.view(B, T, h, d_k).transpose(1, 2)`); `d` is static and divisible by
    `heads`.

    ```mlir
    %h = tx.split_heads %x {heads = 8 : i64} : (tensor<?x?x512xf32, #tx.dims<B: 64, S: 256>>) -> tensor<?x8x?x64xf32, #tx.dims<B: 64, S: 256>>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$input, I64Attr:$heads);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tx_MergeHeadsOp : Tx_InferOp<"merge_heads", [TxDifferentiable]> {
  let summary = "concatenates heads back into the model dimension";
  let description = [{
    `[B, h, T, d_k] -> [B, T, h * d_k]` (the seeds'
    `x.transpose(1, 2).contiguous().view(B, T, d_model)`); `h` and `d_k` are
    static.

    ```mlir
    %m = tx.merge_heads %x : (tensor<?x8x?x64xf32, #tx.dims<B: 64, S: 256>>) -> tensor<?x?x512xf32, #tx.dims<B: 64, S: 256>>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$input);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Reductions and the loss
//===----------------------------------------------------------------------===//

class Tx_ReduceOp<string mnemonic, string what>
    : Tx_InferOp<mnemonic, [TxDifferentiable]> {
  let summary = what # " over axes";
  let description = [{
    The }] # what # [{ of `input` over the distinct `axes` (negative count
    from the end). With `keepdim` the reduced dimensions stay as size 1,
    otherwise they are dropped.

    ```mlir
    %s = tx.}] # mnemonic # [{ %x {axes = array<i64: -1>} : (tensor<4x8xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$input, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keepdim);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return inferReduceResult(loc, adaptor.getInput().getType(),
                               adaptor.getAxes(), adaptor.getKeepdim(), types);
    }
  }];
}

def Tx_ReduceSumOp : Tx_ReduceOp<"reduce_sum", "sum">;
def Tx_ReduceMeanOp : Tx_ReduceOp<"reduce_mean", "mean">;

def Tx_CrossEntropyOp : Tx_InferOp<"cross_entropy", [TxDifferentiable]> {
  let summary = "mean label-smoothed cross-entropy of logits against targets";
  let description = [{
    `logits` is f32 `[..., V]`, `targets` is i32 `[...]` (the same leading
    dimensions). Per position: `(1 - ε)·(-log p[target]) + ε·mean_v(-log
    p[v])` with `p = softmax(logits)` and `ε = label_smoothing` in [0, 1) —
    PyTorch's `CrossEntropyLoss(ignore_index, label_smoothing)`. Positions whose
    target is `ignore_index` are skipped; the result is the mean over the
    others, an f32 scalar `tensor<f32>`.

    ```mlir
    %l = tx.cross_entropy %logits, %tgt {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f32} : (tensor<?x?x8000xf32, #tx.dims<B: 64, T: 256>>, tensor<?x?xi32, #tx.dims<B: 64, T: 256>>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$logits, Tx_IdTensor:$targets,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
                       DefaultValuedAttr<F32Attr, "0.0f">:$label_smoothing);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$logits `,` $targets attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Fused ops (produced by the fusion passes)
//===----------------------------------------------------------------------===//

def Tx_AttentionOp : Tx_InferOp<"attention", [TxDifferentiable]> {
  let summary = "fused scaled dot-product attention";
  let description = [{
    `softmax(mask(query · keyᵀ · scale)) · value` without materializing the
    scores: `query` is `[..., h, Tq, d]`, `key` and `value`
    `[..., hkv, Tk, d]` (one head size: the kernels take one), the result
    `[..., h, Tq, d]`. The leading
    dimensions are equal, except that key and value may have fewer heads
    `hkv` (the dimension before `Tk`) that divide the query's `h` (static):
    query head `i` reads key/value head `i / (h / hkv)` (multi-query
    attention with `hkv = 1`, grouped-query attention otherwise; no copy).
    The optional i1 `mask` broadcasts to the scores `[..., h, Tq, Tk]` and
    keeps positions where it is true; `causal` also masks key > query
    (aligned to the last query: key j is visible to query i when
    `j <= i + Tk - Tq`). `dropout` is the rate applied to the probabilities
    in training.

    A masked score is `fill` when the attribute is present: exactly what
    `softmax(masked_fill(scores, !mask, fill))` computes (`fill` as the
    softmax sees it, after any scaling), so a row whose keys are all masked
    gives the mean of `value`. Without `fill`, masked keys drop out and a row
    with no visible key gives zeros.

    `bf16` (a unit attribute, set by tx-precision under `--precision=bf16`)
    runs the block products (`query · keyᵀ`, probabilities · `value`) on
    operands rounded to bf16 with f32 accumulation; the softmax statistics,
    masks and dropout stay f32 and the operands and result stay f32 tensors
    (`txrt_attention_fwd_bf16`). tx.attention_train and tx.attention_grad
    take it too (`txrt_attention_bwd_bf16`).

    ```mlir
    %o = tx.attention %q, %k, %v mask %m {scale = 1.250000e-01 : f32, causal} : (tensor<?x8x?x64xf32, #tx.dims<B: 64, T: 256>>, tensor<?x8x?x64xf32, #tx.dims<B: 64, T: 256>>, tensor<?x8x?x64xf32, #tx.dims<B: 64, T: 256>>, tensor<?x1x1x?xi1, #tx.dims<B: 64, T: 256>>) -> tensor<?x8x?x64xf32, #tx.dims<B: 64, T: 256>>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$query, Tx_F32Tensor:$key,
                       Tx_F32Tensor:$value, Optional<Tx_MaskTensor>:$mask,
                       F32Attr:$scale, UnitAttr:$causal,
                       OptionalAttr<F32Attr>:$fill,
                       DefaultValuedAttr<F32Attr, "0.0f">:$dropout);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? attr-dict
    `:` functional-type(operands, results)
  }];
}

def Tx_AddLayerNormOp : Tx_InferOp<"add_layer_norm", [TxDifferentiable]> {
  let summary = "fused residual add and layer normalization";
  let description = [{
    `sum = lhs + rhs` (same shape, no broadcasting) and
    `result = layer_norm(sum, weight, bias, epsilon)` in one pass (`bias`
    optional); the second result is the sum, for users that need it.

    ```mlir
    %y, %s = tx.add_layer_norm %x, %r, %g, %b {epsilon = 9.99999974E-6 : f32} : (tensor<?x512xf32, #tx.dims<N: 4096>>, tensor<?x512xf32, #tx.dims<N: 4096>>, tensor<512xf32>, tensor<512xf32>) -> (tensor<?x512xf32, #tx.dims<N: 4096>>, tensor<?x512xf32, #tx.dims<N: 4096>>)
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$lhs, Tx_F32Tensor:$rhs,
                       Tx_F32Tensor:$weight, Optional<Tx_F32Tensor>:$bias,
                       DefaultValuedAttr<F32Attr, "1.0e-5f">:$epsilon);
  let results = (outs Tx_F32Tensor:$result, Tx_F32Tensor:$sum);
  let assemblyFormat = "$lhs `,` $rhs `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
}

def Tx_AddRmsNormOp : Tx_InferOp<"add_rms_norm", [TxDifferentiable]> {
  let summary = "fused residual add and RMS normalization";
  let description = [{
    `sum = lhs + rhs` (same shape, no broadcasting) and
    `result = rms_norm(sum, weight, epsilon)` in one pass; the second result
    is the sum (a pre-norm model's residual stream goes on with it).

    ```mlir
    %y, %s = tx.add_rms_norm %x, %r, %g {epsilon = 9.99999997E-7 : f32} : (tensor<?x512xf32, #tx.dims<N: 4096>>, tensor<?x512xf32, #tx.dims<N: 4096>>, tensor<512xf32>) -> (tensor<?x512xf32, #tx.dims<N: 4096>>, tensor<?x512xf32, #tx.dims<N: 4096>>)
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$lhs, Tx_F32Tensor:$rhs,
                       Tx_F32Tensor:$weight,
                       DefaultValuedAttr<F32Attr, "1.0e-6f">:$epsilon);
  let results = (outs Tx_F32Tensor:$result, Tx_F32Tensor:$sum);
  let assemblyFormat = "$lhs `,` $rhs `,` $weight attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Gradient ops (built by tx-autodiff from the VJP rules; each has its own
// runtime kernel or glue loop)
//===----------------------------------------------------------------------===//

def Tx_AttentionTrainOp : Tx_InferOp<"attention_train", [TxDifferentiable]> {
  let summary = "tx.attention that also saves the log-sum-exp for backward";
  let description = [{
    The forward of `tx.attention` in a training entry: `result` as
    tx.attention computes it, and `lse [..., Tq]`, the log-sum-exp of each
    query's masked, scaled scores (before dropout), from which
    `tx.attention_grad` recomputes the probabilities.

    ```mlir
    %o, %lse = tx.attention_train %q, %k, %v mask %m {scale = 1.250000e-01 : f32, dropout = 1.000000e-01 : f32} : (tensor<?x8x?x64xf32, #tx.dims<B: 64, T: 256>>, tensor<?x8x?x64xf32, #tx.dims<B: 64, S: 256>>, tensor<?x8x?x64xf32, #tx.dims<B: 64, S: 256>>, tensor<?x1x1x?xi1, #tx.dims<B: 64, S: 256>>) -> (tensor<?x8x?x64xf32, #tx.dims<B: 64, T: 256>>, tensor<?x8x?xf32, #tx.dims<B: 64, T: 256>>)
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$query, Tx_F32Tensor:$key,
                       Tx_F32Tensor:$value, Optional<Tx_MaskTensor>:$mask,
                       F32Attr:$scale, UnitAttr:$causal,
                       OptionalAttr<F32Attr>:$fill,
                       DefaultValuedAttr<F32Attr, "0.0f">:$dropout);
  let results = (outs Tx_F32Tensor:$result, Tx_F32Tensor:$lse);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? attr-dict
    `:` functional-type(operands, results)
  }];
}

def Tx_CrossEntropyTrainOp : Tx_InferOp<"cross_entropy_train", [TxDifferentiable]> {
  let summary = "tx.cross_entropy that also saves the log-sum-exp for backward";
  let description = [{
    The forward of `tx.cross_entropy` in a training entry: `result` as
    tx.cross_entropy computes it, and `lse [...]`, the log-sum-exp of each
    position's logits (the logits' shape without the class dimension), from
    which `tx.cross_entropy_grad` computes the softmax without reading each
    row once more for its statistics.

    ```mlir
    %l, %lse = tx.cross_entropy_train %logits, %tgt {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f32} : (tensor<?x?x8000xf32, #tx.dims<B: 64, T: 256>>, tensor<?x?xi32, #tx.dims<B: 64, T: 256>>) -> (tensor<f32>, tensor<?x?xf32, #tx.dims<B: 64, T: 256>>)
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$logits, Tx_IdTensor:$targets,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
                       DefaultValuedAttr<F32Attr, "0.0f">:$label_smoothing);
  let results = (outs Tx_F32Tensor:$result, Tx_F32Tensor:$lse);
  let assemblyFormat = "$logits `,` $targets attr-dict `:` functional-type(operands, results)";
}

def Tx_AttentionGradOp : Tx_InferOp<"attention_grad"> {
  let summary = "gradient of fused attention";
  let description = [{
    Given the forward's operands and attributes, its `out` and `lse`
    (tx.attention_train) and the output gradient `dout`, the gradients of
    query, key and value (same types as them). Probabilities are recomputed
    block by block from `lse`; dropout masks are regenerated (same `tx.rng`
    as the forward).

    ```mlir
    %dq, %dk, %dv = tx.attention_grad %q, %k, %v, %o, %lse, %do {scale = 1.250000e-01 : f32, causal} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32>, tensor<2x4x8x16xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>)
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$query, Tx_F32Tensor:$key,
                       Tx_F32Tensor:$value, Optional<Tx_MaskTensor>:$mask,
                       Tx_F32Tensor:$out, Tx_F32Tensor:$lse,
                       Tx_F32Tensor:$dout,
                       F32Attr:$scale, UnitAttr:$causal,
                       OptionalAttr<F32Attr>:$fill,
                       DefaultValuedAttr<F32Attr, "0.0f">:$dropout);
  let results = (outs Tx_F32Tensor:$dquery, Tx_F32Tensor:$dkey,
                      Tx_F32Tensor:$dvalue);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? `,` $out `,` $lse `,` $dout
    attr-dict `:` functional-type(operands, results)
  }];
}

def Tx_ActivationGradOp : Tx_InferOp<"activation_grad"> {
  let summary = "gradient of a linear epilogue's activation";
  let description = [{
    `dx = dy * act'(x)` with `x` the activation's input (for relu, its output
    works as well). Same type as `dy`.

    ```mlir
    %dx = tx.activation_grad %x, %dy {activation = #tx.activation<gelu>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$input, Tx_F32Tensor:$dresult,
                       Tx_ActivationAttr:$activation);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$input `,` $dresult attr-dict `:` functional-type(operands, results)";
}

def Tx_SoftmaxGradOp : Tx_InferOp<"softmax_grad"> {
  let summary = "gradient of softmax or log_softmax over the last axis";
  let description = [{
    From the forward output `y`: `dx = y * (dy - sum(dy * y))` for softmax,
    `dx = dy - exp(y) * sum(dy)` with `log` set (log_softmax).

    ```mlir
    %dx = tx.softmax_grad %y, %dy : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$output, Tx_F32Tensor:$dresult,
                       UnitAttr:$log);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$output `,` $dresult attr-dict `:` functional-type(operands, results)";
}

def Tx_LayerNormGradOp : Tx_InferOp<"layer_norm_grad", [AttrSizedOperandSegments]> {
  let summary = "gradient of layer_norm (and of add_layer_norm)";
  let description = [{
    Gradients of `layer_norm(input, weight, bias)` given `dy`: `dinput` (type
    of `input`), `dweight` and `dbias` (type of `weight`). With `rhs`, the
    forward was `tx.add_layer_norm input, rhs` and `dinput` is the gradient
    of the sum (so of both addends); `dsum`, when present, is the gradient
    reaching the sum through add_layer_norm's second result. The row
    statistics are recomputed in one pass over the input.

    ```mlir
    %dx, %dg, %db = tx.layer_norm_grad %x, %g, %dy : (tensor<8x16xf32>, tensor<16xf32>, tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$input, Optional<Tx_F32Tensor>:$rhs,
                       Tx_F32Tensor:$weight, Tx_F32Tensor:$dresult,
                       Optional<Tx_F32Tensor>:$dsum,
                       DefaultValuedAttr<F32Attr, "1.0e-5f">:$epsilon);
  let results = (outs Tx_F32Tensor:$dinput, Tx_F32Tensor:$dweight,
                      Tx_F32Tensor:$dbias);
  let assemblyFormat = [{
    $input (`rhs` $rhs^)? `,` $weight `,` $dresult (`dsum` $dsum^)? attr-dict
    `:` functional-type(operands, results)
  }];
}

def Tx_RmsNormGradOp : Tx_InferOp<"rms_norm_grad", [AttrSizedOperandSegments]> {
  let summary = "gradient of rms_norm (and of add_rms_norm)";
  let description = [{
    Gradients of `rms_norm(input, weight)` given `dy`: `dinput` (type of
    `input`) and `dweight` (type of `weight`). With `rhs`, the forward was
    `tx.add_rms_norm input, rhs` and `dinput` is the gradient of the sum (so
    of both addends); `dsum`, when present, is the gradient reaching the sum
    through add_rms_norm's second result. The row statistics are recomputed
    in one pass over the input.

    ```mlir
    %dx, %dg = tx.rms_norm_grad %x, %g, %dy : (tensor<8x16xf32>, tensor<16xf32>, tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$input, Optional<Tx_F32Tensor>:$rhs,
                       Tx_F32Tensor:$weight, Tx_F32Tensor:$dresult,
                       Optional<Tx_F32Tensor>:$dsum,
                       DefaultValuedAttr<F32Attr, "1.0e-6f">:$epsilon);
  let results = (outs Tx_F32Tensor:$dinput, Tx_F32Tensor:$dweight);
  let assemblyFormat = [{
    $input (`rhs` $rhs^)? `,` $weight `,` $dresult (`dsum` $dsum^)? attr-dict
    `:` functional-type(operands, results)
  }];
}

def Tx_LinearGradOp : Tx_InferOp<"linear_grad"> {
  let summary = "gradients of x · weightᵀ + bias";
  let description = [{
    Given `dy` (the gradient at the linear's pre-epilogue output), `dinput =
    dy · weight`, `dweight = dyᵀ · x` (rows of all leading dimensions) and
    `dbias = sum of dy's rows`. With `plus`, `dinput = addend + dy · weight`:
    tx-autodiff folds the sum of another gradient of the same input into
    the product (libtxrt accumulates into the addend's buffer, beta = 1)
    instead of a separate tx.add over both; `addend` has `dinput`'s type.

    ```mlir
    %dx, %dw, %db = tx.linear_grad %x, %w, %dy : (tensor<8x16xf32>, tensor<32x16xf32>, tensor<8x32xf32>) -> (tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32>)
    %dx2, %dw2, %db2 = tx.linear_grad %x, %w, %dy plus %dx : (tensor<8x16xf32>, tensor<32x16xf32>, tensor<8x32xf32>, tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32>)
    ```
  }];
  let arguments = (ins Tx_FloatTensor:$input, Tx_FloatTensor:$weight,
                       Tx_F32Tensor:$dresult,
                       Optional<Tx_F32Tensor>:$addend);
  let results = (outs Tx_F32Tensor:$dinput, Tx_F32Tensor:$dweight,
                      Tx_F32Tensor:$dbias);
  let assemblyFormat = [{
    $input `,` $weight `,` $dresult (`plus` $addend^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def Tx_EmbeddingGradOp : Tx_InferOp<"embedding_grad"> {
  let summary = "gradient of an embedding table (scatter-add)";
  let description = [{
    `dtable[ids[i...], :] += dy[i..., :]`, zero elsewhere; `dtable` is
    `[vocab, dim]`.

    ```mlir
    %dt = tx.embedding_grad %ids, %dy {vocab = 8000 : i64} : (tensor<?x?xi32, #tx.dims<B: 64, S: 256>>, tensor<?x?x512xf32, #tx.dims<B: 64, S: 256>>) -> tensor<8000x512xf32>
    ```
  }];
  let arguments = (ins Tx_IdTensor:$ids, Tx_F32Tensor:$dresult,
                       I64Attr:$vocab);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$ids `,` $dresult attr-dict `:` functional-type(operands, results)";
}

def Tx_CrossEntropyGradOp : Tx_InferOp<"cross_entropy_grad"> {
  let summary = "gradient of cross_entropy with respect to the logits";
  let description = [{
    `dlogits = dloss * (softmax(logits) - (1 - eps) * onehot(t) - eps / C) /
    count` on rows whose target is not `ignore_index`, zero on the others.
    With `lse` (the forward's, from tx.cross_entropy_train) the softmax is
    `exp(logits - lse)`; without it each row's log-sum-exp is recomputed.

    ```mlir
    %dz = tx.cross_entropy_grad %z, %t, %dl lse %lse {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f32} : (tensor<?x?x8000xf32, #tx.dims<B: 64, T: 256>>, tensor<?x?xi32, #tx.dims<B: 64, T: 256>>, tensor<f32>, tensor<?x?xf32, #tx.dims<B: 64, T: 256>>) -> tensor<?x?x8000xf32, #tx.dims<B: 64, T: 256>>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$logits, Tx_IdTensor:$targets,
                       Tx_F32Tensor:$dloss, Optional<Tx_F32Tensor>:$lse,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
                       DefaultValuedAttr<F32Attr, "0.0f">:$label_smoothing);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$logits `,` $targets `,` $dloss (`lse` $lse^)? attr-dict `:` functional-type(operands, results)";
}

def Tx_DropoutGradOp : Tx_InferOp<"dropout_grad"> {
  let summary = "gradient of dropout (the mask is regenerated)";
  let description = [{
    `dx = keep ? dy / (1 - rate) : 0` with the forward's mask, regenerated
    from the RNG key `tx.rng` that the forward `tx.dropout` carries too.

    ```mlir
    %dx = tx.dropout_grad %dy {rate = 1.000000e-01 : f32, tx.rng = 7 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$dresult, F32Attr:$rate);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$dresult attr-dict `:` functional-type(operands, results)";
}

def Tx_SumToOp : Tx_Op<"sum_to", [Pure]> {
  let summary = "sums a tensor down to a shape it was broadcast from";
  let description = [{
    The adjoint of broadcasting: sums `input` over the leading dimensions the
    result lacks and over the dimensions where the result has size 1, so
    `sum_to(dy) : type(x)` is the gradient of `x` in `x + y`.

    ```mlir
    %db = tx.sum_to %dy : (tensor<?x?x512xf32, #tx.dims<B: 64, S: 256>>) -> tensor<512xf32>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$input);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Tx_BroadcastToOp : Tx_Op<"broadcast_to", [Pure]> {
  let summary = "broadcasts a tensor to a larger shape";
  let description = [{
    NumPy broadcasting of `input` to the result type (the adjoint of
    `tx.sum_to`; the gradient of a reduction).

    ```mlir
    %b = tx.broadcast_to %s : (tensor<4x1xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$input);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Optimizer ops (built by tx-autodiff and tx-optimizer)
//===----------------------------------------------------------------------===//

def Tx_StoreGradOp : Tx_Op<"store_grad", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "writes a parameter's gradient to its slot in the parameter arena";
  let description = [{
    The gradient of the loss with respect to the `tx.parameter` named by
    `name` (the same type). tx-autodiff ends every parameter's backward with
    one; tx-optimizer turns them into updates in the train step.

    ```mlir
    tx.store_grad @"final_linear.weight", %g : tensor<32x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name, Tx_F32Tensor:$grad);
  let assemblyFormat = "$name `,` $grad attr-dict `:` type($grad)";
}

def Tx_AdamUpdateOp : Tx_Op<"adam_update", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "one Adam step of a parameter";
  let description = [{
    With `t` the training step and `lr` from the schedule (`noam`:
    `factor * d_model^-0.5 * min(t^-0.5, t * warmup^-1.5)`; `constant`:
    `lr`), `grad` scaled by the optional `scale` (a scalar, for gradient
    clipping), updates the parameter and its moments in the parameter arena:
    `m = β1 m + (1-β1) g`, `v = β2 v + (1-β2) g²`,
    `p -= lr * (m / (1-β1^t)) / (sqrt(v / (1-β2^t)) + eps)`.

    ```mlir
    tx.adam_update @"final_linear.weight", %g {schedule = "noam", lr = 1.0 : f64, d_model = 64.0 : f64, warmup = 100.0 : f64, beta1 = 0.9 : f64, beta2 = 0.98 : f64, eps = 1.0e-9 : f64, weight_decay = 0.0 : f64} : tensor<32x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name, Tx_F32Tensor:$grad,
                       Optional<Tx_F32Tensor>:$scale, StrAttr:$schedule,
                       F64Attr:$lr, F64Attr:$d_model, F64Attr:$warmup,
                       F64Attr:$beta1, F64Attr:$beta2, F64Attr:$eps,
                       F64Attr:$weight_decay);
  let assemblyFormat = "$name `,` $grad (`scale` $scale^)? attr-dict `:` type($grad) (`,` type($scale)^)?";
  let hasVerifier = 1;
}

def Tx_GradNormOp : Tx_Op<"grad_norm", [Pure]> {
  let summary = "global L2 norm of gradients";
  let description = [{
    `sqrt(sum of g² over every element of every operand)`, a scalar; with
    `clip` set, the result is instead the clipping factor
    `min(1, clip / (norm + 1e-6))`.

    ```mlir
    %s = tx.grad_norm %g0, %g1 {clip = 1.0 : f64} : tensor<32x64xf32>, tensor<32xf32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Variadic<Tx_F32Tensor>:$grads, OptionalAttr<F64Attr>:$clip);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$grads attr-dict `:` type($grads) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Incremental decoding (built by tx-decode-step)
//===----------------------------------------------------------------------===//

def Tx_CacheWriteOp : Tx_Op<"cache_write", [AllTypesMatch<["cache", "result"]>]> {
  let summary = "writes the newest positions into a key/value cache";
  let description = [{
    `cache [B, P, d]` holds the keys (or values) of positions 0 .. P-1 of a
    sequence being decoded; `update [B, T, d]` are those of its last T
    positions, written to `cache[:, P-T:, :]` in place. The result is the
    cache (the same buffer), for the attention that reads it.

    ```mlir
    %k = tx.cache_write %cache, %new : (tensor<?x?x64xf32, #tx.dims<B: 16, cache: 16>>, tensor<?x?x64xf32, #tx.dims<B: 16, T: 16>>) -> tensor<?x?x64xf32, #tx.dims<B: 16, cache: 16>>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$cache, Tx_F32Tensor:$update);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$cache `,` $update attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tensor math (TxMathOps.td: exp, log, ..., pow, minimum, maximum, clamp,
// where, reduce_max and their gradient ops)
//===----------------------------------------------------------------------===//

include "tx/Dialect/TxMathOps.td"
include "tx/Dialect/TxIndexOps.td"

#endif // TX_OPS_TD
