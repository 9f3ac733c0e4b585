// RUN: tx-opt %s --tx-precision=precision=bf16 --tx-plan-memory --tx-lower-entries | FileCheck %s
//
// A norm whose output a bf16 linear reads writes the bf16 copy itself
// (docs/precision.md): add + layer norm lowers to
// txrt_add_layer_norm_fwd_bf16, RMS norm and add + RMS norm to
// txrt_rms_norm_fwd_bf16, and no txrt_cast_f32_to_bf16 pass runs over their
// outputs (the weight's copy is in the parameter arena). The residual
// stream (the add + layer norm's sum, read in f32) keeps the plain kernels'
// f32 outputs too.

// CHECK-LABEL: func.func @txc_entry_step
// CHECK-NOT: call @txrt_cast_f32_to_bf16(
// CHECK-NOT: call @txrt_add_layer_norm_fwd(
// CHECK: call @txrt_add_layer_norm_fwd_bf16(
// CHECK-NOT: call @txrt_cast_f32_to_bf16(
// CHECK: call @txrt_linear_fwd_bf16(
// CHECK-NOT: call @txrt_cast_f32_to_bf16(
// CHECK-NOT: call @txrt_rms_norm_fwd(
// CHECK: call @txrt_rms_norm_fwd_bf16(
// CHECK-NOT: call @txrt_cast_f32_to_bf16(
// CHECK: call @txrt_linear_fwd_bf16(
// CHECK-NOT: call @txrt_cast_f32_to_bf16(
// CHECK: call @txrt_rms_norm_fwd_bf16(
// CHECK-NOT: call @txrt_cast_f32_to_bf16(
// CHECK: call @txrt_linear_fwd_bf16(
// CHECK-NOT: call @txrt_cast_f32_to_bf16(
// CHECK-NOT: call @txrt_rms_norm_fwd(
// CHECK: return
module attributes {tx.dims = {N = 4 : i64}} {
tx.parameter @w : tensor<16x8xf32> {init = #tx.init<normal>}
tx.parameter @g : tensor<8xf32> {init = #tx.init<ones>}
func.func @step(%x: tensor<?x8xf32, #tx.dims<N: 4>> {tx.name = "x"}) -> (tensor<?x16xf32, #tx.dims<N: 4>> {tx.name = "a"}, tensor<?x16xf32, #tx.dims<N: 4>> {tx.name = "b"}, tensor<?x16xf32, #tx.dims<N: 4>> {tx.name = "c"}) attributes {tx.entry = "step"} {
  %w = tx.param @w : tensor<16x8xf32>
  %g = tx.param @g : tensor<8xf32>
  %n:2 = tx.add_layer_norm %x, %x, %g, %g : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<?x8xf32, #tx.dims<N: 4>>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<?x8xf32, #tx.dims<N: 4>>)
  %a = tx.linear %n#0, %w : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<16x8xf32>) -> tensor<?x16xf32, #tx.dims<N: 4>>
  %r = tx.rms_norm %n#0, %g : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<N: 4>>
  %b = tx.linear %r, %w : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<16x8xf32>) -> tensor<?x16xf32, #tx.dims<N: 4>>
  %s:2 = tx.add_rms_norm %r, %n#0, %g : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<?x8xf32, #tx.dims<N: 4>>, tensor<8xf32>) -> (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<?x8xf32, #tx.dims<N: 4>>)
  %c = tx.linear %s#0, %w : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<16x8xf32>) -> tensor<?x16xf32, #tx.dims<N: 4>>
  return %a, %b, %c : tensor<?x16xf32, #tx.dims<N: 4>>, tensor<?x16xf32, #tx.dims<N: 4>>, tensor<?x16xf32, #tx.dims<N: 4>>
}
}
