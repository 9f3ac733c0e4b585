// RUN: tx-opt %s -split-input-file -verify-diagnostics --tx-plan-memory
//
// tx-plan-memory computes every size, offset and total with checked
// arithmetic: a tensor over the size limits (TxShape.h) or an arena over
// 2^48 bytes (MemoryPlan.h, kMaxArenaBytes) is an error at the op or the
// parameter, never a size that wraps (a bound of 2^62 used to give an
// activation arena of a few KiB).
//
// An arena over the limit from many live buffers, each within the limits:
// 66 tensors of 2^42 bytes live at once, 65 of them in the arena (the first
// shares the returned output's buffer), need 2^48 + 2^42 bytes.
// RUN: %python %S/Inputs/plan-memory-many-live.py 66 > %t.many.mlir
// RUN: %expect-exit 1 tx-opt %t.many.mlir --tx-plan-memory 2>&1 | FileCheck %s --check-prefix=MANY
// RUN: %python %S/Inputs/plan-memory-many-live.py 65 | tx-opt --tx-plan-memory | FileCheck %s --check-prefix=FITS
// FITS: tx.arena_bytes = 281474976710656 : i64
// MANY: error: entry 'many' needs an activation arena over the limit of 281474976710656 bytes (2^48) to hold f32[1048576, 1048576] here

// A bound of 2^62: 2^62 * 8 * 4 bytes wraps to 0 in int64.
func.func @wraps(%x: tensor<?x8xf32, #tx.dims<N: 4611686018427387904>>) -> tensor<?x8xf32, #tx.dims<N: 4611686018427387904>> attributes {tx.entry = "wraps"} {
  // expected-error @+1 {{'tx.relu' op result f32[N, 8] has dimension 0 = N <= 4611686018427387904, over the limit of 2147483647 (2^31 - 1)}}
  %y = tx.relu %x : (tensor<?x8xf32, #tx.dims<N: 4611686018427387904>>) -> tensor<?x8xf32, #tx.dims<N: 4611686018427387904>>
  return %y : tensor<?x8xf32, #tx.dims<N: 4611686018427387904>>
}

// -----

// Every dim within its limit, the tensor not: 2^62 elements.
func.func @elements(%x: tensor<2147483647x2147483647xf32>) -> tensor<2147483647x2147483647xf32> attributes {tx.entry = "elements"} {
  // expected-error @+1 {{'tx.relu' op result f32[2147483647, 2147483647] has up to 4611686014132420609 elements, over the limit of 1099511627776 (2^40) per tensor}}
  %y = tx.relu %x : (tensor<2147483647x2147483647xf32>) -> tensor<2147483647x2147483647xf32>
  return %y : tensor<2147483647x2147483647xf32>
}

// -----

// expected-error @+1 {{parameter 'w', f32[2147483647, 2147483647], has up to 4611686014132420609 elements, over the limit of 1099511627776 (2^40) per tensor}}
tx.parameter @w : tensor<2147483647x2147483647xf32> {init = #tx.init<zeros>}

// -----

// 17 parameters of 2^42 bytes fit in 2^48 bytes, but not with the gradients
// and Adam's two moments of a training module.
tx.parameter @p0 : tensor<1048576x1048576xf32> {init = #tx.init<zeros>}
tx.parameter @p1 : tensor<1048576x1048576xf32> {init = #tx.init<zeros>}
tx.parameter @p2 : tensor<1048576x1048576xf32> {init = #tx.init<zeros>}
tx.parameter @p3 : tensor<1048576x1048576xf32> {init = #tx.init<zeros>}
tx.parameter @p4 : tensor<1048576x1048576xf32> {init = #tx.init<zeros>}
tx.parameter @p5 : tensor<1048576x1048576xf32> {init = #tx.init<zeros>}
tx.parameter @p6 : tensor<1048576x1048576xf32> {init = #tx.init<zeros>}
tx.parameter @p7 : tensor<1048576x1048576xf32> {init = #tx.init<zeros>}
tx.parameter @p8 : tensor<1048576x1048576xf32> {init = #tx.init<zeros>}
tx.parameter @p9 : tensor<1048576x1048576xf32> {init = #tx.init<zeros>}
tx.parameter @p10 : tensor<1048576x1048576xf32> {init = #tx.init<zeros>}
tx.parameter @p11 : tensor<1048576x1048576xf32> {init = #tx.init<zeros>}
tx.parameter @p12 : tensor<1048576x1048576xf32> {init = #tx.init<zeros>}
tx.parameter @p13 : tensor<1048576x1048576xf32> {init = #tx.init<zeros>}
tx.parameter @p14 : tensor<1048576x1048576xf32> {init = #tx.init<zeros>}
tx.parameter @p15 : tensor<1048576x1048576xf32> {init = #tx.init<zeros>}
tx.parameter @p16 : tensor<1048576x1048576xf32> {init = #tx.init<zeros>}
// expected-error @+1 {{the parameter arena with gradients and Adam's two moments would need 299067162758144 bytes, over the limit of 281474976710656 (2^48): parameters may take at most a quarter of it}}
func.func @train() attributes {tx.entry = "train", tx.train_kind = "grad"} {
  return
}
