// RUN: tx-opt %s --tx-linalg-to-loops | FileCheck %s

// tx-linalg-to-loops: a glue kernel's linalg op becomes its loop nest;
// functions without a linalg op (the entries) are not rewritten, not even
// folded, and no region is simplified (the unreachable block stays).

#map = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @kernel_add
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK-NEXT: %[[A:.+]] = memref.load %arg0[%[[I]]]
// CHECK-NEXT: %[[B:.+]] = memref.load %arg1[%[[I]]]
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT: memref.store %[[S]], %arg2[%[[I]]]
// CHECK: ^bb1:
// CHECK-NEXT: return
func.func @kernel_add(%a: memref<?xf32>, %b: memref<?xf32>, %out: memref<?xf32>) {
  linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%a, %b : memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
^bb1:
  return
}

// CHECK-LABEL: func.func @entry
// CHECK-NEXT: %[[C1:.+]] = arith.constant 1 : index
// CHECK-NEXT: %[[C2:.+]] = arith.constant 2 : index
// CHECK-NEXT: %[[SUM:.+]] = arith.addi %[[C1]], %[[C2]] : index
// CHECK-NEXT: return %[[SUM]] : index
// CHECK-NEXT: ^bb1:
// CHECK-NEXT: return %[[C1]] : index
func.func @entry() -> index {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %sum = arith.addi %c1, %c2 : index
  return %sum : index
^bb1:
  return %c1 : index
}
