//===- TxIndexOps.td - slicing, joining and gathering ------*- tablegen -*-===//
//
// Indexing and shape ops as PyTorch writes them: basic slicing (`x[:, 0]`,
// `x[..., :h]`, `wpe[:T]`), concatenation (torch.cat), splitting
// (torch.split / torch.chunk), gathering along one axis by an i32 tensor
// (index_select, advanced indexing `table[ids]`) and position ids
// (torch.arange); then the gradient ops their VJPs build. Shape rules and
// VJPs are in dialect/lib/TxIndexOps.cpp, the lowering in
// compiler/lib/Conversion/LowerIndex.cpp. Included from TxOps.td.
//
// A slice or split piece whose elements are one contiguous run of its
// operand (every dimension before the sliced one has size 1, every one after
// it is whole) is a view: tx-plan-memory gives it no buffer and the lowering
// points into the operand. Integer indices that drop a dimension (`x[0]`)
// are a size-1 slice followed by a tx.reshape; torch.stack is a reshape of
// each input followed by tx.concat.
//
//===----------------------------------------------------------------------===//
#ifndef TX_INDEX_OPS_TD
#define TX_INDEX_OPS_TD

//===----------------------------------------------------------------------===//
// Forward ops
//===----------------------------------------------------------------------===//

def Tx_SliceOp : Tx_Op<"slice", [Pure, TxDifferentiable]> {
  let summary = "strided slice, one range per dimension";
  let description = [{
    `result[i0, i1, ...] = input[s0 + i0 * t0, s1 + i1 * t1, ...]` with
    `s = starts` and `t = strides` (all 1 when absent; each >= 1); the
    result type gives the size of each range. Rank (>= 1) and element type
    are kept. For each dimension of the input:

    - static size `N`: `0 <= s < N`, and the range ends inside it: the
      result dimension is a static `n >= 1` with `s + (n - 1) t < N`, or a
      symbolic `E` whose bound satisfies `s + (bound - 1) t < N`
      (`wpe[:T]` on a `[max_len, d]` table: `T <= max_len`);
    - symbolic size `D` (at least 1 at run time): the whole dimension
      (result `D`, `s = 0`, `t = 1`), or its first or last element (result
      `1`, `s = 0` or `s = -1`; a negative start counts from the end at run
      time).

    Any other range could leave the tensor for some size of `D`, so it is
    refused. When the selected elements are contiguous in the input (every
    dimension before the first partial one has size 1, and every dimension
    after it is whole) the result is a view into the input.

    ```mlir
    %p = tx.slice %wpe {starts = array<i64: 0, 0>} : (tensor<16x8xf32>) -> tensor<?x8xf32, #tx.dims<T: 16>>
    %c = tx.slice %x {starts = array<i64: 0, 0, 0>} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>) -> tensor<?x1x8xf32, #tx.dims<B: 4>>
    %o = tx.slice %x {starts = array<i64: 0, 0, 1>, strides = array<i64: 1, 1, 2>} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>) -> tensor<?x?x4xf32, #tx.dims<B: 4, T: 16>>
    ```
  }];
  let arguments = (ins Tx_AnyTensor:$input, DenseI64ArrayAttr:$starts,
                       OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs Tx_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The strides, 1 for every dimension when the attribute is absent.
    ::llvm::SmallVector<int64_t> getStrideValues();
    /// Whether the selected elements are one contiguous run of the input
    /// (the result is then a view at an element offset).
    bool isContiguous();
  }];
}

def Tx_ConcatOp : Tx_InferOp<"concat", [TxDifferentiable]> {
  let summary = "joins tensors along one axis";
  let description = [{
    `torch.cat(inputs, axis)`: one or more tensors of one element type and
    rank (>= 1) whose dimensions are equal except along `axis` (negative
    counts from the end), where each is static; the result's `axis`
    dimension is their sum. The gradient of each input is the slice of the
    result's gradient it was copied to.

    ```mlir
    %r = tx.concat %a, %b {axis = -1 : i64} : (tensor<?x4xf32, #tx.dims<N: 64>>, tensor<?x4xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
    ```
  }];
  let arguments = (ins Variadic<Tx_AnyTensor>:$inputs, I64Attr:$axis);
  let results = (outs Tx_AnyTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
}

def Tx_SplitOp : Tx_InferOp<"split", [TxDifferentiable]> {
  let summary = "cuts a tensor into consecutive pieces along one axis";
  let description = [{
    `torch.split(input, sizes, axis)`: the `axis` dimension (negative
    counts from the end) is static and equals the sum of `sizes` (each
    >= 1); result `j` is the `sizes[j]` elements after the first
    `sizes[0] + ... + sizes[j-1]`, the other dimensions whole. The gradient
    of the input is the concatenation of the results' gradients (zeros for a
    result without one). When every dimension before `axis` has size 1 the
    pieces are views into the input.

    ```mlir
    %a, %b = tx.split %x {axis = -1 : i64, sizes = array<i64: 4, 4>} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> (tensor<?x4xf32, #tx.dims<N: 64>>, tensor<?x4xf32, #tx.dims<N: 64>>)
    ```
  }];
  let arguments = (ins Tx_AnyTensor:$input, I64Attr:$axis,
                       DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<Tx_AnyTensor>:$results);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    /// Whether every piece is a contiguous run of the input (views).
    bool isContiguous();
  }];
}

