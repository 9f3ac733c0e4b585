// RUN: tx-opt %s -split-input-file --tx-fuse-attention | FileCheck %s
// RUN: tx-opt %s -split-input-file --tx-fuse-attention=stats=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS

// Q, K, V are [B=2, h=4, T=5, d_k=4]: the scale 1/sqrt(d_k) is 0.5.

// base.tx: (Q·Kᵀ) / sqrt(d_k), then masked_fill(scores, mask == 0, -1e9).
// CHECK-LABEL: func.func @divide_then_fill
// CHECK: %[[Q:.+]] = tx.split_heads
// CHECK: %[[K:.+]] = tx.split_heads
// CHECK: %[[V:.+]] = tx.split_heads
// CHECK: %[[PM:.+]] = tx.padding_mask %arg1
// CHECK-NEXT: %[[O:.+]] = tx.attention %[[Q]], %[[K]], %[[V]] mask %[[PM]] {fill = -1.000000e+09 : f32, scale = 5.000000e-01 : f32}
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

// translate/model.tx: masked before scaling (the masked score is -1e9 * 0.5),
// a padding mask written as reshape(ids != pad), dropout on the
// probabilities.
// CHECK-LABEL: func.func @fill_then_multiply
// CHECK: %[[PM:.+]] = tx.padding_mask %arg1 {pad = 3 : i64}
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} mask %[[PM]] {dropout = 1.000000e-01 : f32, fill = -5.000000e+08 : f32, scale = 5.000000e-01 : f32}
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
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} mask %[[PM]] {fill = -1.000000e+09 : f32, scale = 5.000000e-01 : f32}
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
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} mask %[[PM]] {causal, fill = -1.000000e+09 : f32, scale = 5.000000e-01 : f32}
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
// or(!padding, !causal); a -1e4 fill.
// CHECK-LABEL: func.func @causal_or
// CHECK: %[[PM:.+]] = tx.padding_mask %arg1
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} mask %[[PM]] {causal, fill = -1.000000e+04 : f32, scale = 5.000000e-01 : f32}
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
  %s2 = tx.masked_fill %s1, %fm {value = -1.0e+04 : f32} : (tensor<2x4x5x5xf32>, tensor<2x1x5x5xi1>) -> tensor<2x4x5x5xf32>
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
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} {causal, fill = -1.000000e+09 : f32, scale = 5.000000e-01 : f32} :
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

// Any scale is the op's: 1/3 here (not 1/sqrt(d_k) = 1/2).
// CHECK-LABEL: func.func @other_scale
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 0.333333343 : f32} :
// CHECK-NOT: tx.softmax
// STATS: tx-fuse-attention: fused 1, declined 0
func.func @other_scale(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
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

// No scaling at all: scale 1.
// CHECK-LABEL: func.func @unscaled
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 1.000000e+00 : f32} :
// CHECK-NOT: tx.softmax
// STATS: tx-fuse-attention: fused 1, declined 0
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

// An arbitrary bool keep mask (an entry argument) is the op's mask as it is;
// the runtime reads it key by key.
// CHECK-LABEL: func.func @arbitrary_mask
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} mask %arg2 {fill = -1.000000e+09 : f32, scale = 5.000000e-01 : f32}
// CHECK-NOT: tx.not
// CHECK-NOT: tx.softmax
// STATS: tx-fuse-attention: fused 1, declined 0
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

// A fill of -1 does not make masked keys vanish: they keep their share of
// the softmax, which the op computes (fill = -1).
// CHECK-LABEL: func.func @small_fill
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} mask %{{.+}} {fill = -1.000000e+00 : f32, scale = 5.000000e-01 : f32}
// STATS: tx-fuse-attention: fused 1, declined 0
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

// The fill mask is the padding mask itself (it fills the real tokens, a bug
// in the spec perhaps, but the op computes it): the keep mask is its
// negation.
// CHECK-LABEL: func.func @fill_where_kept
// CHECK: %[[PM:.+]] = tx.padding_mask %arg1
// CHECK-NEXT: %[[KEEP:.+]] = tx.not %[[PM]]
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} mask %[[KEEP]] {fill = -1.000000e+09 : f32, scale = 5.000000e-01 : f32}
// STATS: tx-fuse-attention: fused 1, declined 0
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

// -----

