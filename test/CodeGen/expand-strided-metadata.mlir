// RUN: tx-opt %s --tx-expand-strided-metadata | FileCheck %s

// tx-expand-strided-metadata: a subview becomes a reinterpret_cast of its
// source's base buffer at the computed offset, folded where the sizes are
// static; each function is rewritten on its own. Unreachable blocks are
// erased (the dialect conversions would skip them), but no other region
// simplification runs: the dead block argument of ^bb1 stays.

// CHECK-LABEL: func.func @entry
// CHECK-NEXT: %[[BASE:.+]], %{{.+}}, %{{.+}}:2, %{{.+}}:2 = memref.extract_strided_metadata %arg0
// CHECK-NEXT: %[[VIEW:.+]] = memref.reinterpret_cast %[[BASE]] to offset: [136], sizes: [4, 4], strides: [64, 1]
// CHECK-NEXT: cf.br ^bb1(%arg1 : index)
// CHECK-NEXT: ^bb1(%{{.+}}: index):
// CHECK-NEXT: return %[[VIEW]]
// CHECK-NEXT: }
func.func @entry(%buffer: memref<64x64xf32>, %unused: index) -> memref<4x4xf32, strided<[64, 1], offset: 136>> {
  %view = memref.subview %buffer[2, 8] [4, 4] [1, 1]
      : memref<64x64xf32> to memref<4x4xf32, strided<[64, 1], offset: 136>>
  cf.br ^bb1(%unused : index)
^bb1(%dead: index):
  return %view : memref<4x4xf32, strided<[64, 1], offset: 136>>
^bb2:
  return %view : memref<4x4xf32, strided<[64, 1], offset: 136>>
}

// The aligned pointer of a view is its source's.
// CHECK-LABEL: func.func @pointer
// CHECK-NEXT: %[[P:.+]] = memref.extract_aligned_pointer_as_index %arg0 : memref<64x64xf32> -> index
// CHECK-NEXT: return %[[P]]
func.func @pointer(%buffer: memref<64x64xf32>) -> index {
  %view = memref.subview %buffer[2, 8] [4, 4] [1, 1]
      : memref<64x64xf32> to memref<4x4xf32, strided<[64, 1], offset: 136>>
  %pointer = memref.extract_aligned_pointer_as_index %view
      : memref<4x4xf32, strided<[64, 1], offset: 136>> -> index
  return %pointer : index
}
