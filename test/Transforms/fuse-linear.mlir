// RUN: tx-opt %s -split-input-file --tx-fuse-linear | FileCheck %s
// RUN: tx-opt %s -split-input-file --tx-fuse-linear=stats=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: tx-opt %s -split-input-file --tx-fuse-linear=bias-free=false | FileCheck %s --check-prefix=NOBF

// CHECK-LABEL: func.func @relu_epilogue
// CHECK-NEXT: %[[Y:.+]] = tx.linear %arg0, %arg1 bias %arg2 {activation = #tx.activation<relu>}
// CHECK-NEXT: return %[[Y]]
// STATS: tx-fuse-linear: fused 1, declined 0
func.func @relu_epilogue(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %h = tx.linear %x, %w bias %b : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %r = tx.relu %h : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// Activation and residual (the residual on either side of the add).
// CHECK-LABEL: func.func @gelu_residual
// CHECK-NEXT: %[[Y:.+]] = tx.linear %arg0, %arg1 residual %arg2 {activation = #tx.activation<gelu>}
// CHECK-NEXT: return %[[Y]]
// STATS: tx-fuse-linear: fused 2, declined 0
func.func @gelu_residual(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %r: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %h = tx.linear %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %g = tx.gelu %h : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = tx.add %r, %g : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

// Not fused: the linear's result has another user.
// CHECK-LABEL: func.func @other_user
// CHECK: tx.linear %arg0, %arg1 :
// CHECK-NEXT: tx.relu
// STATS: tx-fuse-linear: fused 0, declined 1
// STATS-NEXT: tx-fuse-linear: declined at {{.*}}: the linear has other users
func.func @other_user(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %h = tx.linear %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %r = tx.relu %h : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r, %h : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Not fused: the residual add broadcasts.
// CHECK-LABEL: func.func @broadcast_residual
// CHECK: tx.linear
// CHECK-NEXT: tx.add
// STATS: tx-fuse-linear: fused 0, declined 1
// STATS-NEXT: tx-fuse-linear: declined at {{.*}}: the residual add broadcasts
func.func @broadcast_residual(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %r: tensor<8xf32>) -> tensor<4x8xf32> {
  %h = tx.linear %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %s = tx.add %h, %r : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

// nn.Linear written by hand: matmul(x, transpose(W)) + b with W [N, K] becomes
// a linear with bias, whose relu then fuses as its epilogue.
// CHECK-LABEL: func.func @hand_written_linear
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x8xf32>, %[[W:.+]]: tensor<16x8xf32>, %[[B:.+]]: tensor<16xf32>)
// CHECK-NEXT: %[[Y:.+]] = tx.linear %[[X]], %[[W]] bias %[[B]] {activation = #tx.activation<relu>}
// CHECK-NEXT: return %[[Y]]
// STATS: tx-fuse-linear: fused 2, declined 0
func.func @hand_written_linear(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<2x4x16xf32> {
  %wt = tx.transpose %w {permutation = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %h = tx.matmul %x, %wt : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %y = tx.add %h, %b : (tensor<2x4x16xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
  %r = tx.relu %y : (tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %r : tensor<2x4x16xf32>
}

// -----

// The same with transpose_rhs, the bias on the left, and a residual.
// CHECK-LABEL: func.func @transpose_rhs_residual
// CHECK-NEXT: %[[Y:.+]] = tx.linear %arg0, %arg1 bias %arg2 residual %arg3 :
// CHECK-NEXT: return %[[Y]]
// STATS: tx-fuse-linear: fused 2, declined 0
func.func @transpose_rhs_residual(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>, %r: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %h = tx.matmul %x, %w {transpose_rhs} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %y = tx.add %b, %h : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = tx.add %y, %r : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

// The bias is not fused: the product has another user. The product itself
// becomes a bias-free linear (its gradient is then one product over all rows).
// CHECK-LABEL: func.func @product_used_elsewhere
// CHECK-NEXT: %[[H:.+]] = tx.linear %arg0, %arg1 :
// CHECK-NEXT: %[[Y:.+]] = tx.add %[[H]], %arg2
// CHECK-NEXT: return %[[Y]], %[[H]]
// STATS: tx-fuse-linear: fused 1, declined 1
// STATS-NEXT: tx-fuse-linear: declined at {{.*}}fuse-linear.mlir{{.*}}: matmul(x, Wᵀ) has other users
func.func @product_used_elsewhere(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %wt = tx.transpose %w {permutation = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %h = tx.matmul %x, %wt : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %y = tx.add %h, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %y, %h : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// The added term is not a rank-1 bias: the product becomes a bias-free
// linear and the add its residual.
// CHECK-LABEL: func.func @not_a_bias
// CHECK-NEXT: %[[Y:.+]] = tx.linear %arg0, %arg1 residual %arg2 :
// CHECK-NEXT: return %[[Y]]
// STATS: tx-fuse-linear: fused 2, declined 0
func.func @not_a_bias(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %r: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %h = tx.matmul %x, %w {transpose_rhs} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %y = tx.add %h, %r : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// A broadcast added term that is no bias: the product becomes a bias-free
// linear; the add stays.
// CHECK-LABEL: func.func @broadcast_term
// CHECK-NEXT: %[[H:.+]] = tx.linear %arg0, %arg1 :
// CHECK-NEXT: tx.add %[[H]], %arg2
// STATS: tx-fuse-linear: fused 1, declined 1
// STATS-NEXT: tx-fuse-linear: declined at {{.*}}: the residual add broadcasts
func.func @broadcast_term(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %r: tensor<4x1xf32>) -> tensor<4x16xf32> {
  %h = tx.matmul %x, %w {transpose_rhs} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %y = tx.add %h, %r : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// A bias written with a leading 1 ([1, N], nn.Parameter(torch.zeros(1, N)))
// is a bias: reshaped to [N] (it was reported as a broadcasting residual).
// CHECK-LABEL: func.func @leading_one_bias
// CHECK-NEXT: %[[B:.+]] = tx.reshape %arg2 : (tensor<1x16xf32>) -> tensor<16xf32>
// CHECK-NEXT: %[[Y:.+]] = tx.linear %arg0, %arg1 bias %[[B]] :
// CHECK-NEXT: return %[[Y]]
// STATS: tx-fuse-linear: fused 1, declined 0
func.func @leading_one_bias(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<1x16xf32>) -> tensor<2x4x16xf32> {
  %h = tx.matmul %x, %w {transpose_rhs} : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
  %y = tx.add %h, %b : (tensor<2x4x16xf32>, tensor<1x16xf32>) -> tensor<2x4x16xf32>
  return %y : tensor<2x4x16xf32>
}

// -----

// GPT's tied output projection: the embedding table also read by a gather,
// transposed, with batch dims on x. A bias-free linear reading the table.
// CHECK-LABEL: func.func @tied_output
// CHECK-NEXT: %[[E:.+]] = tx.embedding %arg1, %arg0
// CHECK-NEXT: %[[Y:.+]] = tx.linear %[[E]], %arg0 :
// CHECK-NOT: tx.transpose
// CHECK: return %[[Y]]
// STATS: tx-fuse-linear: fused 1, declined 0
// Without bias-free (txc under --precision=bf16) it stays a matmul.
// NOBF-LABEL: func.func @tied_output
// NOBF: tx.transpose
// NOBF-NEXT: tx.matmul
// NOBF-NEXT: return
func.func @tied_output(%wte: tensor<32x8xf32>, %ids: tensor<2x5xi32>) -> tensor<2x5x32xf32> {
  %e = tx.embedding %ids, %wte : (tensor<2x5xi32>, tensor<32x8xf32>) -> tensor<2x5x8xf32>
  %wt = tx.transpose %wte {permutation = array<i64: 1, 0>} : (tensor<32x8xf32>) -> tensor<8x32xf32>
  %y = tx.matmul %e, %wt : (tensor<2x5x8xf32>, tensor<8x32xf32>) -> tensor<2x5x32xf32>
  return %y : tensor<2x5x32xf32>
}

// -----

// Not fused: a transposed lhs, a batched weight (attention's q·kᵀ).
// CHECK-LABEL: func.func @not_a_weight
// CHECK-NEXT: tx.matmul %arg0, %arg1 {transpose_lhs, transpose_rhs}
// CHECK-NEXT: tx.matmul %arg2, %arg3 {transpose_rhs}
// STATS: tx-fuse-linear: fused 0, declined 0
func.func @not_a_weight(%a: tensor<8x4xf32>, %w: tensor<16x8xf32>, %q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>) -> (tensor<4x16xf32>, tensor<2x4x6xf32>) {
  %y = tx.matmul %a, %w {transpose_lhs, transpose_rhs} : (tensor<8x4xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %s = tx.matmul %q, %k {transpose_rhs} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>) -> tensor<2x4x6xf32>
  return %y, %s : tensor<4x16xf32>, tensor<2x4x6xf32>
}

// -----

// Not fused: the weight is not transposed (matmul(x, W) with W [K, N] is not
// nn.Linear's layout; no candidate).
// CHECK-LABEL: func.func @untransposed_weight
// CHECK: tx.matmul
// CHECK-NEXT: tx.add
// CHECK-NOT: tx.linear
// STATS: tx-fuse-linear: fused 0, declined 0
func.func @untransposed_weight(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %h = tx.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %y = tx.add %h, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// SwiGLU: silu(x·W1ᵀ) * (x·W3ᵀ) becomes one linear with the silu and the
// gate in its epilogue (the activated side hosts it, on either side of the
// product), then the down projection takes the residual.
// CHECK-LABEL: func.func @swiglu
// CHECK-NEXT: %[[U:.+]] = tx.linear %arg0, %arg2 :
// CHECK-NEXT: %[[H:.+]] = tx.linear %arg0, %arg1 gate %[[U]] {activation = #tx.activation<silu>}
// CHECK-NEXT: %[[Y:.+]] = tx.linear %[[H]], %arg3 residual %arg0 :
// CHECK-NEXT: return %[[Y]]
// STATS: tx-fuse-linear: fused 3, declined 0
func.func @swiglu(%x: tensor<4x8xf32>, %w1: tensor<16x8xf32>, %w3: tensor<16x8xf32>, %w2: tensor<8x16xf32>) -> tensor<4x8xf32> {
  %a = tx.linear %x, %w1 : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %u = tx.linear %x, %w3 : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %s = tx.silu %a : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = tx.mul %u, %s : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %d = tx.linear %h, %w2 : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %y = tx.add %x, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// GeGLU (tanh form) with biases, the gate any tensor of the result's type.
// CHECK-LABEL: func.func @geglu_tanh
// CHECK-NEXT: %[[H:.+]] = tx.linear %arg0, %arg1 bias %arg2 gate %arg3 {activation = #tx.activation<gelu_tanh>}
// CHECK-NEXT: return %[[H]]
// STATS: tx-fuse-linear: fused 2, declined 0
func.func @geglu_tanh(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>, %g: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %a = tx.linear %x, %w bias %b : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %s = tx.gelu_tanh %a : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = tx.mul %s, %g : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %h : tensor<4x16xf32>
}

// -----

// Not fused: a gate that broadcasts.
// CHECK-LABEL: func.func @broadcast_gate
// CHECK: tx.linear %arg0, %arg1 :
// CHECK-NEXT: tx.mul
// STATS: tx-fuse-linear: fused 0, declined 1
// STATS-NEXT: tx-fuse-linear: declined at {{.*}}: the product's other operand is broadcast (a scale, not a gate of the linear's shape such as GLU's): only an elementwise gate fuses
func.func @broadcast_gate(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %g: tensor<16xf32>) -> tensor<4x16xf32> {
  %a = tx.linear %x, %w : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %h = tx.mul %a, %g : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %h : tensor<4x16xf32>
}

// -----

// Not fused: the linear's result is the broadcast side (it is smaller than
// the other operand); the message blamed the other operand.
// CHECK-LABEL: func.func @broadcast_linear
// CHECK: tx.linear %arg0, %arg1 :
// CHECK-NEXT: tx.mul
// STATS: tx-fuse-linear: fused 0, declined 1
// STATS-NEXT: tx-fuse-linear: declined at {{.*}}: the linear's result is broadcast in the product (it is smaller than the product's other operand): only an elementwise gate of the linear's shape fuses
func.func @broadcast_linear(%x: tensor<4x1x8xf32>, %w: tensor<16x8xf32>, %g: tensor<4x3x16xf32>) -> tensor<4x3x16xf32> {
  %a = tx.linear %x, %w : (tensor<4x1x8xf32>, tensor<16x8xf32>) -> tensor<4x1x16xf32>
  %h = tx.mul %a, %g : (tensor<4x1x16xf32>, tensor<4x3x16xf32>) -> tensor<4x3x16xf32>
  return %h : tensor<4x3x16xf32>
}

// -----

// In the train entry, epilogues whose gradient needs the pre-activation stay
// unfused (fused, the backward would recompute x·Wᵀ); relu and residuals fuse.
// CHECK-LABEL: func.func @train_keeps_preactivation
// CHECK: tx.linear %arg0, %arg1 :
// CHECK-NEXT: tx.linear %arg0, %arg2 :
// CHECK-NEXT: tx.silu
// CHECK-NEXT: tx.mul
// CHECK-NEXT: tx.linear {{.*}} {activation = #tx.activation<relu>}
// STATS: tx-fuse-linear: fused 1, declined 2
// STATS-NEXT: tx-fuse-linear: declined at {{.*}}: train entry: the backward pass needs the pre-activation (fused, it would recompute x·Wᵀ)
// STATS-NEXT: tx-fuse-linear: declined at {{.*}}: train entry: the backward pass needs the pre-activation (fused, it would recompute x·Wᵀ)
func.func @train_keeps_preactivation(%x: tensor<4x8xf32>, %w1: tensor<16x8xf32>, %w3: tensor<16x8xf32>, %w2: tensor<8x16xf32>) -> tensor<4x8xf32> attributes {tx.entry = "train"} {
  %a = tx.linear %x, %w1 : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %u = tx.linear %x, %w3 : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %s = tx.silu %a : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = tx.mul %s, %u : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %d = tx.linear %h, %w2 : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %r = tx.relu %d : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Candidates that share a spec location and a reason (a def's body inlined
// once per layer) are one stats line that counts them, in the order first
// declined; another location keeps its own line.
// CHECK-LABEL: func.func @declines_per_location
// STATS: tx-fuse-linear: fused 0, declined 3
// STATS-NEXT: tx-fuse-linear: declined at layer.tx:7:3 (2 candidates): train entry: the backward pass needs the pre-activation
// STATS-NEXT: tx-fuse-linear: declined at layer.tx:9:5: train entry: the backward pass needs the pre-activation
// STATS-NOT: declined at
func.func @declines_per_location(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> attributes {tx.entry = "train"} {
  %a = tx.linear %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("layer.tx":7:3)
  %s = tx.silu %a : (tensor<4x8xf32>) -> tensor<4x8xf32> loc("layer.tx":7:3)
  %b = tx.linear %s, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("layer.tx":7:3)
  %t = tx.silu %b : (tensor<4x8xf32>) -> tensor<4x8xf32> loc("layer.tx":7:3)
  %c = tx.linear %t, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("layer.tx":9:5)
  %u = tx.silu %c : (tensor<4x8xf32>) -> tensor<4x8xf32> loc("layer.tx":9:5)
  return %u : tensor<4x8xf32>
}
