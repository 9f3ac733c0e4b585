// RUN: tx-opt %s -split-input-file -verify-diagnostics --tx-autodiff
//
// What tx-autodiff refuses to differentiate, with the error it reports: a
// train entry without one scalar f32 loss, a loss no parameter reaches, and
// ops on the loss's path whose VJP rule is not implemented for their
// attributes.

tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @non_scalar_loss() -> tensor<4x8xf32> attributes {tx.entry = "train"} {
  // expected-error @+1 {{the train entry's loss is f32[4, 8]; it must be one scalar f32 to be differentiated}}
  %w = tx.param @w : tensor<4x8xf32>
  return %w : tensor<4x8xf32>
}

// -----

// The first block's branch was read as the return: "the loss is f32[4]".
tx.parameter @w : tensor<4xf32> {init = #tx.init<normal>}
// expected-error @+1 {{the train entry has 2 blocks; tx-autodiff differentiates an entry of one block (write loops with scf)}}
func.func @two_blocks(%x: tensor<4xf32>) -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4xf32>
  cf.br ^bb1(%x : tensor<4xf32>)
^bb1(%y: tensor<4xf32>):
  %0 = tx.mul %y, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = tx.reduce_sum %0 {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
// expected-error @+1 {{the train entry returns 2 results; it must return one scalar f32 loss to be differentiated}}
func.func @two_losses() -> (tensor<f32>, tensor<f32>) attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %l = tx.reduce_sum %w {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l, %l : tensor<f32>, tensor<f32>
}

// -----

tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
// expected-error @+1 {{the loss does not depend on any parameter}}
func.func @no_parameter(%x: tensor<4x8xf32>) -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %l = tx.reduce_sum %x {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @softmax_axis() -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  // expected-error @+1 {{'tx.softmax' op gradient is implemented for the last axis only, got axis 0}}
  %s = tx.softmax %w {axis = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %s {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @log_softmax_axis() -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  // expected-error @+1 {{'tx.log_softmax' op gradient is implemented for the last axis only, got axis -2}}
  %s = tx.log_softmax %w {axis = -2 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %s {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A rope angle table that depends on a parameter would need a gradient.
tx.parameter @angles : tensor<4x4xf32> {init = #tx.init<normal>}
tx.parameter @rx : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @rope_trained_angles() -> tensor<f32> attributes {tx.entry = "train"} {
  %x = tx.param @rx : tensor<4x8xf32>
  %a = tx.param @angles : tensor<4x4xf32>
  // expected-error @+1 {{gradient through rope angles that depend on a parameter is not implemented}}
  %r = tx.rope %x angles %a {heads = 1 : i64} : (tensor<4x8xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %r {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
