// RUN: tx-opt %s -split-input-file --tx-fuse-attention | FileCheck %s
// RUN: tx-opt %s -split-input-file --tx-fuse-attention=stats=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS

// Q, K, V are [B=2, h=4, T=5, d_k=4]: the scale 1/sqrt(d_k) is 0.5.

// base.tx: (Q·Kᵀ) / sqrt(d_k), then masked_fill(scores, mask == 0, -1e9).
// CHECK-LABEL: func.func @divide_then_fill
// CHECK: %[[Q:.+]] = tx.split_heads
// CHECK: %[[K:.+]] = tx.split_heads
// CHECK: %[[V:.+]] = tx.split_heads
// CHECK: %[[PM:.+]] = tx.padding_mask %arg1
// CHECK-NEXT: %[[O:.+]] = tx.attention %[[Q]], %[[K]], %[[V]] mask %[[PM]] {scale = 5.000000e-01 : f32}
// CHECK-NEXT: tx.merge_heads %[[O]]
// CHECK-NOT: tx.softmax
// STATS: tx-fuse-attention: fused 1, declined 0
func.func @divide_then_fill(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %kt = tx.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x4x5x4xf32>) -> tensor<2x4x4x5xf32>
  %s0 = tx.matmul %q, %kt : (tensor<2x4x5x4xf32>, tensor<2x4x4x5xf32>) -> tensor<2x4x5x5xf32>
  %cs1 = tx.constant dense<2.0> : tensor<f32>
  %s1 = tx.div %s0, %cs1 : (tensor<2x4x5x5xf32>, tensor<f32>) -> tensor<2x4x5x5xf32>
  %pm = tx.padding_mask %ids : (tensor<2x5xi32>) -> tensor<2x1x1x5xi1>
  %fm = tx.not %pm : (tensor<2x1x1x5xi1>) -> tensor<2x1x1x5xi1>
  %s2 = tx.masked_fill %s1, %fm {value = -1.0e+09 : f32} : (tensor<2x4x5x5xf32>, tensor<2x1x1x5xi1>) -> tensor<2x4x5x5xf32>
  %p = tx.softmax %s2 : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = tx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m : tensor<2x5x16xf32>
}

// -----

// translate/model.tx: masked before scaling, a padding mask written as
// reshape(ids != pad), dropout on the probabilities.
// CHECK-LABEL: func.func @fill_then_multiply
// CHECK: %[[PM:.+]] = tx.padding_mask %arg1 {pad = 3 : i64}
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} mask %[[PM]] {dropout = 1.000000e-01 : f32, scale = 5.000000e-01 : f32}
// CHECK-NOT: tx.cmp
// CHECK-NOT: tx.reshape
// CHECK-NOT: tx.softmax
func.func @fill_then_multiply(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %pad = tx.constant dense<3> : tensor<i32>
  %ne = tx.cmp ne, %ids, %pad : (tensor<2x5xi32>, tensor<i32>) -> tensor<2x5xi1>
  %km = tx.reshape %ne : (tensor<2x5xi1>) -> tensor<2x1x1x5xi1>
  %kt = tx.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x4x5x4xf32>) -> tensor<2x4x4x5xf32>
  %s0 = tx.matmul %q, %kt : (tensor<2x4x5x4xf32>, tensor<2x4x4x5xf32>) -> tensor<2x4x5x5xf32>
  %fm = tx.not %km : (tensor<2x1x1x5xi1>) -> tensor<2x1x1x5xi1>
  %s1 = tx.masked_fill %s0, %fm {value = -1.0e+09 : f32} : (tensor<2x4x5x5xf32>, tensor<2x1x1x5xi1>) -> tensor<2x4x5x5xf32>
  %cs2 = tx.constant dense<0.5> : tensor<f32>
  %s2 = tx.mul %s1, %cs2 : (tensor<2x4x5x5xf32>, tensor<f32>) -> tensor<2x4x5x5xf32>
  %p0 = tx.softmax %s2 : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %p = tx.dropout %p0 {rate = 1.000000e-01 : f32} : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = tx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m : tensor<2x5x16xf32>
}