// Not fused: a -inf fill (the spec's -1e300 in f32) makes a row whose keys
// are all masked NaN as written.
// CHECK-LABEL: func.func @infinite_fill
// CHECK-NOT: tx.attention
// CHECK: tx.softmax
// STATS: tx-fuse-attention: fused 0, declined 1
// STATS-NEXT: tx-fuse-attention: declined at {{.*}}fuse-attention.mlir{{.*}}: the masked score -inf is not finite in f32 (as written, a row whose keys are all masked is NaN)
func.func @infinite_fill(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %s0 = tx.matmul %q, %k {transpose_rhs} : (tensor<2x4x5x4xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x5xf32>
  %pm = tx.padding_mask %ids : (tensor<2x5xi32>) -> tensor<2x1x1x5xi1>
  %fm = tx.not %pm : (tensor<2x1x1x5xi1>) -> tensor<2x1x1x5xi1>
  %s1 = tx.masked_fill %s0, %fm {value = 0xFF800000 : f32} : (tensor<2x4x5x5xf32>, tensor<2x1x1x5xi1>) -> tensor<2x4x5x5xf32>
  %p = tx.softmax %s1 : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = tx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m : tensor<2x5x16xf32>
}

// -----

// Multi-query attention: K and V have one head, which the matmuls broadcast
// over Q's four; the op reads the one head for all (no copy).
// CHECK-LABEL: func.func @multi_query
// CHECK: %[[Q:.+]] = tx.split_heads %arg0 {heads = 4 : i64}
// CHECK: %[[K:.+]] = tx.split_heads %arg1 {heads = 1 : i64}
// CHECK: %[[V:.+]] = tx.split_heads %arg1 {heads = 1 : i64}
// CHECK: tx.attention %[[Q]], %[[K]], %[[V]] mask %{{.+}} {fill = -1.000000e+09 : f32, scale = 5.000000e-01 : f32} : (tensor<2x4x5x4xf32>, tensor<2x1x5x4xf32>, tensor<2x1x5x4xf32>, tensor<2x1x1x5xi1>) -> tensor<2x4x5x4xf32>
// STATS: tx-fuse-attention: fused 1, declined 0
func.func @multi_query(%x: tensor<2x5x16xf32>, %kv: tensor<2x5x4xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %kv {heads = 1 : i64} : (tensor<2x5x4xf32>) -> tensor<2x1x5x4xf32>
  %v = tx.split_heads %kv {heads = 1 : i64} : (tensor<2x5x4xf32>) -> tensor<2x1x5x4xf32>
  %kt = tx.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x1x5x4xf32>) -> tensor<2x1x4x5xf32>
  %s0 = tx.matmul %q, %kt : (tensor<2x4x5x4xf32>, tensor<2x1x4x5xf32>) -> tensor<2x4x5x5xf32>
  %cs1 = tx.constant dense<2.0> : tensor<f32>
  %s1 = tx.div %s0, %cs1 : (tensor<2x4x5x5xf32>, tensor<f32>) -> tensor<2x4x5x5xf32>
  %pm = tx.padding_mask %ids : (tensor<2x5xi32>) -> tensor<2x1x1x5xi1>
  %fm = tx.not %pm : (tensor<2x1x1x5xi1>) -> tensor<2x1x1x5xi1>
  %s2 = tx.masked_fill %s1, %fm {value = -1.0e+09 : f32} : (tensor<2x4x5x5xf32>, tensor<2x1x1x5xi1>) -> tensor<2x4x5x5xf32>
  %p = tx.softmax %s2 : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = tx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x1x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m : tensor<2x5x16xf32>
}

// -----

