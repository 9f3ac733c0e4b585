// RUN: tx-opt %s -split-input-file -verify-diagnostics
//
// One case per check of the role attributes (TxRoles.cpp).

// expected-error @+1 {{'tx.kind' must be a string on a module, one of none, seq2seq, language_model, classifier}}
module attributes {tx.kind = "gpt"} {}

// -----

// expected-error @+1 {{'tx.kind' must be a string on a module}}
module attributes {tx.kind = 1 : i64} {}

// -----

// expected-error @+1 {{'tx.kind_inferred' must be a unit attribute on a module}}
module attributes {tx.kind_inferred = true} {}

// -----

// expected-error @+1 {{'tx.role' on an operation must be an entry role string on a function}}
func.func @f() attributes {tx.role = "tokens"} {
  return
}

// -----

// expected-error @+1 {{argument 0: 'tx.role' must be an input role string}}
func.func @f(%x: tensor<2xi32> {tx.role = "logits"}) {
  return
}

// -----

// expected-error @+1 {{result 0: 'tx.role' must be "cache"}}
func.func @f(%x: tensor<2xi32>) -> (tensor<2xi32> {tx.role = "tokens"}) {
  return %x : tensor<2xi32>
}