// -----

// The fill mask written as reshape(ids == pad); transpose_rhs; tx.scale on the
// constant's left side of the fill.
// CHECK-LABEL: func.func @fill_where_pad
// CHECK: %[[PM:.+]] = tx.padding_mask %arg1 :
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} mask %[[PM]] {scale = 5.000000e-01 : f32}
// CHECK-NOT: tx.softmax
func.func @fill_where_pad(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %pad = tx.constant dense<0> : tensor<i32>
  %eq = tx.cmp eq, %pad, %ids : (tensor<i32>, tensor<2x5xi32>) -> tensor<2x5xi1>
  %fm = tx.reshape %eq : (tensor<2x5xi1>) -> tensor<2x1x1x5xi1>
  %s0 = tx.matmul %q, %k {transpose_rhs} : (tensor<2x4x5x4xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x5xf32>
  %s1 = tx.scale %s0 {factor = 5.000000e-01 : f32} : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %s2 = tx.masked_fill %s1, %fm {value = -1.0e+09 : f32} : (tensor<2x4x5x5xf32>, tensor<2x1x1x5xi1>) -> tensor<2x4x5x5xf32>
  %p = tx.softmax %s2 : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = tx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m : tensor<2x5x16xf32>
}

// -----

// Decoder self-attention: padding & causal; the constant on the left of mul.
// CHECK-LABEL: func.func @padding_and_causal
// CHECK: %[[PM:.+]] = tx.padding_mask %arg1
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} mask %[[PM]] {causal, scale = 5.000000e-01 : f32}
// CHECK-NOT: tx.causal_mask
// CHECK-NOT: tx.and
// CHECK-NOT: tx.softmax
func.func @padding_and_causal(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %pm = tx.padding_mask %ids : (tensor<2x5xi32>) -> tensor<2x1x1x5xi1>
  %cm = tx.causal_mask %ids : (tensor<2x5xi32>) -> tensor<5x5xi1>
  %km = tx.and %pm, %cm : (tensor<2x1x1x5xi1>, tensor<5x5xi1>) -> tensor<2x1x5x5xi1>
  %fm = tx.not %km : (tensor<2x1x5x5xi1>) -> tensor<2x1x5x5xi1>
  %kt = tx.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x4x5x4xf32>) -> tensor<2x4x4x5xf32>
  %s0 = tx.matmul %q, %kt : (tensor<2x4x5x4xf32>, tensor<2x4x4x5xf32>) -> tensor<2x4x5x5xf32>
  %c = tx.constant dense<0.5> : tensor<f32>
  %s1 = tx.mul %c, %s0 : (tensor<f32>, tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %s2 = tx.masked_fill %s1, %fm {value = -1.0e+09 : f32} : (tensor<2x4x5x5xf32>, tensor<2x1x5x5xi1>) -> tensor<2x4x5x5xf32>
  %p = tx.softmax %s2 {axis = 3 : i64} : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = tx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m : tensor<2x5x16xf32>
}

// -----

// Padding and causal written as a fill where either is false,
// or(!padding, !causal); a -inf fill.
// CHECK-LABEL: func.func @causal_or
// CHECK: %[[PM:.+]] = tx.padding_mask %arg1
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} mask %[[PM]] {causal, scale = 5.000000e-01 : f32}
func.func @causal_or(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %pm = tx.padding_mask %ids : (tensor<2x5xi32>) -> tensor<2x1x1x5xi1>
  %cm = tx.causal_mask %ids : (tensor<2x5xi32>) -> tensor<5x5xi1>
  %npm = tx.not %pm : (tensor<2x1x1x5xi1>) -> tensor<2x1x1x5xi1>
  %ncm = tx.not %cm : (tensor<5x5xi1>) -> tensor<5x5xi1>
  %fm = tx.or %npm, %ncm : (tensor<2x1x1x5xi1>, tensor<5x5xi1>) -> tensor<2x1x5x5xi1>
  %kt = tx.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x4x5x4xf32>) -> tensor<2x4x4x5xf32>
  %s0 = tx.matmul %q, %kt : (tensor<2x4x5x4xf32>, tensor<2x4x4x5xf32>) -> tensor<2x4x5x5xf32>
  %cs1 = tx.constant dense<2.0> : tensor<f32>
  %s1 = tx.div %s0, %cs1 : (tensor<2x4x5x5xf32>, tensor<f32>) -> tensor<2x4x5x5xf32>
  %s2 = tx.masked_fill %s1, %fm {value = 0xFF800000 : f32} : (tensor<2x4x5x5xf32>, tensor<2x1x5x5xi1>) -> tensor<2x4x5x5xf32>
  %p = tx.softmax %s2 : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = tx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m : tensor<2x5x16xf32>
}

