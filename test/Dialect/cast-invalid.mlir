// RUN: tx-opt %s -split-input-file -verify-diagnostics
//
// tx.cast converts between f32 and bf16 only, keeping the shape; by_producer
// only on a rounding cast of a norm's output (the kernels that write a bf16
// copy); a bf16 linear needs both operands in bf16.

func.func @same_type(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tx.cast' op casts between f32 and bf16; input and result are both 'f32'}}
  %0 = tx.cast %x : tensor<4x8xf32> to tensor<4x8xf32>
  return
}

// -----

func.func @other_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tx.cast' op result bf16[8, 4] must have the input's shape f32[4, 8]}}
  %0 = tx.cast %x : tensor<4x8xf32> to tensor<8x4xbf16>
  return
}

// -----

func.func @to_i32(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tx.cast' op result #0 must be ranked tensor of f32 or bf16}}
  %0 = tx.cast %x : tensor<4x8xf32> to tensor<4x8xi32>
  return
}

// -----

func.func @mixed_linear(%x: tensor<4x8xf32>, %w: tensor<6x8xbf16>) {
  // expected-error @+2 {{linear input f32[4, 8] and weight bf16[6, 8] must have the same element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.linear %x, %w : (tensor<4x8xf32>, tensor<6x8xbf16>) -> tensor<4x6xf32>
  return
}

// -----

func.func @by_producer_of_an_argument(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tx.cast' op by_producer needs the first result of a tx.add_layer_norm, tx.rms_norm or tx.add_rms_norm (the ops that can write a bf16 copy of it)}}
  %0 = tx.cast %x {by_producer} : tensor<4x8xf32> to tensor<4x8xbf16>
  return
}

// -----

func.func @by_producer_of_the_sum(%x: tensor<4x8xf32>, %g: tensor<8xf32>) {
  %y:2 = tx.add_layer_norm %x, %x, %g, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  // expected-error @+1 {{'tx.cast' op by_producer needs the first result of a tx.add_layer_norm}}
  %0 = tx.cast %y#1 {by_producer} : tensor<4x8xf32> to tensor<4x8xbf16>
  return
}

// -----

func.func @by_producer_widening(%x: tensor<4x8xbf16>) {
  // expected-error @+1 {{'tx.cast' op by_producer rounds to bf16; this cast widens bf16[4, 8]}}
  %0 = tx.cast %x {by_producer} : tensor<4x8xbf16> to tensor<4x8xf32>
  return
}
