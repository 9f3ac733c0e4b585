// Element-wise glue as the tx lowering writes it (a linalg.generic on
// memrefs with the spec's symbolic sizes) becomes a GPU kernel through
// MLIR's own passes: parallel loops, tiled to 256 threads a block, mapped to
// the grid (a bounds guard in the kernel: the sizes are only known at run
// time), outlined into a gpu.func launched with gpu.launch_func.
// RUN: %mlir-opt %s --convert-linalg-to-parallel-loops \
// RUN:   --scf-parallel-loop-tiling="parallel-loop-tile-sizes=1,256 no-min-max-bounds=true" \
// RUN:   --gpu-map-parallel-loops --convert-parallel-loops-to-gpu \
// RUN:   --gpu-kernel-outlining --lower-affine --canonicalize | FileCheck %s
// REQUIRES: mlir-opt

#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @add_relu(
// CHECK-SAME: %[[A:.+]]: memref<?x?xf32>, %[[B:.+]]: memref<?x?xf32>, %[[C:.+]]: memref<?x?xf32>)
// CHECK: gpu.launch_func @add_relu_kernel::@add_relu_kernel blocks in ({{.*}}) threads in ({{.*}}) args({{.*}}%[[A]] : memref<?x?xf32>, {{.*}}%[[B]] : memref<?x?xf32>, {{.*}}%[[C]] : memref<?x?xf32>
// CHECK: gpu.module @add_relu_kernel
// CHECK: gpu.func @add_relu_kernel({{.*}}) kernel
// CHECK-DAG: gpu.block_id x
// CHECK-DAG: gpu.thread_id y
// CHECK: %[[IN0:.+]] = arith.cmpi ult,
// CHECK: %[[IN1:.+]] = arith.cmpi ult,
// CHECK: %[[IN:.+]] = arith.andi %[[IN0]], %[[IN1]] : i1
// CHECK: scf.if %[[IN]] {
// CHECK: %[[X:.+]] = memref.load
// CHECK: %[[Y:.+]] = memref.load
// CHECK: %[[S:.+]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK: %[[R:.+]] = arith.maximumf %[[S]], %{{.+}} : f32
// CHECK: memref.store %[[R]]
// CHECK: gpu.return
func.func @add_relu(%a: memref<?x?xf32>, %b: memref<?x?xf32>,
                    %c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>)
      outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return
}
