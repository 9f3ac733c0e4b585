// RUN: tx-opt %s -split-input-file -verify-diagnostics --tx-shape-check | FileCheck %s

// CHECK-LABEL: func.func @consistent
func.func @consistent(%x: tensor<?x8xf32, #tx.dims<S: 9>>) -> tensor<?x8xf32, #tx.dims<S: 9>> attributes {tx.entry = "e"} {
  %0 = tx.relu %x : (tensor<?x8xf32, #tx.dims<S: 9>>) -> tensor<?x8xf32, #tx.dims<S: 9>>
  return %0 : tensor<?x8xf32, #tx.dims<S: 9>>
}

// -----

// expected-note @+1 {{first bound here}}
func.func @first(%x: tensor<?x8xf32, #tx.dims<S: 9>>) attributes {tx.entry = "first"} {
  return
}
// expected-error @+1 {{symbolic dimension 'S' has bound 12 here but bound 9 elsewhere}}
func.func @second(%y: tensor<?x8xf32, #tx.dims<S: 12>>) attributes {tx.entry = "second"} {
  return
}

// -----

// expected-error @+2 {{entry 'bad' takes 'i32', not a tx tensor of f32, i32 or i1}}
// expected-error @+1 {{entry 'bad' returns 'i32', not a tx tensor of f32, i32 or i1}}
func.func @bad(%x: i32) -> i32 attributes {tx.entry = "bad"} {
  return %x : i32
}

// -----

// Tensors over the size limits (TxShape.h) that the generated code and
// libtxrt could not address: a dim bound over 2^31 - 1, reported once per
// type, and 2^62 elements from dims that are each within the limit.
// expected-error @+1 {{tensor f32[N, 8] has dimension 0 = N <= 4611686018427387904, over the limit of 2147483647 (2^31 - 1)}}
func.func @bound(%x: tensor<?x8xf32, #tx.dims<N: 4611686018427387904>>) -> tensor<?x8xf32, #tx.dims<N: 4611686018427387904>> attributes {tx.entry = "bound"} {
  %y = tx.relu %x : (tensor<?x8xf32, #tx.dims<N: 4611686018427387904>>) -> tensor<?x8xf32, #tx.dims<N: 4611686018427387904>>
  // expected-error @+1 {{tensor f32[2147483647, 2147483647] has up to 4611686014132420609 elements, over the limit of 1099511627776 (2^40) per tensor}}
  %z = tx.constant dense<1.0> : tensor<2147483647x2147483647xf32>
  return %y : tensor<?x8xf32, #tx.dims<N: 4611686018427387904>>
}

// -----

// The module's bound of a dim is the types' (the executable checks each
// call against the module's; the arenas are planned for the types').
// expected-error @+1 {{the module's tx.dims gives 'N' bound 9, but the types give it bound 4 (the arenas are planned for the types' bound)}}
module attributes {tx.dims = {N = 9 : i64}} {
// expected-note @+1 {{the types' bound here}}
func.func @e(%x: tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<?x8xf32, #tx.dims<N: 4>> attributes {tx.entry = "e"} {
  return %x : tensor<?x8xf32, #tx.dims<N: 4>>
}
}
