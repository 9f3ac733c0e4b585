// RUN: tx-opt %s -split-input-file --tx-fuse-add-norm | FileCheck %s
// RUN: tx-opt %s -split-input-file --tx-fuse-add-norm=stats=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS

// CHECK-LABEL: func.func @residual
// CHECK-SAME: (%[[X:.+]]: tensor<{{.*}}>, %[[Y:.+]]: tensor<{{.*}}>, %[[G:.+]]: tensor<8xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[N:.+]], %{{.+}} = tx.add_layer_norm %[[X]], %[[Y]], %[[G]], %[[B]] {epsilon = 9.99999997E-7 : f32}
// CHECK-NEXT: return %[[N]]
// STATS: tx-fuse-add-norm: fused 1, declined 0
func.func @residual(%x: tensor<?x8xf32, #tx.dims<N: 4>>, %y: tensor<?x8xf32, #tx.dims<N: 4>>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<N: 4>> {
  %s = tx.add %x, %y : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<?x8xf32, #tx.dims<N: 4>>
  %n = tx.layer_norm %s, %g, %b {epsilon = 1.0e-6 : f32} : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<N: 4>>
  return %n : tensor<?x8xf32, #tx.dims<N: 4>>
}

// -----

// The sum has a later user: it takes the fused op's second result.
// CHECK-LABEL: func.func @sum_used_later
// CHECK: %[[N:.+]], %[[S:.+]] = tx.add_layer_norm
// CHECK-NEXT: %[[R:.+]] = tx.relu %[[S]]
// CHECK-NOT: tx.add
// STATS: tx-fuse-add-norm: fused 1, declined 0
func.func @sum_used_later(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = tx.add %y, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = tx.layer_norm %s, %g, %b : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %r = tx.relu %s : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %n, %r : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Not fused: the add broadcasts.
// CHECK-LABEL: func.func @broadcast
// CHECK: tx.add
// CHECK-NEXT: tx.layer_norm
// CHECK-NOT: tx.add_layer_norm
// STATS: tx-fuse-add-norm: fused 0, declined 1
// STATS-NEXT: tx-fuse-add-norm: declined at {{.*}}fuse-add-norm.mlir{{.*}}: the add broadcasts
func.func @broadcast(%x: tensor<4x8xf32>, %y: tensor<8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = tx.add %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %n = tx.layer_norm %s, %g, %b : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// Not fused: the sum is used before the norm.
// CHECK-LABEL: func.func @sum_used_before
// CHECK: tx.add
// CHECK-NEXT: tx.relu
// CHECK-NEXT: tx.layer_norm
// STATS: tx-fuse-add-norm: fused 0, declined 1
// STATS-NEXT: tx-fuse-add-norm: declined at {{.*}}: the sum has a user before the norm
func.func @sum_used_before(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = tx.add %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = tx.relu %s : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = tx.layer_norm %s, %g, %b : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %n, %r : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// rms_norm(x + y) with the sum going on (a pre-norm residual stream):
// add_rms_norm, the sum from its second result.
// CHECK-LABEL: func.func @rms_residual_stream
// CHECK-SAME: (%[[X:.+]]: tensor<{{.*}}>, %[[Y:.+]]: tensor<{{.*}}>, %[[G:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[N:.+]], %[[S:.+]] = tx.add_rms_norm %[[X]], %[[Y]], %[[G]] {epsilon = 9.99999974E-6 : f32}
// CHECK-NEXT: %[[R:.+]] = tx.add %[[S]], %[[N]]
// CHECK-NEXT: return %[[R]]
// STATS: tx-fuse-add-norm: fused 1, declined 0
func.func @rms_residual_stream(%x: tensor<?x8xf32, #tx.dims<N: 4>>, %y: tensor<?x8xf32, #tx.dims<N: 4>>, %g: tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<N: 4>> {
  %s = tx.add %x, %y : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<?x8xf32, #tx.dims<N: 4>>
  %n = tx.rms_norm %s, %g {epsilon = 1.0e-5 : f32} : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<N: 4>>
  %r = tx.add %s, %n : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<?x8xf32, #tx.dims<N: 4>>
  return %r : tensor<?x8xf32, #tx.dims<N: 4>>
}

// -----

// Not fused: rms_norm of a broadcasting add.
// CHECK-LABEL: func.func @rms_broadcast
// CHECK: tx.add
// CHECK-NEXT: tx.rms_norm
// STATS: tx-fuse-add-norm: fused 0, declined 1
// STATS-NEXT: tx-fuse-add-norm: declined at {{.*}}: the add broadcasts (the fused kernel adds equal shapes)
func.func @rms_broadcast(%x: tensor<4x8xf32>, %y: tensor<8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = tx.add %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %n = tx.rms_norm %s, %g : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// RMSNorm written out as Hugging Face's LlamaRMSNorm, then its residual add:
// tx.rms_norm with the written eps, then tx.add_rms_norm.
// CHECK-LABEL: func.func @written_rms_norm
// CHECK-SAME: (%[[X:.+]]: tensor<{{.*}}>, %[[Y:.+]]: tensor<{{.*}}>, %[[W:.+]]: tensor<8xf32>)
// CHECK: %[[N:.+]], %{{.+}} = tx.add_rms_norm %[[X]], %[[Y]], %[[W]] {epsilon = 9.99999974E-6 : f32}
// CHECK-NOT: tx.rsqrt
// CHECK-NOT: tx.reduce_mean
// CHECK: return %[[N]]
// STATS: tx-fuse-add-norm: fused 2, declined 0
func.func @written_rms_norm(%x: tensor<?x8xf32, #tx.dims<N: 4>>, %y: tensor<?x8xf32, #tx.dims<N: 4>>, %w: tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<N: 4>> {
  %s = tx.add %x, %y : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<?x8xf32, #tx.dims<N: 4>>
  %sq = tx.pow %s {exponent = 2.0 : f32} : (tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<?x8xf32, #tx.dims<N: 4>>
  %ms = tx.reduce_mean %sq {axes = array<i64: -1>, keepdim} : (tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<?x1xf32, #tx.dims<N: 4>>
  %eps = tx.constant dense<1.0e-5> : tensor<f32>
  %v = tx.add %ms, %eps : (tensor<?x1xf32, #tx.dims<N: 4>>, tensor<f32>) -> tensor<?x1xf32, #tx.dims<N: 4>>
  %r = tx.rsqrt %v : (tensor<?x1xf32, #tx.dims<N: 4>>) -> tensor<?x1xf32, #tx.dims<N: 4>>
  %h = tx.mul %s, %r : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<?x1xf32, #tx.dims<N: 4>>) -> tensor<?x8xf32, #tx.dims<N: 4>>
  %n = tx.mul %w, %h : (tensor<8xf32>, tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<?x8xf32, #tx.dims<N: 4>>
  return %n : tensor<?x8xf32, #tx.dims<N: 4>>
}

// -----

// The other spelling: x * x, eps first, x / sqrt(...), weight on the right.
// CHECK-LABEL: func.func @written_rms_norm_div_sqrt
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[W:.+]]: tensor<8xf32>)
// CHECK: %[[N:.+]] = tx.rms_norm %[[X]], %[[W]] :
// CHECK-NOT: tx.sqrt
// CHECK: return %[[N]]
// STATS: tx-fuse-add-norm: fused 1, declined 0
func.func @written_rms_norm_div_sqrt(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %sq = tx.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %ms = tx.reduce_mean %sq {axes = array<i64: 1>, keepdim} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %eps = tx.constant dense<1.0e-6> : tensor<f32>
  %v = tx.add %eps, %ms : (tensor<f32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %r = tx.sqrt %v : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %h = tx.div %x, %r : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %n = tx.mul %h, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// An eps that tx.rms_norm refuses (0 or negative; 1e-46 is 0 in f32) stays
// written out, computed as the spec says: the fused op's verifier failed
// the whole compile before ("epsilon must be positive, got 0").
// CHECK-LABEL: func.func @written_rms_norm_eps_not_positive
// CHECK-NOT: tx.rms_norm
// CHECK: return
// STATS: tx-fuse-add-norm: fused 0, declined 2
// STATS-NEXT: tx-fuse-add-norm: declined at {{.*}}: written-out rms_norm: its eps (0 in f32) is not positive and finite, as tx.rms_norm's must be
// STATS-NEXT: tx-fuse-add-norm: declined at {{.*}}: written-out rms_norm: its eps (-0.01 in f32) is not positive and finite, as tx.rms_norm's must be
func.func @written_rms_norm_eps_not_positive(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = tx.constant dense<0.0> : tensor<f32>
  %sq = tx.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %ms = tx.reduce_mean %sq {axes = array<i64: -1>, keepdim} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %v = tx.add %ms, %zero : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r = tx.rsqrt %v : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %h = tx.mul %x, %r : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %n = tx.mul %h, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %neg = tx.constant dense<-0.01> : tensor<f32>
  %sq1 = tx.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %ms1 = tx.reduce_mean %sq1 {axes = array<i64: -1>, keepdim} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %v1 = tx.add %ms1, %neg : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r1 = tx.rsqrt %v1 : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %h1 = tx.mul %x, %r1 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %n1 = tx.mul %h1, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %n, %n1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Not recognized: the mean of squares is used elsewhere (declined), and a
// mean over another axis, or of another tensor's square, is not RMSNorm.
// CHECK-LABEL: func.func @written_rms_norm_declined
// CHECK-NOT: tx.rms_norm
// STATS: tx-fuse-add-norm: fused 0, declined 1
// STATS-NEXT: tx-fuse-add-norm: declined at {{.*}}: written-out rms_norm: an intermediate has other users
func.func @written_rms_norm_declined(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>, %w: tensor<8xf32>, %w4: tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %eps = tx.constant dense<1.0e-6> : tensor<f32>
  %sq = tx.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %ms = tx.reduce_mean %sq {axes = array<i64: -1>, keepdim} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %v = tx.add %ms, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r = tx.rsqrt %v : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %h = tx.mul %x, %r : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %n = tx.mul %h, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %sq0 = tx.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %ms0 = tx.reduce_mean %sq0 {axes = array<i64: 0>, keepdim} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %v0 = tx.add %ms0, %eps : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %r0 = tx.rsqrt %v0 : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %h0 = tx.mul %x, %r0 : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %n0 = tx.mul %h0, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %sqz = tx.mul %z, %z : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %msz = tx.reduce_mean %sqz {axes = array<i64: -1>, keepdim} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %vz = tx.add %msz, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %rz = tx.rsqrt %vz : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %hz = tx.mul %x, %rz : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %nz = tx.mul %hz, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %n, %ms, %n0, %nz : tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
