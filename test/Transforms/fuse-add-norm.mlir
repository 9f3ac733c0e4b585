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
