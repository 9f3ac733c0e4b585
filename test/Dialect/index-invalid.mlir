// RUN: tx-opt %s -split-input-file -verify-diagnostics
//
// One case per verifier and shape-inference error of the ops of
// TxIndexOps.td.

func.func @slice_element(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tx.slice' op changes the element type from f32[4, 8] to i32[4, 8]}}
  %0 = tx.slice %x {starts = array<i64: 0, 0>} : (tensor<4x8xf32>) -> tensor<4x8xi32>
  return
}

// -----

func.func @slice_rank0(%x: tensor<f32>) {
  // expected-error @+1 {{slice needs a tensor of rank >= 1}}
  %0 = tx.slice %x {starts = array<i64>} : (tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @slice_rank(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{slice must keep the rank 2, got [8]}}
  %0 = tx.slice %x {starts = array<i64: 0>} : (tensor<4x8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @slice_starts(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{slice needs 2 starts and strides, got 1 and 2}}
  %0 = tx.slice %x {starts = array<i64: 0>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_stride(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{slice stride 0 of dimension 1 must be >= 1}}
  %0 = tx.slice %x {starts = array<i64: 0, 0>, strides = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_start(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{slice of dimension 1 (size 8) starts at -1, outside it}}
  %0 = tx.slice %x {starts = array<i64: 0, -1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return
}

// -----

func.func @slice_past_end(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{slice of dimension 1 (size 8) from 1 in steps of 2 takes 5 elements, past its end}}
  %0 = tx.slice %x {starts = array<i64: 0, 1>, strides = array<i64: 1, 2>} : (tensor<4x8xf32>) -> tensor<4x5xf32>
  return
}

// -----

func.func @slice_dim_past_end(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{slice of dimension 0 (size 8) from 0 in steps of 1 takes T <= 16 elements, past its end}}
  %0 = tx.slice %x {starts = array<i64: 0, 0>} : (tensor<8x8xf32>) -> tensor<?x8xf32, #tx.dims<T: 16>>
  return
}

// -----

func.func @slice_symbolic(%x: tensor<?x8xf32, #tx.dims<T: 16>>) {
  // expected-error @+1 {{slice of dimension 0 (T, at least 1 at run time) must take all of it or its first or last element, got start 1 and size 1}}
  %0 = tx.slice %x {starts = array<i64: 1, 0>} : (tensor<?x8xf32, #tx.dims<T: 16>>) -> tensor<1x8xf32>
  return
}

// -----

func.func @slice_other_dim(%x: tensor<?x8xf32, #tx.dims<S: 16>>) {
  // expected-error @+1 {{slice of dimension 0 (S, at least 1 at run time) must take all of it or its first or last element, got start 0 and size T}}
  %0 = tx.slice %x {starts = array<i64: 0, 0>} : (tensor<?x8xf32, #tx.dims<S: 16>>) -> tensor<?x8xf32, #tx.dims<T: 16>>
  return
}

// -----

func.func @concat_empty() {
  // expected-error @+2 {{concat needs at least one input}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.concat {axis = 0 : i64} : () -> tensor<4xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.concat %a, %a {axis = 2 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @concat_element(%a: tensor<4x8xf32>, %b: tensor<4x8xi32>) {
  // expected-error @+2 {{concat input 1 is i32[4, 8], but input 0 is f32[4, 8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.concat %a, %b {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xi32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @concat_shape(%a: tensor<4x8xf32>, %b: tensor<3x8xf32>) {
  // expected-error @+2 {{concat input 1 is f32[3, 8], but input 0 is f32[4, 8]: dimension 0 differs}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.concat %a, %b {axis = 1 : i64} : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @concat_symbolic(%a: tensor<?x8xf32, #tx.dims<T: 16>>, %b: tensor<1x8xf32>) {
  // expected-error @+2 {{concat along dimension 0, which is symbolic (T) in input 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.concat %a, %b {axis = 0 : i64} : (tensor<?x8xf32, #tx.dims<T: 16>>, tensor<1x8xf32>) -> tensor<17x8xf32>
  return
}

// -----

func.func @concat_result(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'tx.concat' op inferred type(s) 'tensor<4x16xf32>' are incompatible with return type(s) of operation 'tensor<4x8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.concat %a, %a {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @split_sizes(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{split sizes [4, 3] do not add up to dimension 1 of f32[4, 8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = tx.split %x {axis = 1 : i64, sizes = array<i64: 4, 3>} : (tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x3xf32>)
  return
}

// -----

func.func @split_zero(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{split sizes [8, 0]: a size must be a positive integer, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = tx.split %x {axis = 1 : i64, sizes = array<i64: 8, 0>} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x0xf32>)
  return
}

// -----

func.func @split_symbolic(%x: tensor<?x8xf32, #tx.dims<T: 16>>) {
  // expected-error @+2 {{split along dimension 0, which is symbolic (T)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = tx.split %x {axis = 0 : i64, sizes = array<i64: 1, 1>} : (tensor<?x8xf32, #tx.dims<T: 16>>) -> (tensor<1x8xf32>, tensor<1x8xf32>)
  return
}

// -----

func.func @split_empty(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{split needs at least one size}}
  // expected-error @+1 {{failed to infer returned types}}
  tx.split %x {axis = 1 : i64, sizes = array<i64>} : (tensor<4x8xf32>) -> ()
  return
}

// -----

func.func @gather_axis(%x: tensor<4x8xf32>, %i: tensor<3xi32>) {
  // expected-error @+2 {{axis -3 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.gather %x, %i {axis = -3 : i64} : (tensor<4x8xf32>, tensor<3xi32>) -> tensor<3x8xf32>
  return
}

// -----

func.func @gather_indices(%x: tensor<4x8xf32>, %i: tensor<3xf32>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of i32 (with #tx.dims for its dynamic dims)}}
  %0 = tx.gather %x, %i {axis = 0 : i64} : (tensor<4x8xf32>, tensor<3xf32>) -> tensor<3x8xf32>
  return
}

// -----

func.func @gather_result(%x: tensor<4x8xf32>, %i: tensor<3xi32>) {
  // expected-error @+2 {{'tx.gather' op inferred type(s) 'tensor<4x3xf32>' are incompatible with return type(s) of operation 'tensor<3x8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.gather %x, %i {axis = 1 : i64} : (tensor<4x8xf32>, tensor<3xi32>) -> tensor<3x8xf32>
  return
}

// -----

func.func @arange_rank() {
  // expected-error @+1 {{'tx.arange' op result must have rank 1, got [2, 2]}}
  %0 = tx.arange : tensor<2x2xi32>
  return
}

// -----

func.func @arange_overflow() {
  // expected-error @+1 {{'tx.arange' op values from 2147483647 to 2147483647 + 1 do not fit in i32}}
  %0 = tx.arange {start = 2147483647 : i64} : tensor<2xi32>
  return
}

// -----

func.func @arange_type() {
  // expected-error @+1 {{'tx.arange' op result #0 must be ranked tensor of i32 (with #tx.dims for its dynamic dims)}}
  %0 = tx.arange : tensor<4xf32>
  return
}

// -----

func.func @slice_grad_shape(%dy: tensor<4x3xf32>) {
  // expected-error @+1 {{slice_grad of dimension 1 (size 8) from 6 in steps of 1 takes 3 elements, past its end}}
  %0 = tx.slice_grad %dy {starts = array<i64: 0, 6>} : (tensor<4x3xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @gather_grad_shape(%i: tensor<3xi32>, %dy: tensor<4x8xf32>) {
  // expected-error @+1 {{'tx.gather_grad' op dresult must be [3, 8] (a gather of f32[16, 8] along axis 0 by [3]), got [4, 8]}}
  %0 = tx.gather_grad %i, %dy {axis = 0 : i64} : (tensor<3xi32>, tensor<4x8xf32>) -> tensor<16x8xf32>
  return
}
