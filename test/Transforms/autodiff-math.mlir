// RUN: tx-opt %s -split-input-file --tx-autodiff | FileCheck %s
//
// The VJP rules of the tensor math ops (dialect/lib/TxMathOps.cpp) as
// tx-autodiff builds them, one small train entry per rule whose loss sums
// the op's result (so the gradient reaching it is DY =
// broadcast_to(reshape(1.0))): a tx.unary_grad per unary function, reading
// the forward's result or input as PyTorch's formula does; pow through a
// lower power; minimum / maximum, clamp, where and reduce_max through masks
// with PyTorch's rules at ties; a mean over a symbolic dimension through
// tx.reduce_mean_grad.

// Each unary function's gradient reads what its formula needs: the result
// of exp, sqrt, rsqrt, tanh and sigmoid, the input of log, abs, silu,
// gelu_tanh, cos and sin.
// CHECK-LABEL: func.func @unary
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK-NEXT: %[[EXP:.+]] = tx.exp %[[W]]
// CHECK-NEXT: %[[LOG:.+]] = tx.log %[[W]]
// CHECK-NEXT: %[[SQRT:.+]] = tx.sqrt %[[W]]
// CHECK-NEXT: %[[RSQRT:.+]] = tx.rsqrt %[[W]]
// CHECK-NEXT: %[[ABS:.+]] = tx.abs %[[W]]
// CHECK-NEXT: %[[TANH:.+]] = tx.tanh %[[W]]
// CHECK-NEXT: %[[SIGMOID:.+]] = tx.sigmoid %[[W]]
// CHECK-NEXT: %[[SILU:.+]] = tx.silu %[[W]]
// CHECK-NEXT: %[[GELU_TANH:.+]] = tx.gelu_tanh %[[W]]
// CHECK-NEXT: %[[COS:.+]] = tx.cos %[[W]]
// CHECK-NEXT: %[[SIN:.+]] = tx.sin %[[W]]
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-DAG: tx.unary_grad %[[EXP]], %[[DY]] {function = #tx.unary<exp>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-DAG: tx.unary_grad %[[W]], %[[DY]] {function = #tx.unary<log>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-DAG: tx.unary_grad %[[SQRT]], %[[DY]] {function = #tx.unary<sqrt>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-DAG: tx.unary_grad %[[RSQRT]], %[[DY]] {function = #tx.unary<rsqrt>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-DAG: tx.unary_grad %[[W]], %[[DY]] {function = #tx.unary<abs>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-DAG: tx.unary_grad %[[TANH]], %[[DY]] {function = #tx.unary<tanh>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-DAG: tx.unary_grad %[[SIGMOID]], %[[DY]] {function = #tx.unary<sigmoid>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-DAG: tx.unary_grad %[[W]], %[[DY]] {function = #tx.unary<silu>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-DAG: tx.unary_grad %[[W]], %[[DY]] {function = #tx.unary<gelu_tanh>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-DAG: tx.unary_grad %[[W]], %[[DY]] {function = #tx.unary<cos>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-DAG: tx.unary_grad %[[W]], %[[DY]] {function = #tx.unary<sin>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: tx.store_grad @w
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @unary() -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %exp = tx.exp %w : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %log = tx.log %w : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqrt = tx.sqrt %w : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %rsqrt = tx.rsqrt %w : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %abs = tx.abs %w : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %tanh = tx.tanh %w : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %sigmoid = tx.sigmoid %w : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %silu = tx.silu %w : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %gelu_tanh = tx.gelu_tanh %w : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %cos = tx.cos %w : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %sin = tx.sin %w : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s0 = tx.add %exp, %log : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s1 = tx.add %s0, %sqrt : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s2 = tx.add %s1, %rsqrt : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s3 = tx.add %s2, %abs : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s4 = tx.add %s3, %tanh : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s5 = tx.add %s4, %sigmoid : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s6 = tx.add %s5, %silu : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s7 = tx.add %s6, %gelu_tanh : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s8 = tx.add %s7, %cos : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s9 = tx.add %s8, %sin : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %s9 {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// pow: dy * (c * x ** (c - 1)) as PyTorch writes it; c - 1 = 1 reads x
// itself, x ** 1 passes dy on, and x ** 0 gives zeros (pow_backward's
// zeros_like: a gradient that reaches the loss, not none).
// CHECK-LABEL: func.func @pow
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[ZERO:.+]] = tx.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[ZEROS:.+]] = tx.broadcast_to %[[ZERO]]
// CHECK-NEXT: %[[SUM0:.+]] = tx.add %[[DY]], %[[ZEROS]]
// CHECK-NEXT: %[[S2:.+]] = tx.scale %[[W]] {factor = 2.000000e+00 : f32}
// CHECK-NEXT: %[[D2:.+]] = tx.mul %[[DY]], %[[S2]]
// CHECK-NEXT: %[[SUM1:.+]] = tx.add %[[SUM0]], %[[D2]]
// CHECK-NEXT: %[[P:.+]] = tx.pow %[[W]] {exponent = 2.000000e+00 : f32}
// CHECK-NEXT: %[[S3:.+]] = tx.scale %[[P]] {factor = 3.000000e+00 : f32}
// CHECK-NEXT: %[[D3:.+]] = tx.mul %[[DY]], %[[S3]]
// CHECK-NEXT: %[[DW:.+]] = tx.add %[[SUM1]], %[[D3]]
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @pow() -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %a = tx.pow %w {exponent = 3.0 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = tx.pow %w {exponent = 2.0 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = tx.pow %w {exponent = 0.0 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %d = tx.pow %w {exponent = 1.0 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %ab = tx.add %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %cd = tx.add %c, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = tx.add %ab, %cd : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// maximum (torch.maximum): half of dy to each operand where they tie, all
// of it to the larger one elsewhere; the broadcast operand's share is summed
// back to [8].
// CHECK-LABEL: func.func @maximum
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK-NEXT: %[[V:.+]] = tx.param @v
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[TIE:.+]] = tx.cmp  eq, %[[W]], %[[V]]
// CHECK-NEXT: %[[HALF:.+]] = tx.scale %[[DY]] {factor = 5.000000e-01 : f32}
// CHECK-NEXT: %[[SHARED:.+]] = tx.where %[[TIE]], %[[HALF]], %[[DY]]
// CHECK-NEXT: %[[WLOSES:.+]] = tx.cmp  lt, %[[W]], %[[V]]
// CHECK-NEXT: %[[VLOSES:.+]] = tx.cmp  gt, %[[W]], %[[V]]
// CHECK-NEXT: %[[DW:.+]] = tx.masked_fill %[[SHARED]], %[[WLOSES]] {value = 0.000000e+00 : f32}
// CHECK-NEXT: %[[DVF:.+]] = tx.masked_fill %[[SHARED]], %[[VLOSES]] {value = 0.000000e+00 : f32}
// CHECK-NEXT: %[[DV:.+]] = tx.sum_to %[[DVF]] : (tensor<4x8xf32>) -> tensor<8xf32>
// CHECK-NEXT: tx.store_grad @v, %[[DV]]
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @v : tensor<8xf32> {init = #tx.init<normal>}
func.func @maximum() -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %v = tx.param @v : tensor<8xf32>
  %y = tx.maximum %w, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// minimum: the same with the roles of lt and gt swapped.
// CHECK-LABEL: func.func @minimum
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK-NEXT: %[[V:.+]] = tx.param @v
// CHECK: %[[TIE:.+]] = tx.cmp  eq, %[[W]], %[[V]]
// CHECK: %[[WLOSES:.+]] = tx.cmp  gt, %[[W]], %[[V]]
// CHECK-NEXT: %[[VLOSES:.+]] = tx.cmp  lt, %[[W]], %[[V]]
// CHECK-NEXT: %[[DW:.+]] = tx.masked_fill %{{.+}}, %[[WLOSES]]
// CHECK-NEXT: %[[DV:.+]] = tx.masked_fill %{{.+}}, %[[VLOSES]]
// CHECK-NEXT: tx.store_grad @v, %[[DV]]
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @v : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @minimum() -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %v = tx.param @v : tensor<4x8xf32>
  %y = tx.minimum %w, %v : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// clamp: dy where min <= x <= max (bounds included, false at NaN), else 0.
// CHECK-LABEL: func.func @clamp
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[LO:.+]] = tx.constant dense<-1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[GE:.+]] = tx.cmp  ge, %[[W]], %[[LO]]
// CHECK-NEXT: %[[HI:.+]] = tx.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[LE:.+]] = tx.cmp  le, %[[W]], %[[HI]]
// CHECK-NEXT: %[[IN:.+]] = tx.and %[[GE]], %[[LE]]
// CHECK-NEXT: %[[ZERO:.+]] = tx.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DW:.+]] = tx.where %[[IN]], %[[DY]], %[[ZERO]]
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @clamp() -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %y = tx.clamp %w {min = -1.0 : f32, max = 1.0 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// clamp with one bound: one comparison.
// CHECK-LABEL: func.func @clamp_min
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[LO:.+]] = tx.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[GE:.+]] = tx.cmp  ge, %{{.+}}, %[[LO]]
// CHECK-NEXT: %[[ZERO:.+]] = tx.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DW:.+]] = tx.where %[[GE]], %[[DY]], %[[ZERO]]
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @clamp_min() -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %y = tx.clamp %w {min = 0.0 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// where: dy where the condition holds to lhs, where it does not to rhs
// (summed back to rhs's [8]); the condition gets nothing.
// CHECK-LABEL: func.func @where
// CHECK-SAME: (%[[M:.+]]: tensor<4x1xi1>)
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[NOT:.+]] = tx.not %[[M]]
// CHECK-NEXT: %[[DW:.+]] = tx.masked_fill %[[DY]], %[[NOT]] {value = 0.000000e+00 : f32}
// CHECK-NEXT: %[[DVF:.+]] = tx.masked_fill %[[DY]], %[[M]] {value = 0.000000e+00 : f32}
// CHECK-NEXT: %[[DV:.+]] = tx.sum_to %[[DVF]] : (tensor<4x8xf32>) -> tensor<8xf32>
// CHECK-NEXT: tx.store_grad @v, %[[DV]]
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @v : tensor<8xf32> {init = #tx.init<normal>}
func.func @where(%m: tensor<4x1xi1>) -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %v = tx.param @v : tensor<8xf32>
  %y = tx.where %m, %w, %v : (tensor<4x1xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// reduce_max (torch.amax): dy / (the number of elements equal to the
// maximum) at each of them, 0 elsewhere; without keepdim the maximum and dy
// are first reshaped to keep the reduced axis.
// CHECK-LABEL: func.func @reduce_max
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK-NEXT: %[[MAX:.+]] = tx.reduce_max %[[W]] {axes = array<i64: 1>}
// CHECK: %[[DY:.+]] = tx.broadcast_to %{{.+}} : (tensor<1xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[MAXK:.+]] = tx.reshape %[[MAX]] : (tensor<4xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: %[[DYK:.+]] = tx.reshape %[[DY]] : (tensor<4xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: %[[IS:.+]] = tx.cmp  eq, %[[W]], %[[MAXK]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xi1>
// CHECK-NEXT: %[[ONE:.+]] = tx.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[ZERO:.+]] = tx.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[ONES:.+]] = tx.where %[[IS]], %[[ONE]], %[[ZERO]] : (tensor<4x8xi1>, tensor<f32>, tensor<f32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[COUNT:.+]] = tx.reduce_sum %[[ONES]] {axes = array<i64: 1>, keepdim} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: %[[SHARE:.+]] = tx.div %[[DYK]], %[[COUNT]]
// CHECK-NEXT: %[[DW:.+]] = tx.mul %[[SHARE]], %[[ONES]] : (tensor<4x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @reduce_max() -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %m = tx.reduce_max %w {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %l = tx.reduce_sum %m {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A mean over a symbolic dimension: tx.reduce_mean_grad divides by the
// count at run time.
// CHECK-LABEL: func.func @mean_symbolic
// CHECK-SAME: (%[[X:.+]]: tensor<?x8xf32, #tx.dims<N: 4>>)
// CHECK: %[[ONE:.+]] = tx.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[R:.+]] = tx.reshape %[[ONE]] : (tensor<f32>) -> tensor<1x1xf32>
// CHECK-NEXT: %[[DM:.+]] = tx.reduce_mean_grad %[[R]] : (tensor<1x1xf32>) -> tensor<?x8xf32, #tx.dims<N: 4>>
// CHECK-NEXT: %[[DWF:.+]] = tx.mul %[[DM]], %[[X]]
// CHECK-NEXT: %[[DW:.+]] = tx.sum_to %[[DWF]] : (tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<8xf32>
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<8xf32> {init = #tx.init<normal>}
func.func @mean_symbolic(%x: tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<8xf32>
  %y = tx.mul %x, %w : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<N: 4>>
  %l = tx.reduce_mean %y {axes = array<i64: 0, 1>} : (tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<f32>
  return %l : tensor<f32>
}