// Grouped-query attention without copies: Q [2, 4, 5, 4] seen as
// [2, 2 groups, 2, 5, 4], K and V [2, 2, 5, 4] as [2, 2, 1, 5, 4]; the
// rank-5 mask loses a head axis; the result goes back to [2, 4, 5, 4].
// CHECK-LABEL: func.func @grouped_query
// CHECK: %[[Q:.+]] = tx.split_heads %arg0 {heads = 4 : i64}
// CHECK: %[[K:.+]] = tx.split_heads %arg1 {heads = 2 : i64}
// CHECK: %[[V:.+]] = tx.split_heads %arg1 {heads = 2 : i64}
// CHECK: %[[M:.+]] = tx.reshape %{{.+}} : (tensor<2x1x1x1x5xi1>) -> tensor<2x1x1x5xi1>
// CHECK: %[[O:.+]] = tx.attention %[[Q]], %[[K]], %[[V]] mask %[[M]] {causal, fill = -1.000000e+09 : f32, scale = 5.000000e-01 : f32} : (tensor<2x4x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x1x1x5xi1>) -> tensor<2x4x5x4xf32>
// CHECK-NEXT: tx.merge_heads %[[O]]
// CHECK-NOT: tx.softmax
// STATS: tx-fuse-attention: fused 1, declined 0
func.func @grouped_query(%x: tensor<2x5x16xf32>, %kv: tensor<2x5x8xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %kv {heads = 2 : i64} : (tensor<2x5x8xf32>) -> tensor<2x2x5x4xf32>
  %v = tx.split_heads %kv {heads = 2 : i64} : (tensor<2x5x8xf32>) -> tensor<2x2x5x4xf32>
  %q5 = tx.reshape %q : (tensor<2x4x5x4xf32>) -> tensor<2x2x2x5x4xf32>
  %k5 = tx.reshape %k : (tensor<2x2x5x4xf32>) -> tensor<2x2x1x5x4xf32>
  %v5 = tx.reshape %v : (tensor<2x2x5x4xf32>) -> tensor<2x2x1x5x4xf32>
  %s0 = tx.matmul %q5, %k5 {transpose_rhs} : (tensor<2x2x2x5x4xf32>, tensor<2x2x1x5x4xf32>) -> tensor<2x2x2x5x5xf32>
  %s1 = tx.scale %s0 {factor = 5.000000e-01 : f32} : (tensor<2x2x2x5x5xf32>) -> tensor<2x2x2x5x5xf32>
  %pm = tx.padding_mask %ids : (tensor<2x5xi32>) -> tensor<2x1x1x5xi1>
  %pm5 = tx.reshape %pm : (tensor<2x1x1x5xi1>) -> tensor<2x1x1x1x5xi1>
  %cm = tx.causal_mask %ids : (tensor<2x5xi32>) -> tensor<5x5xi1>
  %km = tx.and %pm5, %cm : (tensor<2x1x1x1x5xi1>, tensor<5x5xi1>) -> tensor<2x1x1x5x5xi1>
  %fm = tx.not %km : (tensor<2x1x1x5x5xi1>) -> tensor<2x1x1x5x5xi1>
  %s2 = tx.masked_fill %s1, %fm {value = -1.0e+09 : f32} : (tensor<2x2x2x5x5xf32>, tensor<2x1x1x5x5xi1>) -> tensor<2x2x2x5x5xf32>
  %p = tx.softmax %s2 : (tensor<2x2x2x5x5xf32>) -> tensor<2x2x2x5x5xf32>
  %o5 = tx.matmul %p, %v5 : (tensor<2x2x2x5x5xf32>, tensor<2x2x1x5x4xf32>) -> tensor<2x2x2x5x4xf32>
  %o = tx.reshape %o5 : (tensor<2x2x2x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m : tensor<2x5x16xf32>
}

// -----

// Not fused: keys grouped along the inner head axis ([2, 1, 2, 5, 4] against
// queries [2, 2, 2, 5, 4]) would pair query head h with key head h % 2, which
// is not grouped-query attention's h / 2.
// CHECK-LABEL: func.func @grouped_the_other_way
// CHECK-NOT: tx.attention
// STATS: tx-fuse-attention: fused 0, declined 1
// STATS-NEXT: tx-fuse-attention: declined at {{.*}}fuse-attention.mlir{{.*}}: the keys and values are not grouped by the query's leading head axis
func.func @grouped_the_other_way(%x: tensor<2x5x16xf32>, %kv: tensor<2x5x8xf32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %kv {heads = 2 : i64} : (tensor<2x5x8xf32>) -> tensor<2x2x5x4xf32>
  %v = tx.split_heads %kv {heads = 2 : i64} : (tensor<2x5x8xf32>) -> tensor<2x2x5x4xf32>
  %q5 = tx.reshape %q : (tensor<2x4x5x4xf32>) -> tensor<2x2x2x5x4xf32>
  %k5 = tx.reshape %k : (tensor<2x2x5x4xf32>) -> tensor<2x1x2x5x4xf32>
  %v5 = tx.reshape %v : (tensor<2x2x5x4xf32>) -> tensor<2x1x2x5x4xf32>
  %s0 = tx.matmul %q5, %k5 {transpose_rhs} : (tensor<2x2x2x5x4xf32>, tensor<2x1x2x5x4xf32>) -> tensor<2x2x2x5x5xf32>
  %s1 = tx.scale %s0 {factor = 5.000000e-01 : f32} : (tensor<2x2x2x5x5xf32>) -> tensor<2x2x2x5x5xf32>
  %p = tx.softmax %s1 : (tensor<2x2x2x5x5xf32>) -> tensor<2x2x2x5x5xf32>
  %o5 = tx.matmul %p, %v5 : (tensor<2x2x2x5x5xf32>, tensor<2x1x2x5x4xf32>) -> tensor<2x2x2x5x4xf32>
  %o = tx.reshape %o5 : (tensor<2x2x2x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m : tensor<2x5x16xf32>
}

// -----

// Query-row and key padding masks written with ==, combined with |: the keep
// mask is !(q == pad | k == pad) = padding_mask & (q != pad), one tx.and of
// the canonical padding mask and the negated query mask (query rows that
// see nothing get the mean of V, as written).
// CHECK-LABEL: func.func @query_rows
// CHECK: %[[PM:.+]] = tx.padding_mask %arg1
// CHECK: %[[QM:.+]] = tx.reshape %{{.+}} : (tensor<2x5xi1>) -> tensor<2x1x5x1xi1>
// CHECK-NEXT: %[[NQ:.+]] = tx.not %[[QM]]
// CHECK-NEXT: %[[KEEP:.+]] = tx.and %[[PM]], %[[NQ]]
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} mask %[[KEEP]] {fill = -1.000000e+09 : f32, scale = 5.000000e-01 : f32}
// STATS: tx-fuse-attention: fused 1, declined 0
func.func @query_rows(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %pad = tx.constant dense<0> : tensor<i32>
  %eq = tx.cmp eq, %ids, %pad : (tensor<2x5xi32>, tensor<i32>) -> tensor<2x5xi1>
  %kf = tx.reshape %eq : (tensor<2x5xi1>) -> tensor<2x1x1x5xi1>
  %qf = tx.reshape %eq : (tensor<2x5xi1>) -> tensor<2x1x5x1xi1>
  %fm = tx.or %kf, %qf : (tensor<2x1x1x5xi1>, tensor<2x1x5x1xi1>) -> tensor<2x1x5x5xi1>
  %s0 = tx.matmul %q, %k {transpose_rhs} : (tensor<2x4x5x4xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x5xf32>
  %s1 = tx.scale %s0 {factor = 5.000000e-01 : f32} : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %s2 = tx.masked_fill %s1, %fm {value = -1.0e+09 : f32} : (tensor<2x4x5x5xf32>, tensor<2x1x5x5xi1>) -> tensor<2x4x5x5xf32>
  %p = tx.softmax %s2 : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = tx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  %m = tx.merge_heads %o : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %m : tensor<2x5x16xf32>
}

// -----

// Two attentions share one written mask: one padding_mask serves both.
// CHECK-LABEL: func.func @shared_mask
// CHECK-COUNT-1: tx.padding_mask
// CHECK-NOT: tx.padding_mask
// STATS: tx-fuse-attention: fused 2, declined 0
func.func @shared_mask(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %pad = tx.constant dense<0> : tensor<i32>
  %ne = tx.cmp ne, %ids, %pad : (tensor<2x5xi32>, tensor<i32>) -> tensor<2x5xi1>
  %km = tx.reshape %ne : (tensor<2x5xi1>) -> tensor<2x1x1x5xi1>
  %fm = tx.not %km : (tensor<2x1x1x5xi1>) -> tensor<2x1x1x5xi1>
  %k1 = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v1 = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %a0 = tx.matmul %q, %k1 {transpose_rhs} : (tensor<2x4x5x4xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x5xf32>
  %a1 = tx.masked_fill %a0, %fm {value = -1.0e+09 : f32} : (tensor<2x4x5x5xf32>, tensor<2x1x1x5xi1>) -> tensor<2x4x5x5xf32>
  %ap = tx.softmax %a1 : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %ao = tx.matmul %ap, %v1 : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  %am = tx.merge_heads %ao : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  %q2 = tx.split_heads %am {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %b0 = tx.matmul %q2, %k1 {transpose_rhs} : (tensor<2x4x5x4xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x5xf32>
  %b1 = tx.masked_fill %b0, %fm {value = -1.0e+09 : f32} : (tensor<2x4x5x5xf32>, tensor<2x1x1x5xi1>) -> tensor<2x4x5x5xf32>
  %bp = tx.softmax %b1 : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %bo = tx.matmul %bp, %v1 : (tensor<2x4x5x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x5x4xf32>
  %bm = tx.merge_heads %bo : (tensor<2x4x5x4xf32>) -> tensor<2x5x16xf32>
  return %bm : tensor<2x5x16xf32>
}

// -----

// Rotary embeddings written out (x * cos(emb) + rotate_half(x) * sin(emb),
// emb = concat(F, F)) on split_heads(z): one tx.rope of z with the angle
// table F, split afterwards; the written chain is gone.
// CHECK-LABEL: func.func @written_rope
// CHECK-SAME: (%[[Z:.+]]: tensor<{{.*}}>, %[[F:.+]]: tensor<{{.*}}>)
// CHECK-NEXT: %[[R:.+]] = tx.rope %[[Z]] angles %[[F]] {heads = 2 : i64}
// CHECK-NEXT: %[[S:.+]] = tx.split_heads %[[R]] {heads = 2 : i64}
// CHECK-NEXT: return %[[S]]
// STATS: tx-fuse-rope: fused 1, declined 0
func.func @written_rope(%z: tensor<?x?x16xf32, #tx.dims<B: 4, T: 8>>, %f: tensor<?x4xf32, #tx.dims<T: 8>>) -> tensor<?x2x?x8xf32, #tx.dims<B: 4, T: 8>> {
  %x = tx.split_heads %z {heads = 2 : i64} : (tensor<?x?x16xf32, #tx.dims<B: 4, T: 8>>) -> tensor<?x2x?x8xf32, #tx.dims<B: 4, T: 8>>
  %emb = tx.concat %f, %f {axis = -1 : i64} : (tensor<?x4xf32, #tx.dims<T: 8>>, tensor<?x4xf32, #tx.dims<T: 8>>) -> tensor<?x8xf32, #tx.dims<T: 8>>
  %c = tx.cos %emb : (tensor<?x8xf32, #tx.dims<T: 8>>) -> tensor<?x8xf32, #tx.dims<T: 8>>
  %xc = tx.mul %x, %c : (tensor<?x2x?x8xf32, #tx.dims<B: 4, T: 8>>, tensor<?x8xf32, #tx.dims<T: 8>>) -> tensor<?x2x?x8xf32, #tx.dims<B: 4, T: 8>>
  %x1 = tx.slice %x {starts = array<i64: 0, 0, 0, 0>} : (tensor<?x2x?x8xf32, #tx.dims<B: 4, T: 8>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 8>>
  %x2 = tx.slice %x {starts = array<i64: 0, 0, 0, 4>} : (tensor<?x2x?x8xf32, #tx.dims<B: 4, T: 8>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 8>>
  %n = tx.neg %x2 : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 8>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 8>>
  %rot = tx.concat %n, %x1 {axis = -1 : i64} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 8>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 8>>) -> tensor<?x2x?x8xf32, #tx.dims<B: 4, T: 8>>
  %s = tx.sin %emb : (tensor<?x8xf32, #tx.dims<T: 8>>) -> tensor<?x8xf32, #tx.dims<T: 8>>
  %rs = tx.mul %s, %rot : (tensor<?x8xf32, #tx.dims<T: 8>>, tensor<?x2x?x8xf32, #tx.dims<B: 4, T: 8>>) -> tensor<?x2x?x8xf32, #tx.dims<B: 4, T: 8>>
  %y = tx.add %rs, %xc : (tensor<?x2x?x8xf32, #tx.dims<B: 4, T: 8>>, tensor<?x2x?x8xf32, #tx.dims<B: 4, T: 8>>) -> tensor<?x2x?x8xf32, #tx.dims<B: 4, T: 8>>
  return %y : tensor<?x2x?x8xf32, #tx.dims<B: 4, T: 8>>
}

// -----

// Not fused: the halves are swapped the other way (not rotate_half), and a
// table of learned angles (a parameter) is declined.
// CHECK-LABEL: func.func @written_rope_declined
// CHECK-NOT: tx.rope
// STATS: tx-fuse-rope: fused 0, declined 1
// STATS-NEXT: tx-fuse-rope: declined at {{.*}}: rotary angles depend on a parameter (their gradient is not implemented in tx.rope)
tx.parameter @learned_angles : tensor<6x4xf32> {init = #tx.init<normal>}
func.func @written_rope_declined(%x: tensor<2x6x8xf32>) -> (tensor<2x6x8xf32>, tensor<2x6x8xf32>) {
  %f = tx.param @learned_angles : tensor<6x4xf32>
  %emb = tx.concat %f, %f {axis = -1 : i64} : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x8xf32>
  %c = tx.cos %emb : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %s = tx.sin %emb : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %xc = tx.mul %x, %c : (tensor<2x6x8xf32>, tensor<6x8xf32>) -> tensor<2x6x8xf32>
  %x1 = tx.slice %x {starts = array<i64: 0, 0, 0>} : (tensor<2x6x8xf32>) -> tensor<2x6x4xf32>
  %x2 = tx.slice %x {starts = array<i64: 0, 0, 4>} : (tensor<2x6x8xf32>) -> tensor<2x6x4xf32>
  %n = tx.neg %x1 : (tensor<2x6x4xf32>) -> tensor<2x6x4xf32>
  %wrong = tx.concat %n, %x2 {axis = -1 : i64} : (tensor<2x6x4xf32>, tensor<2x6x4xf32>) -> tensor<2x6x8xf32>
  %ws = tx.mul %wrong, %s : (tensor<2x6x8xf32>, tensor<6x8xf32>) -> tensor<2x6x8xf32>
  %y0 = tx.add %xc, %ws : (tensor<2x6x8xf32>, tensor<2x6x8xf32>) -> tensor<2x6x8xf32>
  %n2 = tx.neg %x2 : (tensor<2x6x4xf32>) -> tensor<2x6x4xf32>
  %rot = tx.concat %n2, %x1 {axis = -1 : i64} : (tensor<2x6x4xf32>, tensor<2x6x4xf32>) -> tensor<2x6x8xf32>
  %rs = tx.mul %rot, %s : (tensor<2x6x8xf32>, tensor<6x8xf32>) -> tensor<2x6x8xf32>
  %y1 = tx.add %xc, %rs : (tensor<2x6x8xf32>, tensor<2x6x8xf32>) -> tensor<2x6x8xf32>
  return %y0, %y1 : tensor<2x6x8xf32>, tensor<2x6x8xf32>
}

// -----

// The causal mask written out from arange as PyTorch users write it,
// `arange(T)[:, None] >= arange(T)[None, :]`: the causal flag.
// CHECK-LABEL: func.func @written_causal_ge
// CHECK: %[[PM:.+]] = tx.padding_mask %arg1
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} mask %[[PM]] {causal, fill = -1.000000e+09 : f32, scale = 5.000000e-01 : f32}
// CHECK-NOT: tx.cmp
// CHECK: return
// STATS: tx-fuse-attention: fused 1, declined 0
func.func @written_causal_ge(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %pm = tx.padding_mask %ids : (tensor<2x5xi32>) -> tensor<2x1x1x5xi1>
  %a0 = tx.arange : tensor<5xi32>
  %qpos = tx.reshape %a0 : (tensor<5xi32>) -> tensor<5x1xi32>
  %a1 = tx.arange : tensor<5xi32>
  %kpos = tx.reshape %a1 : (tensor<5xi32>) -> tensor<1x5xi32>
  %cm = tx.cmp ge, %qpos, %kpos : (tensor<5x1xi32>, tensor<1x5xi32>) -> tensor<5x5xi1>
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

// The same comparison the other way round, `kpos <= qpos`.
// CHECK-LABEL: func.func @written_causal_le
// CHECK: %[[PM:.+]] = tx.padding_mask %arg1
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} mask %[[PM]] {causal, fill = -1.000000e+09 : f32, scale = 5.000000e-01 : f32}
// CHECK-NOT: tx.cmp
// CHECK: return
// STATS: tx-fuse-attention: fused 1, declined 0
func.func @written_causal_le(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %pm = tx.padding_mask %ids : (tensor<2x5xi32>) -> tensor<2x1x1x5xi1>
  %a0 = tx.arange : tensor<5xi32>
  %qpos = tx.reshape %a0 : (tensor<5xi32>) -> tensor<5x1xi32>
  %a1 = tx.arange : tensor<5xi32>
  %kpos = tx.reshape %a1 : (tensor<5xi32>) -> tensor<1x5xi32>
  %cm = tx.cmp le, %kpos, %qpos : (tensor<1x5xi32>, tensor<5x1xi32>) -> tensor<5x5xi1>
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

// Written as what to fill, `kpos > qpos` (torch.triu(ones, 1)).
// CHECK-LABEL: func.func @written_causal_fill
// CHECK: %[[PM:.+]] = tx.padding_mask %arg1
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} mask %[[PM]] {causal, fill = -1.000000e+09 : f32, scale = 5.000000e-01 : f32}
// CHECK-NOT: tx.cmp
// CHECK: return
// STATS: tx-fuse-attention: fused 1, declined 0
func.func @written_causal_fill(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %pm = tx.padding_mask %ids : (tensor<2x5xi32>) -> tensor<2x1x1x5xi1>
  %a0 = tx.arange : tensor<5xi32>
  %qpos = tx.reshape %a0 : (tensor<5xi32>) -> tensor<5x1xi32>
  %a1 = tx.arange : tensor<5xi32>
  %kpos = tx.reshape %a1 : (tensor<5xi32>) -> tensor<1x5xi32>
  %cf = tx.cmp gt, %kpos, %qpos : (tensor<1x5xi32>, tensor<5x1xi32>) -> tensor<5x5xi1>
  %np = tx.not %pm : (tensor<2x1x1x5xi1>) -> tensor<2x1x1x5xi1>
  %fm = tx.or %np, %cf : (tensor<2x1x1x5xi1>, tensor<5x5xi1>) -> tensor<2x1x5x5xi1>
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

// Not causal: `qpos > kpos` also masks the diagonal (the first query
// sees nothing), so it stays a mask.
// CHECK-LABEL: func.func @written_strict_is_not_causal
// CHECK: %[[CM:.+]] = tx.cmp gt
// CHECK: %[[KM:.+]] = tx.and %{{.+}}, %[[CM]]
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} mask %[[KM]] {fill = -1.000000e+09 : f32, scale = 5.000000e-01 : f32}
// STATS: tx-fuse-attention: fused 1, declined 0
func.func @written_strict_is_not_causal(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %pm = tx.padding_mask %ids : (tensor<2x5xi32>) -> tensor<2x1x1x5xi1>
  %a0 = tx.arange : tensor<5xi32>
  %qpos = tx.reshape %a0 : (tensor<5xi32>) -> tensor<5x1xi32>
  %a1 = tx.arange : tensor<5xi32>
  %kpos = tx.reshape %a1 : (tensor<5xi32>) -> tensor<1x5xi32>
  %cm = tx.cmp gt, %qpos, %kpos : (tensor<5x1xi32>, tensor<1x5xi32>) -> tensor<5x5xi1>
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

// Not causal: positions that start apart move the diagonal.
// CHECK-LABEL: func.func @written_shifted_is_not_causal
// CHECK: %[[CM:.+]] = tx.cmp ge
// CHECK: %[[KM:.+]] = tx.and %{{.+}}, %[[CM]]
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} mask %[[KM]] {fill = -1.000000e+09 : f32, scale = 5.000000e-01 : f32}
// STATS: tx-fuse-attention: fused 1, declined 0
func.func @written_shifted_is_not_causal(%x: tensor<2x5x16xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x16xf32> {
  %q = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %k = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %v = tx.split_heads %x {heads = 4 : i64} : (tensor<2x5x16xf32>) -> tensor<2x4x5x4xf32>
  %pm = tx.padding_mask %ids : (tensor<2x5xi32>) -> tensor<2x1x1x5xi1>
  %a0 = tx.arange : tensor<5xi32>
  %qpos = tx.reshape %a0 : (tensor<5xi32>) -> tensor<5x1xi32>
  %a1 = tx.arange {start = 1 : i64} : tensor<5xi32>
  %kpos = tx.reshape %a1 : (tensor<5xi32>) -> tensor<1x5xi32>
  %cm = tx.cmp ge, %qpos, %kpos : (tensor<5x1xi32>, tensor<1x5xi32>) -> tensor<5x5xi1>
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
