// RUN: tx-opt %s -split-input-file --tx-autodiff --tx-optimizer | FileCheck %s
//
// tx-optimizer after tx-autodiff: the train entry becomes the training step,
// each tx.store_grad a tx.adam_update with the settings of the module's
// tx.optimizer (noam or constant learning rate), in place, so a gradient
// dies at its update; the differentiated entry is kept as train_grad with
// its store_grads. With `clip`, one tx.grad_norm of every gradient comes
// first and scales all updates. Parameters the loss does not reach (zero
// gradient) are not updated. Errors are in optimizer-invalid.mlir.

// CHECK-LABEL: func.func @train
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-SAME: attributes {tx.entry = "train", tx.train_kind = "step"}
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK-NEXT: tx.mul %[[W]], %[[X]]
// CHECK-NEXT: %[[B:.+]] = tx.param @b
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DB:.+]] = tx.sum_to %[[DY]]
// CHECK-NEXT: tx.adam_update @b, %[[DB]] {beta1 = 9.000000e-01 : f64, beta2 = 0.97999999999999998 : f64, d_model = 6.400000e+01 : f64, eps = 1.000000e-09 : f64, lr = 2.000000e+00 : f64, schedule = "noam", warmup = 1.000000e+02 : f64, weight_decay = 0.000000e+00 : f64} : tensor<8xf32>
// CHECK-NEXT: %[[DW:.+]] = tx.mul %[[DY]], %[[X]]
// CHECK-NEXT: tx.adam_update @w, %[[DW]] {beta1 = 9.000000e-01 : f64, beta2 = 0.97999999999999998 : f64, d_model = 6.400000e+01 : f64, eps = 1.000000e-09 : f64, lr = 2.000000e+00 : f64, schedule = "noam", warmup = 1.000000e+02 : f64, weight_decay = 0.000000e+00 : f64} : tensor<4x8xf32>
// CHECK-NOT: tx.store_grad
// CHECK-NOT: tx.adam_update @u
// CHECK: return
// CHECK-LABEL: func.func @train_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-SAME: attributes {tx.entry = "train", tx.train_kind = "grad"}
// CHECK-NOT: tx.adam_update
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DB:.+]] = tx.sum_to %[[DY]]
// CHECK-NEXT: tx.store_grad @b, %[[DB]]
// CHECK-NEXT: %[[DW:.+]] = tx.mul %[[DY]], %[[X]]
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
// CHECK-NEXT: %[[Z:.+]] = tx.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK-NEXT: tx.store_grad @u, %[[Z]]
// CHECK-NEXT: return
module attributes {tx.optimizer = {name = "adam", lr = {schedule = "noam", d_model = 64.0 : f64, warmup = 100.0 : f64, factor = 2.0 : f64}, beta1 = 0.9 : f64, beta2 = 0.98 : f64, eps = 1.0e-9 : f64}} {
  tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
  tx.parameter @b : tensor<8xf32> {init = #tx.init<zeros>}
  tx.parameter @u : tensor<8xf32> {init = #tx.init<zeros>}
  func.func @train(%x: tensor<4x8xf32>) -> tensor<f32> attributes {tx.entry = "train"} {
    %u = tx.param @u : tensor<8xf32>
    %w = tx.param @w : tensor<4x8xf32>
    %y = tx.mul %w, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %b = tx.param @b : tensor<8xf32>
    %z = tx.add %y, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %l = tx.reduce_sum %z {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A constant learning rate (Adam's default betas and eps) with gradient
// clipping and weight decay: the updates wait for the global norm and take
// it as their scale.
// CHECK-LABEL: func.func @train
// CHECK-SAME: tx.train_kind = "step"
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DB:.+]] = tx.sum_to %[[DY]]
// CHECK-NEXT: %[[DW:.+]] = tx.mul %[[DY]], %{{.+}}
// CHECK-NEXT: %[[Z:.+]] = tx.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK-NEXT: %[[S:.+]] = tx.grad_norm %[[DB]], %[[DW]], %[[Z]] {clip = 1.000000e+00 : f64} : tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32> -> tensor<f32>
// CHECK-NEXT: tx.adam_update @b, %[[DB]] scale %[[S]] {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, d_model = 0.000000e+00 : f64, eps = 1.000000e-08 : f64, lr = 1.000000e-03 : f64, schedule = "constant", warmup = 0.000000e+00 : f64, weight_decay = 1.000000e-02 : f64} : tensor<8xf32>, tensor<f32>
// CHECK-NEXT: tx.adam_update @w, %[[DW]] scale %[[S]] {{{.*}}schedule = "constant"{{.*}}} : tensor<4x8xf32>, tensor<f32>
// CHECK-NEXT: return
// CHECK-LABEL: func.func @train_grad
// CHECK-NOT: tx.grad_norm
// CHECK-COUNT-3: tx.store_grad
// CHECK-NOT: tx.adam_update
module attributes {tx.optimizer = {name = "adam", lr = 1.0e-3 : f64, clip = 1.0 : f64, weight_decay = 0.01 : f64}} {
  tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
  tx.parameter @b : tensor<8xf32> {init = #tx.init<zeros>}
  tx.parameter @u : tensor<8xf32> {init = #tx.init<zeros>}
  func.func @train(%x: tensor<4x8xf32>) -> tensor<f32> attributes {tx.entry = "train"} {
    %u = tx.param @u : tensor<8xf32>
    %w = tx.param @w : tensor<4x8xf32>
    %y = tx.mul %w, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %b = tx.param @b : tensor<8xf32>
    %z = tx.add %y, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %l = tx.reduce_sum %z {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Without a tx.optimizer the differentiated entry stays as it is.
// CHECK-LABEL: func.func @train
// CHECK-SAME: tx.train_kind = "grad"
// CHECK: tx.store_grad @w
// CHECK-NOT: func.func @train_grad
module {
  tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
  func.func @train() -> tensor<f32> attributes {tx.entry = "train"} {
    %w = tx.param @w : tensor<4x8xf32>
    %l = tx.reduce_sum %w {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