// -----

// No mask at all: tx.attention without a mask.
// CHECK-LABEL: func.func @unmasked
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 5.000000e-01 : f32} :
func.func @unmasked(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %kt = tx.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x4x5x4xf32>) -> tensor<2x4x4x5xf32>
  %s0 = tx.matmul %q, %kt : (tensor<2x4x5x4xf32>, tensor<2x4x4x5xf32>) -> tensor<2x4x5x5xf32>
  %cs1 = tx.constant dense<2.0> : tensor<f32>
  %s1 = tx.div %s0, %cs1 : (tensor<2x4x5x5xf32>, tensor<f32>) -> tensor<2x4x5x5xf32>
  %p = tx.softmax %s1 : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = tx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m : tensor<2x5x16xf32>
}

// -----

// Causal only.
// CHECK-LABEL: func.func @causal_only
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} {causal, scale = 5.000000e-01 : f32} :
func.func @causal_only(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %cm = tx.causal_mask %ids : (tensor<2x5xi32>) -> tensor<5x5xi1>
  %fm = tx.not %cm : (tensor<5x5xi1>) -> tensor<5x5xi1>
  %kt = tx.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x4x5x4xf32>) -> tensor<2x4x4x5xf32>
  %s0 = tx.matmul %q, %kt : (tensor<2x4x5x4xf32>, tensor<2x4x4x5xf32>) -> tensor<2x4x5x5xf32>
  %cs1 = tx.constant dense<2.0> : tensor<f32>
  %s1 = tx.div %s0, %cs1 : (tensor<2x4x5x5xf32>, tensor<f32>) -> tensor<2x4x5x5xf32>
  %s2 = tx.masked_fill %s1, %fm {value = -1.0e+09 : f32} : (tensor<2x4x5x5xf32>, tensor<5x5xi1>) -> tensor<2x4x5x5xf32>
  %p = tx.softmax %s2 : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = tx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m : tensor<2x5x16xf32>
}

// -----

// Not fused: softmax over the query axis.
// CHECK-LABEL: func.func @other_axis
// CHECK-NOT: tx.attention
// CHECK: tx.softmax
// CHECK: tx.matmul
// STATS: tx-fuse-attention: fused 0, declined 1
// STATS-NEXT: tx-fuse-attention: declined at {{.*}}fuse-attention.mlir{{.*}}: softmax over axis 2, not the key axis (-1)
func.func @other_axis(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %kt = tx.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x4x5x4xf32>) -> tensor<2x4x4x5xf32>
  %s0 = tx.matmul %q, %kt : (tensor<2x4x5x4xf32>, tensor<2x4x4x5xf32>) -> tensor<2x4x5x5xf32>
  %cs1 = tx.constant dense<2.0> : tensor<f32>
  %s1 = tx.div %s0, %cs1 : (tensor<2x4x5x5xf32>, tensor<f32>) -> tensor<2x4x5x5xf32>
  %p = tx.softmax %s1 {axis = 2 : i64} : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = tx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m : tensor<2x5x16xf32>
}

// -----

