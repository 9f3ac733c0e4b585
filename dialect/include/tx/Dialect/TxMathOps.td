//===- TxMathOps.td - element-wise math and max reductions --*- tablegen -*-===//
//
// Tensor math as PyTorch writes it: unary functions (exp, log, sqrt, rsqrt,
// abs, tanh, sigmoid, silu, the tanh approximation of gelu), a power with a
// compile-time exponent, minimum / maximum / where with NumPy broadcasting,
// clamp, and the max reduction; then the gradient ops their VJPs build
// (dialect/lib/TxMathOps.cpp). Included from TxOps.td, whose op classes
// (Tx_UnaryOp, Tx_BinaryOp, Tx_ReduceOp) these ops share.
//
// Each function is its own op rather than one op with a kind attribute: a
// fusion pass matches `tx.silu` by type, and each description states its
// domain. Their gradients share one op, `tx.unary_grad`, whose `function`
// attribute names the forward (one glue kernel per gradient, like
// tx.activation_grad).
//
//===----------------------------------------------------------------------===//
#ifndef TX_MATH_OPS_TD
#define TX_MATH_OPS_TD

//===----------------------------------------------------------------------===//
// Unary functions
//===----------------------------------------------------------------------===//

def Tx_ExpOp : Tx_UnaryOp<"exp", "element-wise exponential"> {
  let description = [{
    `e^x`, element-wise (PyTorch `torch.exp`): +inf past about 88.7, 0 below
    about -103.9. The result has the input's type.

    ```mlir
    %r = tx.exp %x : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
    ```
  }];
}

