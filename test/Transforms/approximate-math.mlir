// RUN: tx-opt %s --tx-approximate-math | FileCheck %s
//
// tx-approximate-math replaces math.tanh (no LLVM intrinsic) by arith ops
// and leaves the math ops that have one (exp, log, sqrt, rsqrt, powf, ...).

// CHECK-LABEL: func.func @glue
// CHECK-NOT: math.tanh
// CHECK: arith.divf
// CHECK: math.exp
// CHECK-NEXT: math.log
// CHECK-NEXT: math.powf
// CHECK-NEXT: return
func.func @glue(%x: f32) -> (f32, f32, f32, f32) {
  %t = math.tanh %x : f32
  %e = math.exp %x : f32
  %l = math.log %x : f32
  %p = math.powf %x, %x : f32
  return %t, %e, %l, %p : f32, f32, f32, f32
}