// Not fused: the scale is not a constant.
// CHECK-LABEL: func.func @scale_not_constant
// CHECK-NOT: tx.attention
// CHECK: tx.softmax
// CHECK: tx.matmul
// STATS: tx-fuse-attention: fused 0, declined 1
// STATS-NEXT: tx-fuse-attention: declined at {{.*}}fuse-attention.mlir{{.*}}: tx.div at {{.*}} does not scale by an f32 scalar constant
func.func @scale_not_constant(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>, %d: tensor<f32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %kt = tx.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x4x5x4xf32>) -> tensor<2x4x4x5xf32>
  %s0 = tx.matmul %q, %kt : (tensor<2x4x5x4xf32>, tensor<2x4x4x5xf32>) -> tensor<2x4x5x5xf32>
  %s1 = tx.div %s0, %d : (tensor<2x4x5x5xf32>, tensor<f32>) -> tensor<2x4x5x5xf32>
  %p = tx.softmax %s1 : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = tx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m : tensor<2x5x16xf32>
}

// -----

// Not fused: the scale is 1/3, not 1/sqrt(d_k) = 1/2.
// CHECK-LABEL: func.func @wrong_scale
// CHECK-NOT: tx.attention
// CHECK: tx.softmax
// CHECK: tx.matmul
// STATS: tx-fuse-attention: fused 0, declined 1
// STATS-NEXT: tx-fuse-attention: declined at {{.*}}fuse-attention.mlir{{.*}}: the scale 0.333333 is not 1/sqrt(d_k) = 0.5
func.func @wrong_scale(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %kt = tx.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x4x5x4xf32>) -> tensor<2x4x4x5xf32>
  %s0 = tx.matmul %q, %kt : (tensor<2x4x5x4xf32>, tensor<2x4x4x5xf32>) -> tensor<2x4x5x5xf32>
  %cs1 = tx.constant dense<3.0> : tensor<f32>
  %s1 = tx.div %s0, %cs1 : (tensor<2x4x5x5xf32>, tensor<f32>) -> tensor<2x4x5x5xf32>
  %p = tx.softmax %s1 : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = tx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m : tensor<2x5x16xf32>
}

// -----

// Not fused: no 1/sqrt(d_k) at all.
// CHECK-LABEL: func.func @unscaled
// CHECK-NOT: tx.attention
// CHECK: tx.softmax
// CHECK: tx.matmul
// STATS: tx-fuse-attention: fused 0, declined 1
// STATS-NEXT: tx-fuse-attention: declined at {{.*}}fuse-attention.mlir{{.*}}: the scores are not scaled (expected 1/sqrt(d_k) = 0.5)
func.func @unscaled(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %kt = tx.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x4x5x4xf32>) -> tensor<2x4x4x5xf32>
  %s0 = tx.matmul %q, %kt : (tensor<2x4x5x4xf32>, tensor<2x4x4x5xf32>) -> tensor<2x4x5x5xf32>
  %p = tx.softmax %s0 : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = tx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m : tensor<2x5x16xf32>
}

// -----

// Not fused: the scores are also returned.
// CHECK-LABEL: func.func @scores_used_elsewhere
// CHECK-NOT: tx.attention
// CHECK: tx.softmax
// CHECK: tx.matmul
// STATS: tx-fuse-attention: fused 0, declined 1
// STATS-NEXT: tx-fuse-attention: declined at {{.*}}fuse-attention.mlir{{.*}}: the scores have other users (func.return
func.func @scores_used_elsewhere(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> (tensor<2x5x16xf32>, tensor<2x4x5x5xf32>) {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %kt = tx.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x4x5x4xf32>) -> tensor<2x4x4x5xf32>
  %s0 = tx.matmul %q, %kt : (tensor<2x4x5x4xf32>, tensor<2x4x4x5xf32>) -> tensor<2x4x5x5xf32>
  %cs1 = tx.constant dense<2.0> : tensor<f32>
  %s1 = tx.div %s0, %cs1 : (tensor<2x4x5x5xf32>, tensor<f32>) -> tensor<2x4x5x5xf32>
  %p = tx.softmax %s1 : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = tx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m, %s1 : tensor<2x5x16xf32>, tensor<2x4x5x5xf32>
}

