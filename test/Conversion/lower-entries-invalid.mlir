// RUN: tx-opt %s -split-input-file -verify-diagnostics --tx-lower-entries
//
// IR written or edited by hand that tx-lower-entries cannot lower soundly is
// an error, not a crash or invalid IR: an entry signature that is no tx
// tensor (a segfault in getShape), a function that is no entry reading a
// parameter (the pass erased the parameter under it), a module bound that
// is not the types' (the call checked N <= 9 against an arena planned for
// N <= 4), and planned offsets outside their arena.

// expected-error @+1 {{entry 'bad' returns 'i32', not a tx tensor of f32, i32 or i1}}
func.func @bad(%x: tensor<4xf32>) -> i32 attributes {tx.entry = "bad", tx.arena_bytes = 0 : i64} {
  %c = arith.constant 1 : i32
  return %c : i32
}

// -----

// expected-error @+1 {{entry 'wide' takes 'tensor<4xi64>', not a tx tensor of f32, i32 or i1}}
func.func @wide(%x: tensor<4xi64>) attributes {tx.entry = "wide", tx.arena_bytes = 0 : i64} {
  return
}

// -----

module attributes {tx.param_arena_bytes = 32 : i64} {
tx.parameter @w : tensor<8xf32> {init = #tx.init<ones>, offset = 0 : i64}
func.func @helper() -> tensor<8xf32> {
  // expected-error @+1 {{reads parameter @w in function 'helper', which is no entry}}
  %0 = tx.param @w : tensor<8xf32>
  return %0 : tensor<8xf32>
}
}

// -----

module attributes {tx.dims = {N = 9 : i64}} {
// expected-error @+1 {{dim 'N' has bound 4 in entry 'e''s types but bound 9 in the module's tx.dims}}
func.func @e(%x: tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<?x8xf32, #tx.dims<N: 4>> attributes {tx.entry = "e", tx.arena_bytes = 0 : i64} {
  return %x : tensor<?x8xf32, #tx.dims<N: 4>>
}
}

// -----

module attributes {tx.dims = {N = 4 : i64}} {
func.func @far(%x: tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<?x8xf32, #tx.dims<N: 4>> attributes {tx.entry = "far", tx.arena_bytes = 256 : i64} {
  // expected-error @+1 {{its planned offset 1000000 (128 bytes) is not within the entry's arena (tx.arena_bytes) of 256 bytes}}
  %0 = tx.relu %x {tx.offsets = array<i64: 1000000>} : (tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<?x8xf32, #tx.dims<N: 4>>
  %1 = tx.exp %0 {tx.outputs = array<i64: 0>} : (tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<?x8xf32, #tx.dims<N: 4>>
  return %1 : tensor<?x8xf32, #tx.dims<N: 4>>
}
}

// -----

module attributes {tx.param_arena_bytes = 16 : i64} {
tx.parameter @w : tensor<8xf32> {init = #tx.init<ones>, offset = 0 : i64}
func.func @e(%x: tensor<8xf32>) -> tensor<8xf32> attributes {tx.entry = "e", tx.arena_bytes = 0 : i64} {
  // expected-error @+1 {{its planned offset 0 (32 bytes) is not within the parameter arena (tx.param_arena_bytes) of 16 bytes}}
  %0 = tx.param @w : tensor<8xf32>
  %1 = tx.add %x, %0 {tx.outputs = array<i64: 0>} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
}
