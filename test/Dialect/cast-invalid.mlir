// RUN: tx-opt %s -split-input-file -verify-diagnostics
//
// tx.cast converts between f32 and bf16 only, keeping the shape; a bf16
// linear needs both operands in bf16.

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