def Tx_LogOp : Tx_UnaryOp<"log", "element-wise natural logarithm"> {
  let description = [{
    `ln(x)`, element-wise (PyTorch `torch.log`): -inf at 0, NaN below 0.
    The result has the input's type.

    ```mlir
    %r = tx.log %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
}

def Tx_SqrtOp : Tx_UnaryOp<"sqrt", "element-wise square root"> {
  let description = [{
    `√x`, element-wise (PyTorch `torch.sqrt`): NaN below 0. The result has
    the input's type.

    ```mlir
    %r = tx.sqrt %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
}

def Tx_RsqrtOp : Tx_UnaryOp<"rsqrt", "element-wise reciprocal square root"> {
  let description = [{
    `1 / √x`, element-wise, correctly rounded square root then division
    (PyTorch `torch.rsqrt`): +inf at 0, NaN below 0. The result has the
    input's type.

    ```mlir
    %r = tx.rsqrt %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
}

def Tx_AbsOp : Tx_UnaryOp<"abs", "element-wise absolute value"> {
  let description = [{
    `|x|`, element-wise (PyTorch `torch.abs`). The result has the input's
    type.

    ```mlir
    %r = tx.abs %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
}

def Tx_TanhOp : Tx_UnaryOp<"tanh", "element-wise hyperbolic tangent"> {
  let description = [{
    `tanh(x)`, element-wise (PyTorch `torch.tanh`). The result has the
    input's type.

    ```mlir
    %r = tx.tanh %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
}

def Tx_CosOp : Tx_UnaryOp<"cos", "element-wise cosine"> {
  let description = [{
    `cos(x)` of radians, element-wise (PyTorch `torch.cos`), as libm
    computes it. The result has the input's type.

    ```mlir
    %r = tx.cos %x : (tensor<?x8xf32, #tx.dims<T: 64>>) -> tensor<?x8xf32, #tx.dims<T: 64>>
    ```
  }];
}

def Tx_SinOp : Tx_UnaryOp<"sin", "element-wise sine"> {
  let description = [{
    `sin(x)` of radians, element-wise (PyTorch `torch.sin`), as libm
    computes it. The result has the input's type.

    ```mlir
    %r = tx.sin %x : (tensor<?x8xf32, #tx.dims<T: 64>>) -> tensor<?x8xf32, #tx.dims<T: 64>>
    ```
  }];
}

def Tx_ToFloatOp : Tx_InferOp<"to_float"> {
  let summary = "converts integer ids or a mask to f32";
  let description = [{
    `float(x)` of an i32 tensor (exact up to 2^24 in magnitude, rounded to
    nearest beyond) or of a bool mask (1.0 where true, 0.0 where false),
    element-wise (PyTorch `x.float()`); the result has the input's shape.
    Its input is never differentiable (integers), so neither is it.

    ```mlir
    %t = tx.to_float %pos : (tensor<?xi32, #tx.dims<T: 64>>) -> tensor<?xf32, #tx.dims<T: 64>>
    ```
  }];
  let arguments = (ins Tx_TensorOf<[I32, I1], "i32 or i1">:$input);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tx_SigmoidOp : Tx_UnaryOp<"sigmoid", "element-wise logistic sigmoid"> {
  let description = [{
    `1 / (1 + e^-x)`, element-wise (PyTorch `torch.sigmoid`): exactly 0
    below about -88.7 and 1 above about 16.6. The result has the input's
    type.

    ```mlir
    %r = tx.sigmoid %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
}

def Tx_SiluOp : Tx_UnaryOp<"silu", "sigmoid linear unit (swish)"> {
  let description = [{
    `x / (1 + e^-x)`, element-wise (PyTorch `F.silu`). The result has the
    input's type.

    ```mlir
    %r = tx.silu %x : (tensor<?x2048xf32, #tx.dims<N: 4096>>) -> tensor<?x2048xf32, #tx.dims<N: 4096>>
    ```
  }];
}

def Tx_GeluTanhOp : Tx_UnaryOp<"gelu_tanh",
                               "Gaussian error linear unit, tanh approximation"> {
  let description = [{
    `0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))`, element-wise (PyTorch
    `F.gelu(x, approximate='tanh')`; `tx.gelu` is the exact erf form). The
    result has the input's type.

    ```mlir
    %r = tx.gelu_tanh %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
}

def Tx_PowOp : Tx_InferOp<"pow", [TxDifferentiable]> {
  let summary = "element-wise power with a compile-time exponent";
  let description = [{
    `x ** exponent`, element-wise (PyTorch `x ** c`, `x.pow(c)` for a number
    `c`), as PyTorch computes it: exponents 0, 1, 2, 3, -1, -2, 0.5 and -0.5
    are `1`, `x`, `x·x`, `x·x·x`, `1/x`, `1/(x·x)`, `√x` and `1/√x`; others
    are `powf` (NaN for a negative `x` and a fractional exponent, ±inf for 0
    and a negative one). `exponent` is finite; the result has the input's
    type.

    ```mlir
    %r = tx.pow %x {exponent = 2.000000e+00 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$input, F32Attr:$exponent);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Binary and ternary selections
//===----------------------------------------------------------------------===//

def Tx_MinimumOp : Tx_BinaryOp<"minimum", "minimum"> {
  let description = [{
    The smaller of two f32 tensors, element-wise with NumPy broadcasting
    (PyTorch `torch.minimum`): NaN where either is NaN. The gradient goes to
    the smaller operand, half to each where they are equal.

    ```mlir
    %r = tx.minimum %a, %b : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
    ```
  }];
}

def Tx_MaximumOp : Tx_BinaryOp<"maximum", "maximum"> {
  let description = [{
    The larger of two f32 tensors, element-wise with NumPy broadcasting
    (PyTorch `torch.maximum`): NaN where either is NaN. The gradient goes to
    the larger operand, half to each where they are equal.

    ```mlir
    %r = tx.maximum %a, %b : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<f32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
    ```
  }];
}

def Tx_ClampOp : Tx_InferOp<"clamp", [TxDifferentiable]> {
  let summary = "limits every element to [min, max]";
  let description = [{
    `minimum(maximum(x, min), max)` with compile-time bounds (PyTorch
    `torch.clamp(x, min, max)`); either bound may be absent, not both, and
    neither is NaN; `min <= max`. NaN stays NaN. The gradient passes where
    `min <= x <= max` (bounds included) and is 0 elsewhere and at NaN. The
    result has the input's type.

    ```mlir
    %r = tx.clamp %x {min = -1.000000e+00 : f32, max = 1.000000e+00 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$input, OptionalAttr<F32Attr>:$min,
                       OptionalAttr<F32Attr>:$max);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tx_WhereOp : Tx_InferOp<"where", [TxDifferentiable]> {
  let summary = "element-wise selection by a mask";
  let description = [{
    `condition ? lhs : rhs` (PyTorch `torch.where`): an i1 `condition` and two
    f32 tensors, all three broadcasting like NumPy to the result's shape.
    The gradient of `lhs` is the result's gradient where the condition holds
    (0 elsewhere), that of `rhs` where it does not.

    ```mlir
    %r = tx.where %m, %x, %zero : (tensor<?x8xi1, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>, tensor<f32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
    ```
  }];
  let arguments = (ins Tx_MaskTensor:$condition, Tx_F32Tensor:$lhs,
                       Tx_F32Tensor:$rhs);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$condition `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def Tx_ReduceMaxOp : Tx_ReduceOp<"reduce_max", "maximum"> {
  let description = [{
    The maximum of `input` over the distinct `axes` (negative count from the
    end), PyTorch `torch.amax(x, axes, keepdim)`. With `keepdim` the reduced
    dimensions stay as size 1, otherwise they are dropped. The gradient is
    split evenly among the elements equal to the maximum (amax's rule;
    `torch.max(x, dim)` gives it all to one of them instead). A NaN among
    the elements gives NaN, as in PyTorch.

    ```mlir
    %m = tx.reduce_max %x {axes = array<i64: -1>, keepdim} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x1xf32, #tx.dims<N: 64>>
    ```
  }];
}

def Tx_ArgmaxOp : Tx_InferOp<"argmax"> {
  let summary = "the index of the largest element along an axis";
  let description = [{
    `torch.argmax(x, dim = axis, keepdim)` as i32 ids: the first largest
    element along `axis` (negative counts from the end), or the first NaN
    where there is one (torch counts NaN as the largest); 0 along an axis
    whose every element is -inf. With `keepdim` the axis stays as size 1.
    An index: no gradient flows through it.

    ```mlir
    %i = tx.argmax %x {axis = -1 : i64} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?xi32, #tx.dims<N: 64>>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$input, I64Attr:$axis, UnitAttr:$keepdim);
  let results = (outs Tx_IdTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Gradient ops
//===----------------------------------------------------------------------===//

def Tx_UnaryFn : I32EnumAttr<"UnaryFn", "element-wise function of tx.unary_grad", [
    I32EnumAttrCase<"exp", 0>, I32EnumAttrCase<"log", 1>,
    I32EnumAttrCase<"sqrt", 2>, I32EnumAttrCase<"rsqrt", 3>,
    I32EnumAttrCase<"abs", 4>, I32EnumAttrCase<"tanh", 5>,
    I32EnumAttrCase<"sigmoid", 6>, I32EnumAttrCase<"silu", 7>,
    I32EnumAttrCase<"gelu_tanh", 8>, I32EnumAttrCase<"cos", 9>,
    I32EnumAttrCase<"sin", 10>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tx";
}
def Tx_UnaryFnAttr : EnumAttr<Tx_Dialect, Tx_UnaryFn, "unary"> {
  let assemblyFormat = "`<` $value `>`";
}

def Tx_UnaryGradOp : Tx_InferOp<"unary_grad"> {
  let summary = "gradient of an element-wise unary function";
  let description = [{
    `dx = dy · f'(x)` for the forward op named by `function`, from `operand`:
    the forward's result `y` where `f'` is best written with it, else its
    input `x` (PyTorch's backward formulas, in the same order):

    | function | operand | dx |
    |---|---|---|
    | exp | y | `dy · y` |
    | log | x | `dy / x` |
    | sqrt | y | `dy / (2y)` |
    | rsqrt | y | `-0.5 · dy · y³` |
    | abs | x | `dy · sign(x)` (torch.sign: 0 at 0 and at NaN) |
    | tanh | y | `dy · (1 - y²)` |
    | sigmoid | y | `dy · (1 - y) · y` |
    | silu | x | `dy · s · (1 + x (1 - s))`, `s = sigmoid(x)` |
    | cos | x | `-dy · sin(x)` |
    | sin | x | `dy · cos(x)` |
    | gelu_tanh | x | `dy · (0.5 (1 + t) + 0.5 x (1 - t²) √(2/π) (1 + 3 · 0.044715 x²))`, `t` the forward's tanh |

    At the edges of a domain this gives what PyTorch gives: `±inf` for log
    and rsqrt at 0 and sqrt at 0 (NaN where `dy` is 0 there). Same type as
    `dy`.

    ```mlir
    %dx = tx.unary_grad %y, %dy {function = #tx.unary<tanh>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$operand, Tx_F32Tensor:$dresult,
                       Tx_UnaryFnAttr:$function);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$operand `,` $dresult attr-dict `:` functional-type(operands, results)";
}

def Tx_ReduceMeanGradOp : Tx_Op<"reduce_mean_grad", [Pure]> {
  let summary = "gradient of a mean: broadcast and divide by the count";
  let description = [{
    `dresult` (the mean's gradient with the reduced dimensions kept as size
    1) broadcast to the result type (the mean's input) and divided by the
    number of elements each mean averaged: the product, at run time, of the
    result's dimensions where `dresult` has size 1 and the result does not
    (or that `dresult` lacks), so means over symbolic dimensions work.

    ```mlir
    %dx = tx.reduce_mean_grad %dy : (tensor<1x8xf32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
    ```
  }];
  let arguments = (ins Tx_F32Tensor:$dresult);
  let results = (outs Tx_F32Tensor:$result);
  let assemblyFormat = "$dresult attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // TX_MATH_OPS_TD
