// RUN: tx-opt %s -split-input-file -verify-diagnostics
//
// One case per verifier and shape-inference error of the ops of
// TxMathOps.td.

func.func @unary_type(%x: tensor<4x8xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of f32 (with #tx.dims for its dynamic dims)}}
  %0 = tx.exp %x : (tensor<4x8xi32>) -> tensor<4x8xi32>
  return
}

// -----

func.func @cos_type(%x: tensor<4x8xi1>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of f32 (with #tx.dims for its dynamic dims)}}
  %0 = tx.cos %x : (tensor<4x8xi1>) -> tensor<4x8xi1>
  return
}

// -----

func.func @sin_result(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'tx.sin' op inferred type(s) 'tensor<4x8xf32>' are incompatible with return type(s) of operation 'tensor<8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.sin %x : (tensor<4x8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @unary_result(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'tx.tanh' op inferred type(s) 'tensor<4x8xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.tanh %x : (tensor<4x8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @pow_exponent(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{pow exponent must be finite, got inf}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.pow %x {exponent = 0x7F800000 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @pow_missing(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tx.pow' op requires attribute 'exponent'}}
  %0 = tx.pow %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @minimum_broadcast(%a: tensor<4x8xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{shapes [4, 8] and [4] do not broadcast: dimension 1 is 8 vs 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.minimum %a, %b : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @maximum_type(%a: tensor<4x8xf32>, %b: tensor<8xi32>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of f32 (with #tx.dims for its dynamic dims)}}
  %0 = tx.maximum %a, %b : (tensor<4x8xf32>, tensor<8xi32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @clamp_unbounded(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{clamp needs a min or a max bound}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.clamp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @clamp_order(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{clamp min 1 is greater than max -1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.clamp %x {min = 1.0 : f32, max = -1.0 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @clamp_nan(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{clamp bounds must not be NaN}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.clamp %x {max = 0x7FC00000 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @where_condition(%c: tensor<4x8xf32>, %x: tensor<4x8xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of i1 (with #tx.dims for its dynamic dims)}}
  %0 = tx.where %c, %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @where_broadcast(%c: tensor<4x1xi1>, %x: tensor<4x8xf32>, %y: tensor<3x8xf32>) {
  // expected-error @+2 {{where operands do not broadcast: shapes [4, 8] and [3, 8] do not broadcast: dimension 0 is 4 vs 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.where %c, %x, %y : (tensor<4x1xi1>, tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @where_condition_broadcast(%c: tensor<5x1xi1>, %x: tensor<4x8xf32>) {
  // expected-error @+2 {{where operands do not broadcast: shapes [5, 1] and [4, 8] do not broadcast: dimension 0 is 5 vs 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.where %c, %x, %x : (tensor<5x1xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @reduce_max_axis(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.reduce_max %x {axes = array<i64: 2>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @unary_grad_type(%y: tensor<4x8xf32>, %dy: tensor<8xf32>) {
  // expected-error @+2 {{unary_grad dresult must have type f32[4, 8], got f32[8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.unary_grad %y, %dy {function = #tx.unary<exp>} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @unary_grad_function(%y: tensor<4x8xf32>) {
  // expected-error @+2 {{expected ::mlir::tx::UnaryFn to be one of: exp, log, sqrt, rsqrt, abs, tanh, sigmoid, silu, gelu_tanh}}
  // expected-error @+1 {{failed to parse Tx_UnaryFnAttr parameter 'value'}}
  %0 = tx.unary_grad %y, %y {function = #tx.unary<cosh>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @reduce_mean_grad_shape(%dy: tensor<4x1xf32>) {
  // expected-error @+1 {{'tx.reduce_mean_grad' op dresult f32[4, 1] does not broadcast to f32[5, 8]}}
  %0 = tx.reduce_mean_grad %dy : (tensor<4x1xf32>) -> tensor<5x8xf32>
  return
}

// -----

func.func @to_float_of_f32(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of i32 or i1}}
  %0 = tx.to_float %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}