// -----

// Not fused: the probabilities are also returned.
// CHECK-LABEL: func.func @probabilities_used_elsewhere
// CHECK-NOT: tx.attention
// CHECK: tx.softmax
// CHECK: tx.matmul
// STATS: tx-fuse-attention: fused 0, declined 1
// STATS-NEXT: tx-fuse-attention: declined at {{.*}}fuse-attention.mlir{{.*}}: the probabilities have other users (func.return
func.func @probabilities_used_elsewhere(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> (tensor<2x5x16xf32>, tensor<2x4x5x5xf32>) {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %kt = tx.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x4x5x4xf32>) -> tensor<2x4x4x5xf32>
  %s0 = tx.matmul %q, %kt : (tensor<2x4x5x4xf32>, tensor<2x4x4x5xf32>) -> tensor<2x4x5x5xf32>
  %cs1 = tx.constant dense<2.0> : tensor<f32>
  %s1 = tx.div %s0, %cs1 : (tensor<2x4x5x5xf32>, tensor<f32>) -> tensor<2x4x5x5xf32>
  %p = tx.softmax %s1 : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = tx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m, %p : tensor<2x5x16xf32>, tensor<2x4x5x5xf32>
}

// -----

// Not fused: the mask is an arbitrary bool tensor.
// CHECK-LABEL: func.func @arbitrary_mask
// CHECK-NOT: tx.attention
// CHECK: tx.softmax
// CHECK: tx.matmul
// STATS: tx-fuse-attention: fused 0, declined 1
// STATS-NEXT: tx-fuse-attention: declined at {{.*}}fuse-attention.mlir{{.*}}: the mask is neither a padding mask nor a causal mask
func.func @arbitrary_mask(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>, %bm: tensor<2x1x5x5xi1>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %kt = tx.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x4x5x4xf32>) -> tensor<2x4x4x5xf32>
  %s0 = tx.matmul %q, %kt : (tensor<2x4x5x4xf32>, tensor<2x4x4x5xf32>) -> tensor<2x4x5x5xf32>
  %cs1 = tx.constant dense<2.0> : tensor<f32>
  %s1 = tx.div %s0, %cs1 : (tensor<2x4x5x5xf32>, tensor<f32>) -> tensor<2x4x5x5xf32>
  %fm = tx.not %bm : (tensor<2x1x5x5xi1>) -> tensor<2x1x5x5xi1>
  %s2 = tx.masked_fill %s1, %fm {value = -1.0e+09 : f32} : (tensor<2x4x5x5xf32>, tensor<2x1x5x5xi1>) -> tensor<2x4x5x5xf32>
  %p = tx.softmax %s2 : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = tx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m : tensor<2x5x16xf32>
}

// -----

// Not fused: the fill value -1 does not mask.
// CHECK-LABEL: func.func @small_fill
// CHECK-NOT: tx.attention
// CHECK: tx.softmax
// CHECK: tx.matmul
// STATS: tx-fuse-attention: fused 0, declined 1
// STATS-NEXT: tx-fuse-attention: declined at {{.*}}fuse-attention.mlir{{.*}}: the fill value -1 is not a large negative number
func.func @small_fill(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %kt = tx.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x4x5x4xf32>) -> tensor<2x4x4x5xf32>
  %s0 = tx.matmul %q, %kt : (tensor<2x4x5x4xf32>, tensor<2x4x4x5xf32>) -> tensor<2x4x5x5xf32>
  %cs1 = tx.constant dense<2.0> : tensor<f32>
  %s1 = tx.div %s0, %cs1 : (tensor<2x4x5x5xf32>, tensor<f32>) -> tensor<2x4x5x5xf32>
  %pm = tx.padding_mask %ids : (tensor<2x5xi32>) -> tensor<2x1x1x5xi1>
  %fm = tx.not %pm : (tensor<2x1x1x5xi1>) -> tensor<2x1x1x5xi1>
  %s2 = tx.masked_fill %s1, %fm {value = -1.0 : f32} : (tensor<2x4x5x5xf32>, tensor<2x1x1x5xi1>) -> tensor<2x4x5x5xf32>
  %p = tx.softmax %s2 : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = tx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m : tensor<2x5x16xf32>
}

