// RUN: tx-opt %s --split-input-file --tx-strip-dropout --tx-inference-fingerprint | FileCheck %s

// tx-inference-fingerprint hashes the entries that do not train, after
// dropout is stripped from them. @base: the reference.
// CHECK: module @base attributes {{{.*}}tx.inference_fingerprint = "[[FP:[0-9a-f]{16}]]"
module @base attributes {tx.dims = {B = 4 : i64}} {
  tx.parameter @l.weight : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @l.bias : tensor<8xf32> {init = #tx.init<zeros>}
  func.func @fwd(%arg0: tensor<?x8xf32, #tx.dims<B: 4>> {tx.name = "x"}) -> (tensor<?x8xf32, #tx.dims<B: 4>> {tx.name = "y"}) attributes {tx.entry = "fwd"} {
    %0 = tx.param @l.weight : tensor<8x8xf32>
    %1 = tx.param @l.bias : tensor<8xf32>
    %2 = tx.linear %arg0, %0 bias %1 : (tensor<?x8xf32, #tx.dims<B: 4>>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<B: 4>>
    %3 = tx.dropout %2 {rate = 1.000000e-01 : f32} : (tensor<?x8xf32, #tx.dims<B: 4>>) -> tensor<?x8xf32, #tx.dims<B: 4>>
    return %3 : tensor<?x8xf32, #tx.dims<B: 4>>
  }
  func.func @train(%arg0: tensor<?x8xf32, #tx.dims<B: 4>> {tx.name = "x"}) -> (tensor<?xf32, #tx.dims<B: 4>> {tx.name = "loss"}) attributes {tx.entry = "train"} {
    %0 = tx.param @l.weight : tensor<8x8xf32>
    %1 = tx.param @l.bias : tensor<8xf32>
    %2 = tx.linear %arg0, %0 bias %1 : (tensor<?x8xf32, #tx.dims<B: 4>>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<B: 4>>
    %3 = tx.dropout %2 {rate = 1.000000e-01 : f32} : (tensor<?x8xf32, #tx.dims<B: 4>>) -> tensor<?x8xf32, #tx.dims<B: 4>>
    %4 = tx.reduce_sum %3 {axes = array<i64: -1>} : (tensor<?x8xf32, #tx.dims<B: 4>>) -> tensor<?xf32, #tx.dims<B: 4>>
    return %4 : tensor<?xf32, #tx.dims<B: 4>>
  }
}

// -----

// Another dropout rate, another train entry, a larger bound of B, another
// init and the entries in another order: the same computation.
// CHECK: module @same attributes {{{.*}}tx.inference_fingerprint = "[[FP]]"
module @same attributes {tx.dims = {B = 64 : i64}} {
  tx.parameter @l.weight : tensor<8x8xf32> {init = #tx.init<normal>}
  tx.parameter @l.bias : tensor<8xf32> {init = #tx.init<zeros>}
  func.func @train(%arg0: tensor<?x8xf32, #tx.dims<B: 64>> {tx.name = "x"}) -> (tensor<?x8xf32, #tx.dims<B: 64>> {tx.name = "loss"}) attributes {tx.entry = "train"} {
    %0 = tx.param @l.weight : tensor<8x8xf32>
    %1 = tx.param @l.bias : tensor<8xf32>
    %2 = tx.linear %arg0, %0 bias %1 : (tensor<?x8xf32, #tx.dims<B: 64>>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<B: 64>>
    %3 = tx.dropout %2 {rate = 5.000000e-01 : f32} : (tensor<?x8xf32, #tx.dims<B: 64>>) -> tensor<?x8xf32, #tx.dims<B: 64>>
    return %3 : tensor<?x8xf32, #tx.dims<B: 64>>
  }
  func.func @fwd(%arg0: tensor<?x8xf32, #tx.dims<B: 64>> {tx.name = "x"}) -> (tensor<?x8xf32, #tx.dims<B: 64>> {tx.name = "y"}) attributes {tx.entry = "fwd"} {
    %0 = tx.param @l.weight : tensor<8x8xf32>
    %1 = tx.param @l.bias : tensor<8xf32>
    %2 = tx.linear %arg0, %0 bias %1 : (tensor<?x8xf32, #tx.dims<B: 64>>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<B: 64>>
    %3 = tx.dropout %2 {rate = 3.000000e-01 : f32} : (tensor<?x8xf32, #tx.dims<B: 64>>) -> tensor<?x8xf32, #tx.dims<B: 64>>
    return %3 : tensor<?x8xf32, #tx.dims<B: 64>>
  }
}

// -----

// An activation in the inference entry: another computation.
// CHECK: // -----
// CHECK-NOT: "[[FP]]"
// CHECK: func.func @fwd
module @activation attributes {tx.dims = {B = 4 : i64}} {
  tx.parameter @l.weight : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @l.bias : tensor<8xf32> {init = #tx.init<zeros>}
  func.func @fwd(%arg0: tensor<?x8xf32, #tx.dims<B: 4>> {tx.name = "x"}) -> (tensor<?x8xf32, #tx.dims<B: 4>> {tx.name = "y"}) attributes {tx.entry = "fwd"} {
    %0 = tx.param @l.weight : tensor<8x8xf32>
    %1 = tx.param @l.bias : tensor<8xf32>
    %2 = tx.linear %arg0, %0 bias %1 {activation = #tx.activation<relu>} : (tensor<?x8xf32, #tx.dims<B: 4>>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<B: 4>>
    return %2 : tensor<?x8xf32, #tx.dims<B: 4>>
  }
}

// -----

// The same ops with their operands swapped (the bias read as the input of
// an add): the operand numbering tells them apart.
// CHECK: module @operands attributes {{{.*}}tx.inference_fingerprint = "[[OPS:[0-9a-f]{16}]]"
module @operands attributes {tx.dims = {B = 4 : i64}} {
  func.func @fwd(%arg0: tensor<?x8xf32, #tx.dims<B: 4>> {tx.name = "x"}, %arg1: tensor<?x8xf32, #tx.dims<B: 4>> {tx.name = "z"}) -> (tensor<?x8xf32, #tx.dims<B: 4>> {tx.name = "y"}) attributes {tx.entry = "fwd"} {
    %0 = tx.sub %arg0, %arg1 : (tensor<?x8xf32, #tx.dims<B: 4>>, tensor<?x8xf32, #tx.dims<B: 4>>) -> tensor<?x8xf32, #tx.dims<B: 4>>
    return %0 : tensor<?x8xf32, #tx.dims<B: 4>>
  }
}

// -----

// CHECK: // -----
// CHECK-NOT: "[[OPS]]"
// CHECK: func.func @fwd
module @swapped attributes {tx.dims = {B = 4 : i64}} {
  func.func @fwd(%arg0: tensor<?x8xf32, #tx.dims<B: 4>> {tx.name = "x"}, %arg1: tensor<?x8xf32, #tx.dims<B: 4>> {tx.name = "z"}) -> (tensor<?x8xf32, #tx.dims<B: 4>> {tx.name = "y"}) attributes {tx.entry = "fwd"} {
    %0 = tx.sub %arg1, %arg0 : (tensor<?x8xf32, #tx.dims<B: 4>>, tensor<?x8xf32, #tx.dims<B: 4>>) -> tensor<?x8xf32, #tx.dims<B: 4>>
    return %0 : tensor<?x8xf32, #tx.dims<B: 4>>
  }
}
