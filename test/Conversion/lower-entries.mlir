// RUN: tx-opt %s -split-input-file -verify-diagnostics --tx-plan-memory --tx-lower-entries | FileCheck %s
//
// A planned entry becomes txc_entry_<name>(ctx, params, arena, dims, inputs,
// outputs) -> i32: heavy ops call libtxrt (status checked after each call),
// glue becomes outlined linalg kernels shared by ops of the same kind and
// types; the returned value is computed in the caller's output buffer.

module attributes {tx.dims = {N = 4 : i64}} {
tx.parameter @w : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
tx.parameter @b : tensor<16xf32> {init = #tx.init<zeros>}

// CHECK-LABEL: func.func @txc_entry_f(
// CHECK-SAME: %[[CTX:.+]]: !llvm.ptr, %[[PARAMS:.+]]: !llvm.ptr, %[[ARENA:.+]]: !llvm.ptr, %[[DIMS:.+]]: !llvm.ptr, %[[IN:.+]]: !llvm.ptr, %[[OUT:.+]]: !llvm.ptr) -> i32
// The runtime size of dim N:
// CHECK: llvm.load %{{.+}} : !llvm.ptr -> i64
// CHECK: %[[ST:.+]] = call @txrt_linear_fwd(%[[CTX]], %{{.+}}) : (!llvm.ptr, i64, i64, i64, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: %[[BAD:.+]] = arith.cmpi ne, %[[ST]], %{{.+}} : i32
// CHECK: cf.cond_br %[[BAD]], ^[[EXIT:.+]](%[[ST]] : i32), ^
// CHECK: call @__txc_kernel_0_relu(
// CHECK: call @__txc_kernel_0_relu(
// CHECK-NOT: memref.copy
// Every way out, the success's too, passes the exit, which releases the
// context and arena the argument check claimed for the call:
// CHECK: cf.br ^[[EXIT]](%{{.+}} : i32)
// CHECK: ^[[EXIT]](%[[S:.+]]: i32):
// CHECK-NEXT: call @txrt_entry_done(%[[CTX]], %[[ARENA]]) : (!llvm.ptr, !llvm.ptr) -> i32
// CHECK-NEXT: return %[[S]] : i32
func.func @f(%x: tensor<?x8xf32, #tx.dims<N: 4>> {tx.name = "x"}) -> (tensor<?x16xf32, #tx.dims<N: 4>> {tx.name = "y"}) attributes {tx.entry = "f"} {
  %w = tx.param @w : tensor<16x8xf32>
  %b = tx.param @b : tensor<16xf32>
  %h = tx.linear %x, %w bias %b : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32, #tx.dims<N: 4>>
  %r = tx.relu %h : (tensor<?x16xf32, #tx.dims<N: 4>>) -> tensor<?x16xf32, #tx.dims<N: 4>>
  %s = tx.relu %r : (tensor<?x16xf32, #tx.dims<N: 4>>) -> tensor<?x16xf32, #tx.dims<N: 4>>
  return %s : tensor<?x16xf32, #tx.dims<N: 4>>
}
}

// CHECK-LABEL: func.func private @txrt_linear_fwd
// One outlined kernel for both relus: a linalg.generic over memrefs.
// CHECK-LABEL: func.func private @__txc_kernel_0_relu(
// CHECK-SAME: memref<?xf32>
// CHECK: linalg.generic
// relu as PyTorch's: x < 0 ? 0 : x (-0 stays -0, NaN stays NaN).
// CHECK: %[[NEG:.+]] = arith.cmpf olt, %[[RX:.+]], %[[ZERO:.+]] : f32
// CHECK-NEXT: arith.select %[[NEG]], %[[ZERO]], %[[RX]] : f32
// CHECK-NOT: func.func private @__txc_kernel_1

// -----

// A dim the module does not declare is an error, not a crash.
func.func @g(%x: tensor<?x8xf32, #tx.dims<M: 4>>) -> tensor<?x8xf32, #tx.dims<M: 4>> attributes {tx.entry = "g"} {
  // expected-error @+1 {{'tx.relu' op uses dimension 'M' that the module's tx.dims does not declare}}
  %r = tx.relu %x : (tensor<?x8xf32, #tx.dims<M: 4>>) -> tensor<?x8xf32, #tx.dims<M: 4>>
  return %r : tensor<?x8xf32, #tx.dims<M: 4>>
}

// -----

// A rank-5 matmul (grouped-query scores: queries [2, 2, 2, 5, 4], keys
// broadcast over the inner head axis [2, 2, 1, 5, 4]): libtxrt takes two batch
// dims, so the outer two, dense in every operand, merge into one of 2 * 2.
// CHECK-LABEL: func.func @txc_entry_grouped(
// CHECK: %[[FOUR:.+]] = arith.muli %c2{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}} : index
// CHECK: %[[B0:.+]] = arith.index_cast %[[FOUR]] : index to i64
// CHECK: %[[B1:.+]] = arith.index_cast %c2{{(_[0-9]+)?}} : index to i64
// CHECK: call @txrt_matmul(%{{[^,]+}}, %{{[^,]+}}, %[[B0]], %[[B1]], 
func.func @grouped(%q: tensor<2x2x2x5x4xf32> {tx.name = "q"}, %k: tensor<2x2x1x5x4xf32> {tx.name = "k"}) -> (tensor<2x2x2x5x5xf32> {tx.name = "s"}) attributes {tx.entry = "grouped"} {
  %s = tx.matmul %q, %k {transpose_rhs} : (tensor<2x2x2x5x4xf32>, tensor<2x2x1x5x4xf32>) -> tensor<2x2x2x5x5xf32>
  return %s : tensor<2x2x2x5x5xf32>
}

// -----

// Batch dims that neither operand lets merge (the keys broadcast the middle
// one of three) are an error, not a wrong call.
func.func @unmergeable(%q: tensor<2x3x4x5x4xf32> {tx.name = "q"}, %k: tensor<2x1x4x5x4xf32> {tx.name = "k"}) -> (tensor<2x3x4x5x5xf32> {tx.name = "s"}) attributes {tx.entry = "unmergeable"} {
  // expected-error @+1 {{'matmul' cannot be lowered to native code: its batch dimensions}}
  %s = tx.matmul %q, %k {transpose_rhs} : (tensor<2x3x4x5x4xf32>, tensor<2x1x4x5x4xf32>) -> tensor<2x3x4x5x5xf32>
  return %s : tensor<2x3x4x5x5xf32>
}

// -----

// A gated linear (SwiGLU) calls txrt_linear_gated_fwd with activation 4
// (TXRT_ACTIVATION_SILU) and the gate's buffer before the (absent) residual.
module attributes {tx.dims = {N = 4 : i64}} {
tx.parameter @w1 : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
tx.parameter @w3 : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}

// CHECK-LABEL: func.func @txc_entry_glu(
// CHECK: call @txrt_linear_fwd(
// CHECK: %[[SILU:.+]] = arith.constant 4 : i32
// CHECK: call @txrt_linear_gated_fwd(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[SILU]], %{{.+}}, %{{.+}}, %{{.+}}) : (!llvm.ptr, i64, i64, i64, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
func.func @glu(%x: tensor<?x8xf32, #tx.dims<N: 4>> {tx.name = "x"}) -> (tensor<?x16xf32, #tx.dims<N: 4>> {tx.name = "y"}) attributes {tx.entry = "glu"} {
  %w1 = tx.param @w1 : tensor<16x8xf32>
  %w3 = tx.param @w3 : tensor<16x8xf32>
  %u = tx.linear %x, %w3 : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<16x8xf32>) -> tensor<?x16xf32, #tx.dims<N: 4>>
  %h = tx.linear %x, %w1 gate %u {activation = #tx.activation<silu>} : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<16x8xf32>, tensor<?x16xf32, #tx.dims<N: 4>>) -> tensor<?x16xf32, #tx.dims<N: 4>>
  return %h : tensor<?x16xf32, #tx.dims<N: 4>>
}
}

// -----

// layer_norm_grad of a kept sum (no rhs) with the sum's own gradient (dsum):
// txrt_add_layer_norm_bwd reading the sum (x and r NULL) and adding dsum.
// (The plain txrt_layer_norm_bwd has no dsum: it would drop it.)
module attributes {tx.dims = {N = 4 : i64}} {
// CHECK-LABEL: func.func @txc_entry_ln_grad(
// CHECK: %[[X:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %[[R:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK: call @txrt_add_layer_norm_bwd(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[X]], %[[R]], %[[S:[^,]+]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[DSUM:[^,]+]], %{{.+}}) :
// CHECK-NOT: call @txrt_layer_norm_bwd
func.func @ln_grad(%s: tensor<?x8xf32, #tx.dims<N: 4>> {tx.name = "s"}, %g: tensor<8xf32> {tx.name = "g"}, %dy: tensor<?x8xf32, #tx.dims<N: 4>> {tx.name = "dy"}, %dsum: tensor<?x8xf32, #tx.dims<N: 4>> {tx.name = "dsum"}) -> (tensor<?x8xf32, #tx.dims<N: 4>> {tx.name = "dx"}) attributes {tx.entry = "ln_grad"} {
  %dx, %dg, %db = tx.layer_norm_grad %s, %g, %dy dsum %dsum : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<8xf32>, tensor<?x8xf32, #tx.dims<N: 4>>, tensor<?x8xf32, #tx.dims<N: 4>>) -> (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<8xf32>, tensor<8xf32>)
  return %dx : tensor<?x8xf32, #tx.dims<N: 4>>
}
}
