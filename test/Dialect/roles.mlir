// RUN: tx-opt %s -split-input-file | tx-opt -split-input-file | FileCheck %s
//
// The role attributes (TxRoles.h) round-trip; invalid ones are in
// roles-invalid.mlir.


// CHECK: module attributes {tx.kind = "language_model"}
// CHECK-LABEL: func.func @logits(
// CHECK-SAME: {tx.role = "tokens"}
// CHECK-SAME: attributes {tx.role = "logits"}
// CHECK-LABEL: func.func @lm_step(
// CHECK-SAME: {tx.role = "cache_ids"}
// CHECK-SAME: {tx.role = "cache"}
// CHECK-SAME: attributes {tx.role = "lm_step"}
module attributes {tx.kind = "language_model"} {
  func.func @logits(%ids: tensor<2x4xi32> {tx.role = "tokens"}) -> tensor<2x4xi32>
      attributes {tx.role = "logits"} {
    return %ids : tensor<2x4xi32>
  }
  func.func @lm_step(%ids: tensor<2x1xi32> {tx.role = "tokens"},
                     %all: tensor<2x4xi32> {tx.role = "cache_ids"},
                     %k: tensor<2x4x8xf32> {tx.role = "cache"}) -> tensor<2x1xi32>
      attributes {tx.role = "lm_step"} {
    return %ids : tensor<2x1xi32>
  }
}

// -----

// CHECK: module attributes {tx.kind = "seq2seq", tx.kind_inferred}
// CHECK-LABEL: func.func @decode_init(
// CHECK-SAME: -> (tensor<2x3x8xf32> {tx.role = "cache"})
module attributes {tx.kind = "seq2seq", tx.kind_inferred} {
  func.func @decode_init(%m: tensor<2x3x8xf32> {tx.role = "memory"})
      -> (tensor<2x3x8xf32> {tx.role = "cache"})
      attributes {tx.role = "decode_init"} {
    return %m : tensor<2x3x8xf32>
  }
}
