// RUN: tx-opt %s -split-input-file -verify-diagnostics --tx-autodiff --tx-optimizer
//
// Optimizers tx-optimizer has no update rule for are errors on the module.

// expected-error @+1 {{optimizer 'sgd' has no update rule in this version of txc (adam has)}}
module attributes {tx.optimizer = {name = "sgd", lr = 1.0e-2 : f64}} {
  tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
  func.func @train() -> tensor<f32> attributes {tx.entry = "train"} {
    %w = tx.param @w : tensor<4x8xf32>
    %l = tx.reduce_sum %w {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// expected-error @+1 {{optimizer '?' has no update rule in this version of txc (adam has)}}
module attributes {tx.optimizer = {lr = 1.0e-2 : f64}} {
  tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
  func.func @train() -> tensor<f32> attributes {tx.entry = "train"} {
    %w = tx.param @w : tensor<4x8xf32>
    %l = tx.reduce_sum %w {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Another kind of value was read as no optimizer: train kept its gradients
// and updated nothing, without a word.
// expected-error @+1 {{tx.optimizer must be a dictionary ({name = "adam", lr = ...}), got 5 : i64}}
module attributes {tx.optimizer = 5 : i64} {
  tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
  func.func @train() -> tensor<f32> attributes {tx.entry = "train"} {
    %w = tx.param @w : tensor<4x8xf32>
    %l = tx.reduce_sum %w {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// The learning-rate schedule is "noam" (the only one the spec language
// writes) or a constant lr; any other is refused, not run as noam.
// expected-error @+1 {{'cosine'}}
module attributes {tx.optimizer = {name = "adam", lr = {schedule = "cosine", d_model = 64.0 : f64, warmup = 100.0 : f64, factor = 1.0 : f64}}} {
  tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
  func.func @train() -> tensor<f32> attributes {tx.entry = "train"} {
    %w = tx.param @w : tensor<4x8xf32>
    %l = tx.reduce_sum %w {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// The values are checked as the .tx front end checks them (hand-written IR
// gave a tx.adam_update whose verifier blamed a tx.param, or no clipping
// for clip <= 0).
// expected-error @+1 {{tx.optimizer: 'lr' = 0 is out of range: it must be positive and a finite f32}}
module attributes {tx.optimizer = {name = "adam", lr = 0.0 : f64}} {
  tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
  func.func @train() -> tensor<f32> attributes {tx.entry = "train"} {
    %w = tx.param @w : tensor<4x8xf32>
    %l = tx.reduce_sum %w {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// expected-error @+1 {{tx.optimizer: 'clip' = -1 is out of range: it must be positive (leave clip out for no clipping) and a finite f32}}
module attributes {tx.optimizer = {name = "adam", lr = 1.0e-3 : f64, clip = -1.0 : f64}} {
  tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
  func.func @train() -> tensor<f32> attributes {tx.entry = "train"} {
    %w = tx.param @w : tensor<4x8xf32>
    %l = tx.reduce_sum %w {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// expected-error @+1 {{tx.optimizer: 'beta2' = 1.5 is out of range: it must be in [0, 1)}}
module attributes {tx.optimizer = {name = "adam", lr = 1.0e-3 : f64, beta2 = 1.5 : f64}} {
  tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
  func.func @train() -> tensor<f32> attributes {tx.entry = "train"} {
    %w = tx.param @w : tensor<4x8xf32>
    %l = tx.reduce_sum %w {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// expected-error @+1 {{tx.optimizer: 'lr' must be a number, got "fast"}}
module attributes {tx.optimizer = {name = "adam", lr = "fast"}} {
  tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
  func.func @train() -> tensor<f32> attributes {tx.entry = "train"} {
    %w = tx.param @w : tensor<4x8xf32>
    %l = tx.reduce_sum %w {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// expected-error @+1 {{tx.optimizer: the noam schedule needs 'warmup'}}
module attributes {tx.optimizer = {name = "adam", lr = {schedule = "noam", d_model = 64.0 : f64, factor = 1.0 : f64}}} {
  tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
  func.func @train() -> tensor<f32> attributes {tx.entry = "train"} {
    %w = tx.param @w : tensor<4x8xf32>
    %l = tx.reduce_sum %w {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