// -----

// Not fused: an additive f32 mask.
// CHECK-LABEL: func.func @additive_mask
// CHECK-NOT: tx.attention
// CHECK: tx.softmax
// CHECK: tx.matmul
// STATS: tx-fuse-attention: fused 0, declined 1
// STATS-NEXT: tx-fuse-attention: declined at {{.*}}fuse-attention.mlir{{.*}}: an additive mask
func.func @additive_mask(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>, %am: tensor<2x4x5x5xf32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %kt = tx.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x4x5x4xf32>) -> tensor<2x4x4x5xf32>
  %s0 = tx.matmul %q, %kt : (tensor<2x4x5x4xf32>, tensor<2x4x4x5xf32>) -> tensor<2x4x5x5xf32>
  %cs1 = tx.constant dense<2.0> : tensor<f32>
  %s1 = tx.div %s0, %cs1 : (tensor<2x4x5x5xf32>, tensor<f32>) -> tensor<2x4x5x5xf32>
  %s2 = tx.add %s1, %am : (tensor<2x4x5x5xf32>, tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %p = tx.softmax %s2 : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = tx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m : tensor<2x5x16xf32>
}

// -----

// Not fused: the fill mask is the padding mask itself (fills the real tokens).
// CHECK-LABEL: func.func @fill_where_kept
// CHECK-NOT: tx.attention
// CHECK: tx.softmax
// CHECK: tx.matmul
// STATS: tx-fuse-attention: fused 0, declined 1
// STATS-NEXT: tx-fuse-attention: declined at {{.*}}fuse-attention.mlir{{.*}}: the fill mask is not the negation of a padding or causal mask
func.func @fill_where_kept(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %kt = tx.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x4x5x4xf32>) -> tensor<2x4x4x5xf32>
  %s0 = tx.matmul %q, %kt : (tensor<2x4x5x4xf32>, tensor<2x4x4x5xf32>) -> tensor<2x4x5x5xf32>
  %cs1 = tx.constant dense<2.0> : tensor<f32>
  %s1 = tx.div %s0, %cs1 : (tensor<2x4x5x5xf32>, tensor<f32>) -> tensor<2x4x5x5xf32>
  %pm = tx.padding_mask %ids : (tensor<2x5xi32>) -> tensor<2x1x1x5xi1>
  %s2 = tx.masked_fill %s1, %pm {value = -1.0e+09 : f32} : (tensor<2x4x5x5xf32>, tensor<2x1x1x5xi1>) -> tensor<2x4x5x5xf32>
  %p = tx.softmax %s2 : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = tx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m : tensor<2x5x16xf32>
}

// -----

// Not fused: the result is not consumed by merge_heads (the runtime kernel's layout).
// CHECK-LABEL: func.func @not_merged
// CHECK-NOT: tx.attention
// CHECK: tx.softmax
// CHECK: tx.matmul
// STATS: tx-fuse-attention: fused 0, declined 1
// STATS-NEXT: tx-fuse-attention: declined at {{.*}}fuse-attention.mlir{{.*}}: the attention output must go to merge_heads only
func.func @not_merged(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x4x5x4xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %kt = tx.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x4x5x4xf32>) -> tensor<2x4x4x5xf32>
  %s0 = tx.matmul %q, %kt : (tensor<2x4x5x4xf32>, tensor<2x4x4x5xf32>) -> tensor<2x4x5x5xf32>
  %cs1 = tx.constant dense<2.0> : tensor<f32>
  %s1 = tx.div %s0, %cs1 : (tensor<2x4x5x5xf32>, tensor<f32>) -> tensor<2x4x5x5xf32>
  %p = tx.softmax %s1 : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = tx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  return %o : tensor<2x4x5x4xf32>
}
