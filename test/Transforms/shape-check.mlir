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

// expected-error @+1 {{entry 'bad' returns 'i32', not a tx tensor}}
func.func @bad(%x: i32) -> i32 attributes {tx.entry = "bad"} {
  return %x : i32
}
