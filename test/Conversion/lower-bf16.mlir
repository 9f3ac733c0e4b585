// RUN: tx-opt %s -split-input-file --tx-precision=precision=bf16 --tx-plan-memory --tx-lower-entries | FileCheck %s
//
// A bf16 linear lowers to txrt_linear_fwd_bf16 on the bf16 activation that
// txrt_cast_f32_to_bf16 wrote and on the weight's bf16 copy in the
// parameter arena (no rounding call for the weight: the Adam step and the
// driver write the copy); its gradient to txrt_linear_bwd_bf16. A gated
// linear (SwiGLU) lowers to txrt_linear_gated_fwd_bf16 with its f32 gate.

// CHECK-LABEL: func.func @txc_entry_step
// CHECK-COUNT-1: call @txrt_cast_f32_to_bf16(
// CHECK-NOT: call @txrt_cast_f32_to_bf16(
// CHECK: call @txrt_linear_fwd_bf16(
// CHECK: call @txrt_linear_bwd_bf16(
// CHECK-NOT: call @txrt_linear_fwd(
// CHECK-NOT: call @txrt_cast_f32_to_bf16(
module attributes {tx.dims = {N = 4 : i64}} {
tx.parameter @w : tensor<16x8xf32> {init = #tx.init<normal>}
func.func @step(%x: tensor<?x8xf32, #tx.dims<N: 4>> {tx.name = "x"}) -> (tensor<16x8xf32> {tx.name = "dw"}) attributes {tx.entry = "step"} {
  %w = tx.param @w : tensor<16x8xf32>
  %h = tx.linear %x, %w : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<16x8xf32>) -> tensor<?x16xf32, #tx.dims<N: 4>>
  %dx, %dw, %db = tx.linear_grad %x, %w, %h : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<16x8xf32>, tensor<?x16xf32, #tx.dims<N: 4>>) -> (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<16x8xf32>, tensor<16xf32>)
  return %dw : tensor<16x8xf32>
}
}

// -----

// CHECK-LABEL: func.func @txc_entry_glu
// CHECK-COUNT-1: call @txrt_cast_f32_to_bf16(
// CHECK-NOT: call @txrt_cast_f32_to_bf16(
// CHECK: call @txrt_linear_fwd_bf16(
// CHECK: %[[SILU:.+]] = arith.constant 4 : i32
// CHECK: call @txrt_linear_gated_fwd_bf16(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[SILU]], %{{.+}}, %{{.+}}, %{{.+}}) : (!llvm.ptr, i64, i64, i64, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-NOT: call @txrt_linear_gated_fwd(
module attributes {tx.dims = {N = 4 : i64}} {
tx.parameter @w1 : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
tx.parameter @w3 : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
func.func @glu(%x: tensor<?x8xf32, #tx.dims<N: 4>> {tx.name = "x"}) -> (tensor<?x16xf32, #tx.dims<N: 4>> {tx.name = "y"}) attributes {tx.entry = "glu"} {
  %w1 = tx.param @w1 : tensor<16x8xf32>
  %w3 = tx.param @w3 : tensor<16x8xf32>
  %u = tx.linear %x, %w3 : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<16x8xf32>) -> tensor<?x16xf32, #tx.dims<N: 4>>
  %h = tx.linear %x, %w1 gate %u {activation = #tx.activation<silu>} : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<16x8xf32>, tensor<?x16xf32, #tx.dims<N: 4>>) -> tensor<?x16xf32, #tx.dims<N: 4>>
  return %h : tensor<?x16xf32, #tx.dims<N: 4>>
}
}
