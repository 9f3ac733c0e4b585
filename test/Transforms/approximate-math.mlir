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


// A function without math.tanh (an entry) is left as it is: nothing folded,
// no dead op removed. Rewriting the whole module took time that grew faster
// than the model's depth (docs/benchmarks.md).
// CHECK-LABEL: func.func @entry
// CHECK-NEXT: %[[C1:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[C2:.+]] = arith.constant 2 : i32
// CHECK-NEXT: arith.addi %[[C1]], %[[C2]] : i32
// CHECK-NEXT: return
func.func @entry() {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %dead = arith.addi %c1, %c2 : i32
  return
}

// In a function with math.tanh, the other ops fold as well.
// CHECK-LABEL: func.func @kernel
// CHECK-NOT: arith.addi
// CHECK: return
func.func @kernel(%x: f32) -> f32 {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %dead = arith.addi %c1, %c2 : i32
  %t = math.tanh %x : f32
  return %t : f32
}