def Tx_GatherOp : Tx_InferOp<"gather", [TxDifferentiable]> {
  let summary = "picks entries along one axis by an i32 tensor of indices";
  let description = [{
    `result[a..., k..., b...] = input[a..., indices[k...], b...]` along
    `axis` (negative counts from the end): the result's shape is the
    input's with the `axis` dimension replaced by the shape of `indices`
    (any rank; 0-d drops the dimension). This is PyTorch's advanced
    indexing with one tensor index (`table[ids]`, `x[:, idx]`,
    `index_select`). An index `i` in `[-n, n)` picks entry `i` (`n + i`
    when negative) of the `n` along `axis`; any other index is a run-time
    error naming it. The gradient of `input` scatter-adds the result's
    gradient back (tx.gather_grad).

    ```mlir
    %e = tx.gather %wpe, %pos {axis = 0 : i64} : (tensor<16x8xf32>, tensor<?xi32, #tx.dims<T: 16>>) -> tensor<?x8xf32, #tx.dims<T: 16>>
    ```
  }];
  let arguments = (ins Tx_AnyTensor:$input, Tx_IdTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Tx_AnyTensor:$result);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
}

def Tx_ArangeOp : Tx_Op<"arange", [Pure]> {
  let summary = "consecutive i32 integers (position ids)";
  let description = [{
    `result[i] = start + i` for the length of the rank-1 i32 result, static
    or a dim (`torch.arange(T)`); every value fits in i32.

    ```mlir
    %pos = tx.arange : tensor<?xi32, #tx.dims<T: 16>>
    %ids = tx.arange {start = 2 : i64} : tensor<4xi32>
    ```
  }];
  let arguments = (ins DefaultValuedAttr<I64Attr, "0">:$start);
  let results = (outs Tx_IdTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gradient ops
//===----------------------------------------------------------------------===//

def Tx_SliceGradOp : Tx_Op<"slice_grad", [Pure]> {
  let summary = "gradient of a slice: the slice's gradient, zero elsewhere";
  let description = [{
    A zero tensor of the result type (the slice's input) with `dresult`
    written at the elements the forward `tx.slice` with the same `starts`
    and `strides` read; `dresult` has that slice's result type.

    ```mlir
    %dx = tx.slice_grad %dy {starts = array<i64: 0, 0>} : (tensor<?x8xf32, #tx.dims<T: 16>>) -> tensor<16x8xf32>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$dresult, DenseI64ArrayAttr:$starts,
                       OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$dresult attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The strides, 1 for every dimension when the attribute is absent.
    ::llvm::SmallVector<int64_t> getStrideValues();
  }];
}

def Tx_GatherGradOp : Tx_Op<"gather_grad", [Pure]> {
  let summary = "gradient of a gather (scatter-add)";
  let description = [{
    `result[a..., i, b...] = sum over k with indices[k...] = i (or i - n) of
    dresult[a..., k..., b...]`, zero where no index points: the gradient of
    `tx.gather %x, %indices {axis}` with respect to `x`, whose type the
    result has (its `axis` dimension `n` static or symbolic).

    ```mlir
    %dt = tx.gather_grad %pos, %dy {axis = 0 : i64} : (tensor<?xi32, #tx.dims<T: 16>>, tensor<?x8xf32, #tx.dims<T: 16>>) -> tensor<16x8xf32>
    ```
  }];
  let arguments = (ins Tx_IdTensor:$indices, Tx_F32Tensor:$dresult,
                       I64Attr:$axis);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$indices `,` $dresult attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // TX_INDEX_OPS_TD
