// RUN: tx-opt %s | tx-opt | FileCheck %s
// RUN: tx-opt %s --mlir-print-op-generic | tx-opt | FileCheck %s
//
// Round trip of every tx op in its custom assembly (and through the generic
// form): what tx-opt prints, it parses back to the same IR.

// CHECK: tx.parameter @encoder.embedding.weight : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
tx.parameter @encoder.embedding.weight : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
// CHECK: tx.parameter @norm.weight : tensor<8xf32> {init = #tx.init<ones>}
tx.parameter @norm.weight : tensor<8xf32> {init = #tx.init<ones>}
// CHECK: tx.parameter @norm.bias : tensor<8xf32> {init = #tx.init<zeros>}
tx.parameter @norm.bias : tensor<8xf32> {init = #tx.init<zeros>}
// CHECK: tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}

// CHECK-LABEL: func.func @constant_and_param
func.func @constant_and_param() -> (tensor<f32>, tensor<2xi32>, tensor<16x8xf32>) {
  // CHECK-NEXT: %[[C:.+]] = tx.constant dense<8.000000e+00> : tensor<f32>
  %c = tx.constant dense<8.0> : tensor<f32>
  // CHECK-NEXT: %[[I:.+]] = tx.constant dense<[1, 2]> : tensor<2xi32>
  %i = tx.constant dense<[1, 2]> : tensor<2xi32>
  // CHECK-NEXT: %[[P:.+]] = tx.param @encoder.embedding.weight : tensor<16x8xf32>
  %p = tx.param @encoder.embedding.weight : tensor<16x8xf32>
  // CHECK-NEXT: return %[[C]], %[[I]], %[[P]]
  return %c, %i, %p : tensor<f32>, tensor<2xi32>, tensor<16x8xf32>
}

// CHECK-LABEL: func.func @embeddings_and_masks
func.func @embeddings_and_masks(%ids: tensor<?x?xi32, #tx.dims<B: 4, S: 9>>, %table: tensor<16x8xf32>) {
  // CHECK: tx.embedding %{{.+}}, %{{.+}} : (tensor<?x?xi32, #tx.dims<B: 4, S: 9>>, tensor<16x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>
  %e = tx.embedding %ids, %table : (tensor<?x?xi32, #tx.dims<B: 4, S: 9>>, tensor<16x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>
  // CHECK: tx.positional_encoding %{{.+}} : (tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>) -> tensor<?x8xf32, #tx.dims<S: 9>>
  %pe = tx.positional_encoding %e : (tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>) -> tensor<?x8xf32, #tx.dims<S: 9>>
  // CHECK: tx.padding_mask %{{.+}} : (tensor<?x?xi32, #tx.dims<B: 4, S: 9>>) -> tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 9>>
  %pm = tx.padding_mask %ids : (tensor<?x?xi32, #tx.dims<B: 4, S: 9>>) -> tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 9>>
  // CHECK: tx.causal_mask %{{.+}} : (tensor<?x?xi32, #tx.dims<B: 4, S: 9>>) -> tensor<?x?xi1, #tx.dims<S: 9, S: 9>>
  %cm = tx.causal_mask %ids : (tensor<?x?xi32, #tx.dims<B: 4, S: 9>>) -> tensor<?x?xi1, #tx.dims<S: 9, S: 9>>
  // CHECK: tx.and %{{.+}}, %{{.+}} : (tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 9>>, tensor<?x?xi1, #tx.dims<S: 9, S: 9>>) -> tensor<?x1x?x?xi1, #tx.dims<B: 4, S: 9, S: 9>>
  %both = tx.and %pm, %cm : (tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 9>>, tensor<?x?xi1, #tx.dims<S: 9, S: 9>>) -> tensor<?x1x?x?xi1, #tx.dims<B: 4, S: 9, S: 9>>
  // CHECK: tx.or %{{.+}}, %{{.+}} : (tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 9>>, tensor<?x?xi1, #tx.dims<S: 9, S: 9>>) -> tensor<?x1x?x?xi1, #tx.dims<B: 4, S: 9, S: 9>>
  %either = tx.or %pm, %cm : (tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 9>>, tensor<?x?xi1, #tx.dims<S: 9, S: 9>>) -> tensor<?x1x?x?xi1, #tx.dims<B: 4, S: 9, S: 9>>
  // CHECK: tx.not %{{.+}} : (tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 9>>) -> tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 9>>
  %not = tx.not %pm : (tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 9>>) -> tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 9>>
  %zero = tx.constant dense<0> : tensor<i32>
  %pm3 = tx.padding_mask %ids {pad = 3 : i64} : (tensor<?x?xi32, #tx.dims<B: 4, S: 9>>) -> tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 9>>
  // CHECK: tx.padding_mask %{{.+}} {pad = 3 : i64}
  // CHECK: tx.cmp ne, %{{.+}}, %{{.+}} : (tensor<?x?xi32, #tx.dims<B: 4, S: 9>>, tensor<i32>) -> tensor<?x?xi1, #tx.dims<B: 4, S: 9>>
  %ne = tx.cmp ne, %ids, %zero : (tensor<?x?xi32, #tx.dims<B: 4, S: 9>>, tensor<i32>) -> tensor<?x?xi1, #tx.dims<B: 4, S: 9>>
  return
}

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%x: tensor<?x8xf32, #tx.dims<N: 64>>, %y: tensor<8xf32>, %s: tensor<f32>) {
  // CHECK: tx.add %{{.+}}, %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %a = tx.add %x, %y : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK: tx.sub %{{.+}}, %{{.+}} : (tensor<8xf32>, tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %b = tx.sub %y, %x : (tensor<8xf32>, tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK: tx.mul %{{.+}}, %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<f32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %c = tx.mul %x, %s : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<f32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK: tx.div %{{.+}}, %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<f32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %d = tx.div %x, %s : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<f32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK: tx.neg %{{.+}} : (tensor<8xf32>) -> tensor<8xf32>
  %n = tx.neg %y : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: tx.scale %{{.+}} {factor = 1.250000e-01 : f32} : (tensor<8xf32>) -> tensor<8xf32>
  %sc = tx.scale %y {factor = 0.125 : f32} : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: tx.relu %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %r = tx.relu %x : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK: tx.gelu %{{.+}} : (tensor<8xf32>) -> tensor<8xf32>
  %g = tx.gelu %y : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: tx.dropout %{{.+}} {rate = 1.000000e-01 : f32} : (tensor<8xf32>) -> tensor<8xf32>
  %dr = tx.dropout %y {rate = 0.1 : f32} : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: tx.stop_gradient %{{.+}} : (tensor<8xf32>) -> tensor<8xf32>
  %sg = tx.stop_gradient %y : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: tx.cmp lt, %{{.+}}, %{{.+}} : (tensor<8xf32>, tensor<f32>) -> tensor<8xi1>
  %lt = tx.cmp lt, %y, %s : (tensor<8xf32>, tensor<f32>) -> tensor<8xi1>
  // CHECK: tx.masked_fill %{{.+}}, %{{.+}} {value = -1.000000e+09 : f32} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xi1>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %mf = tx.masked_fill %x, %lt {value = -1.0e9 : f32} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xi1>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  return
}

// CHECK-LABEL: func.func @contractions
func.func @contractions(%q: tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, %k: tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, %x: tensor<?x8xf32, #tx.dims<N: 64>>, %w: tensor<16x8xf32>, %b: tensor<16xf32>, %r: tensor<?x16xf32, #tx.dims<N: 64>>) {
  // CHECK: tx.matmul %{{.+}}, %{{.+}} {transpose_rhs} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>) -> tensor<?x2x?x?xf32, #tx.dims<B: 4, T: 9, S: 7>>
  %s = tx.matmul %q, %k {transpose_rhs} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>) -> tensor<?x2x?x?xf32, #tx.dims<B: 4, T: 9, S: 7>>
  // CHECK: tx.matmul %{{.+}}, %{{.+}} {transpose_lhs} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>) -> tensor<?x2x4x4xf32, #tx.dims<B: 4>>
  %g = tx.matmul %q, %q {transpose_lhs} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>) -> tensor<?x2x4x4xf32, #tx.dims<B: 4>>
  // CHECK: tx.linear %{{.+}}, %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<16x8xf32>) -> tensor<?x16xf32, #tx.dims<N: 64>>
  %l0 = tx.linear %x, %w : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<16x8xf32>) -> tensor<?x16xf32, #tx.dims<N: 64>>
  // CHECK: tx.linear %{{.+}}, %{{.+}} bias %{{.+}} {activation = #tx.activation<relu>} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32, #tx.dims<N: 64>>
  %l1 = tx.linear %x, %w bias %b {activation = #tx.activation<relu>} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32, #tx.dims<N: 64>>
  // CHECK: tx.linear %{{.+}}, %{{.+}} bias %{{.+}} residual %{{.+}} {activation = #tx.activation<gelu>} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<16x8xf32>, tensor<16xf32>, tensor<?x16xf32, #tx.dims<N: 64>>) -> tensor<?x16xf32, #tx.dims<N: 64>>
  %l2 = tx.linear %x, %w bias %b residual %r {activation = #tx.activation<gelu>} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<16x8xf32>, tensor<16xf32>, tensor<?x16xf32, #tx.dims<N: 64>>) -> tensor<?x16xf32, #tx.dims<N: 64>>
  // CHECK: tx.linear %{{.+}}, %{{.+}} residual %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<16x8xf32>, tensor<?x16xf32, #tx.dims<N: 64>>) -> tensor<?x16xf32, #tx.dims<N: 64>>
  %l3 = tx.linear %x, %w residual %r : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<16x8xf32>, tensor<?x16xf32, #tx.dims<N: 64>>) -> tensor<?x16xf32, #tx.dims<N: 64>>
  // CHECK: tx.linear %{{.+}}, %{{.+}} gate %{{.+}} residual %{{.+}} {activation = #tx.activation<silu>} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<16x8xf32>, tensor<?x16xf32, #tx.dims<N: 64>>, tensor<?x16xf32, #tx.dims<N: 64>>) -> tensor<?x16xf32, #tx.dims<N: 64>>
  %l4 = tx.linear %x, %w gate %l0 residual %r {activation = #tx.activation<silu>} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<16x8xf32>, tensor<?x16xf32, #tx.dims<N: 64>>, tensor<?x16xf32, #tx.dims<N: 64>>) -> tensor<?x16xf32, #tx.dims<N: 64>>
  // CHECK: tx.linear %{{.+}}, %{{.+}} bias %{{.+}} gate %{{.+}} {activation = #tx.activation<gelu_tanh>}
  %l5 = tx.linear %x, %w bias %b gate %l0 {activation = #tx.activation<gelu_tanh>} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<16x8xf32>, tensor<16xf32>, tensor<?x16xf32, #tx.dims<N: 64>>) -> tensor<?x16xf32, #tx.dims<N: 64>>
  return
}

// CHECK-LABEL: func.func @normalization
func.func @normalization(%x: tensor<?x8xf32, #tx.dims<N: 64>>, %y: tensor<?x8xf32, #tx.dims<N: 64>>, %g: tensor<8xf32>, %b: tensor<8xf32>) {
  // CHECK: tx.softmax %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %s = tx.softmax %x : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK: tx.softmax %{{.+}} {axis = 0 : i64} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %s0 = tx.softmax %x {axis = 0 : i64} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK: tx.log_softmax %{{.+}} {axis = 1 : i64} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %ls = tx.log_softmax %x {axis = 1 : i64} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK: tx.layer_norm %{{.+}}, %{{.+}}, %{{.+}} {epsilon = 9.99999997E-7 : f32} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %ln = tx.layer_norm %x, %g, %b {epsilon = 1.0e-6 : f32} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK: tx.add_layer_norm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>)
  %n, %sum = tx.add_layer_norm %x, %y, %g, %b : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>)
  // CHECK: tx.rope %{{.+}} {heads = 2 : i64} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %rope = tx.rope %x {heads = 2 : i64} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK: tx.rope %{{.+}} {base = 5.000000e+05 : f32, inverse} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %unrope = tx.rope %x {base = 5.0e5 : f32, inverse} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK: tx.rope %{{.+}} angles %{{.+}} {heads = 2 : i64} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x2xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %table = tx.slice %x {starts = array<i64: 0, 0>} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x2xf32, #tx.dims<N: 64>>
  %arope = tx.rope %x angles %table {heads = 2 : i64} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x2xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK: tx.rms_norm %{{.+}}, %{{.+}} {epsilon = 9.99999974E-6 : f32} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %rms = tx.rms_norm %x, %g {epsilon = 1.0e-5 : f32} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK: tx.add_rms_norm %{{.+}}, %{{.+}}, %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>) -> (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>)
  %rn, %rs = tx.add_rms_norm %x, %y, %g : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>) -> (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>)
  // Without bias (nn.LayerNorm(bias=False)).
  // CHECK: tx.layer_norm %{{.+}}, %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %lnb = tx.layer_norm %x, %g : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK: tx.add_layer_norm %{{.+}}, %{{.+}}, %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>) -> (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>)
  %nb, %sumb = tx.add_layer_norm %x, %y, %g : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>) -> (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>)
  return
}

// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>) {
  // CHECK: tx.reshape %{{.+}} : (tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>) -> tensor<?x?x2x4xf32, #tx.dims<B: 4, S: 9>>
  %r = tx.reshape %x : (tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>) -> tensor<?x?x2x4xf32, #tx.dims<B: 4, S: 9>>
  // CHECK: tx.transpose %{{.+}} {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x4xf32, #tx.dims<B: 4, S: 9>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 9>>
  %t = tx.transpose %r {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x4xf32, #tx.dims<B: 4, S: 9>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 9>>
  // CHECK: tx.split_heads %{{.+}} {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 9>>
  %h = tx.split_heads %x {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 9>>
  // CHECK: tx.merge_heads %{{.+}} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 9>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>
  %m = tx.merge_heads %h : (tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 9>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>
  // CHECK: tx.reduce_sum %{{.+}} {axes = array<i64: -1>} : (tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>) -> tensor<?x?xf32, #tx.dims<B: 4, S: 9>>
  %rs = tx.reduce_sum %x {axes = array<i64: -1>} : (tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>) -> tensor<?x?xf32, #tx.dims<B: 4, S: 9>>
  // CHECK: tx.reduce_mean %{{.+}} {axes = array<i64: 0, 1>, keepdim} : (tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>) -> tensor<1x1x8xf32>
  %rm = tx.reduce_mean %x {axes = array<i64: 0, 1>, keepdim} : (tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>) -> tensor<1x1x8xf32>
  return
}

// CHECK-LABEL: func.func @loss_and_attention
func.func @loss_and_attention(%logits: tensor<?x?x16xf32, #tx.dims<B: 4, T: 9>>, %tgt: tensor<?x?xi32, #tx.dims<B: 4, T: 9>>, %q: tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, %k: tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, %m: tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 7>>) {
  // CHECK: tx.cross_entropy %{{.+}}, %{{.+}} {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f32} : (tensor<?x?x16xf32, #tx.dims<B: 4, T: 9>>, tensor<?x?xi32, #tx.dims<B: 4, T: 9>>) -> tensor<f32>
  %l = tx.cross_entropy %logits, %tgt {ignore_index = 0 : i64, label_smoothing = 0.1 : f32} : (tensor<?x?x16xf32, #tx.dims<B: 4, T: 9>>, tensor<?x?xi32, #tx.dims<B: 4, T: 9>>) -> tensor<f32>
  // CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} mask %{{.+}} {scale = 5.000000e-01 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>
  %a = tx.attention %q, %k, %k mask %m {scale = 0.5 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>
  // CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} {causal, dropout = 1.000000e-01 : f32, scale = 5.000000e-01 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>
  %c = tx.attention %q, %q, %q {causal, dropout = 0.1 : f32, scale = 0.5 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>
  return
}

// CHECK-LABEL: func.func @gradient_ops
func.func @gradient_ops(%x: tensor<?x8xf32, #tx.dims<N: 64>>, %dy: tensor<?x8xf32, #tx.dims<N: 64>>, %g: tensor<8xf32>, %w: tensor<4x8xf32>, %dz: tensor<?x4xf32, #tx.dims<N: 64>>, %ids: tensor<?xi32, #tx.dims<N: 64>>, %dl: tensor<f32>) {
  // CHECK: tx.activation_grad %{{.+}}, %{{.+}} {activation = #tx.activation<gelu>} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %a = tx.activation_grad %x, %dy {activation = #tx.activation<gelu>} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK: tx.softmax_grad %{{.+}}, %{{.+}} {log} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %s = tx.softmax_grad %x, %dy {log} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK: %{{.+}}, %{{.+}}, %{{.+}} = tx.layer_norm_grad %{{.+}}, %{{.+}}, %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>, tensor<?x8xf32, #tx.dims<N: 64>>) -> (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>, tensor<8xf32>)
  %n:3 = tx.layer_norm_grad %x, %g, %dy : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>, tensor<?x8xf32, #tx.dims<N: 64>>) -> (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>, tensor<8xf32>)
  // CHECK: %{{.+}}, %{{.+}}, %{{.+}} = tx.layer_norm_grad %{{.+}} rhs %{{.+}}, %{{.+}}, %{{.+}} dsum %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>, tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>) -> (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>, tensor<8xf32>)
  %an:3 = tx.layer_norm_grad %x rhs %x, %g, %dy dsum %dy : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>, tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>) -> (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>, tensor<8xf32>)
  // CHECK: %{{.+}}, %{{.+}} = tx.rms_norm_grad %{{.+}}, %{{.+}}, %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>, tensor<?x8xf32, #tx.dims<N: 64>>) -> (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>)
  %rg:2 = tx.rms_norm_grad %x, %g, %dy : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>, tensor<?x8xf32, #tx.dims<N: 64>>) -> (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>)
  // CHECK: %{{.+}}, %{{.+}} = tx.rms_norm_grad %{{.+}} rhs %{{.+}}, %{{.+}}, %{{.+}} dsum %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>, tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>) -> (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>)
  %arg:2 = tx.rms_norm_grad %x rhs %x, %g, %dy dsum %dy : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>, tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>) -> (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>)
  // CHECK: %{{.+}}, %{{.+}}, %{{.+}} = tx.linear_grad %{{.+}}, %{{.+}}, %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<4x8xf32>, tensor<?x4xf32, #tx.dims<N: 64>>) -> (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<4x8xf32>, tensor<4xf32>)
  %l:3 = tx.linear_grad %x, %w, %dz : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<4x8xf32>, tensor<?x4xf32, #tx.dims<N: 64>>) -> (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<4x8xf32>, tensor<4xf32>)
  // CHECK: %{{.+}}, %{{.+}}, %{{.+}} = tx.linear_grad %{{.+}}, %{{.+}}, %{{.+}} plus %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<4x8xf32>, tensor<?x4xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>) -> (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<4x8xf32>, tensor<4xf32>)
  %lp:3 = tx.linear_grad %x, %w, %dz plus %l#0 : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<4x8xf32>, tensor<?x4xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>) -> (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<4x8xf32>, tensor<4xf32>)
  // CHECK: tx.embedding_grad %{{.+}}, %{{.+}} {vocab = 16 : i64} : (tensor<?xi32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<16x8xf32>
  %e = tx.embedding_grad %ids, %dy {vocab = 16 : i64} : (tensor<?xi32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<16x8xf32>
  // CHECK: tx.cross_entropy_grad %{{.+}}, %{{.+}}, %{{.+}} {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f32} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?xi32, #tx.dims<N: 64>>, tensor<f32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %c = tx.cross_entropy_grad %x, %ids, %dl {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f32} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?xi32, #tx.dims<N: 64>>, tensor<f32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK: %{{.+}}, %[[LSE:.+]] = tx.cross_entropy_train %{{.+}}, %{{.+}} {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f32} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?xi32, #tx.dims<N: 64>>) -> (tensor<f32>, tensor<?xf32, #tx.dims<N: 64>>)
  %ct:2 = tx.cross_entropy_train %x, %ids {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f32} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?xi32, #tx.dims<N: 64>>) -> (tensor<f32>, tensor<?xf32, #tx.dims<N: 64>>)
  // CHECK: tx.cross_entropy_grad %{{.+}}, %{{.+}}, %{{.+}} lse %[[LSE]] {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f32} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?xi32, #tx.dims<N: 64>>, tensor<f32>, tensor<?xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %cl = tx.cross_entropy_grad %x, %ids, %dl lse %ct#1 {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f32} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?xi32, #tx.dims<N: 64>>, tensor<f32>, tensor<?xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK: tx.dropout_grad %{{.+}} {rate = 1.000000e-01 : f32, tx.rng = 7 : i64} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %d = tx.dropout_grad %dy {rate = 1.000000e-01 : f32, tx.rng = 7 : i64} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK: tx.sum_to %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<8xf32>
  %st = tx.sum_to %dy : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<8xf32>
  // CHECK: tx.broadcast_to %{{.+}} : (tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %b = tx.broadcast_to %st : (tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  return
}

// CHECK-LABEL: func.func @attention_gradient_ops
func.func @attention_gradient_ops(%q: tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, %k: tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, %m: tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 7>>, %do: tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>) {
  // CHECK: %{{.+}}, %{{.+}} = tx.attention_train %{{.+}}, %{{.+}}, %{{.+}} mask %{{.+}} {dropout = 1.000000e-01 : f32, scale = 5.000000e-01 : f32, tx.rng = 3 : i64} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 7>>) -> (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?xf32, #tx.dims<B: 4, T: 9>>)
  %o, %lse = tx.attention_train %q, %k, %k mask %m {dropout = 1.000000e-01 : f32, scale = 5.000000e-01 : f32, tx.rng = 3 : i64} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 7>>) -> (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?xf32, #tx.dims<B: 4, T: 9>>)
  // CHECK: %{{.+}}, %{{.+}}, %{{.+}} = tx.attention_grad %{{.+}}, %{{.+}}, %{{.+}} mask %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {dropout = 1.000000e-01 : f32, scale = 5.000000e-01 : f32, tx.rng = 3 : i64} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>) -> (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>)
  %g:3 = tx.attention_grad %q, %k, %k mask %m, %o, %lse, %do {dropout = 1.000000e-01 : f32, scale = 5.000000e-01 : f32, tx.rng = 3 : i64} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>) -> (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>)
  return
}

// CHECK-LABEL: func.func @optimizer_ops
func.func @optimizer_ops(%gw: tensor<4x8xf32>, %gb: tensor<8xf32>) {
  // CHECK: tx.grad_norm %{{.+}}, %{{.+}} {clip = 1.000000e+00 : f64} : tensor<4x8xf32>, tensor<8xf32> -> tensor<f32>
  %s = tx.grad_norm %gw, %gb {clip = 1.000000e+00 : f64} : tensor<4x8xf32>, tensor<8xf32> -> tensor<f32>
  // CHECK: tx.store_grad @norm.bias, %{{.+}} : tensor<8xf32>
  tx.store_grad @norm.bias, %gb : tensor<8xf32>
  // CHECK: tx.adam_update @w, %{{.+}} scale %{{.+}} {beta1 = 9.000000e-01 : f64, beta2 = 0.97999999999999998 : f64, d_model = 6.400000e+01 : f64, eps = 1.000000e-09 : f64, lr = 1.000000e+00 : f64, schedule = "noam", warmup = 1.000000e+02 : f64, weight_decay = 0.000000e+00 : f64} : tensor<4x8xf32>, tensor<f32>
  tx.adam_update @w, %gw scale %s {beta1 = 9.000000e-01 : f64, beta2 = 9.800000e-01 : f64, d_model = 6.400000e+01 : f64, eps = 1.000000e-09 : f64, lr = 1.000000e+00 : f64, schedule = "noam", warmup = 1.000000e+02 : f64, weight_decay = 0.000000e+00 : f64} : tensor<4x8xf32>, tensor<f32>
  return
}

// CHECK-LABEL: func.func @decoding_ops
func.func @decoding_ops(%cache: tensor<?x?x8xf32, #tx.dims<B: 4, cache: 9>>, %new: tensor<?x?x8xf32, #tx.dims<B: 4, T: 9>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, cache: 9>> {
  // CHECK: tx.cache_write %{{.+}}, %{{.+}} : (tensor<?x?x8xf32, #tx.dims<B: 4, cache: 9>>, tensor<?x?x8xf32, #tx.dims<B: 4, T: 9>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, cache: 9>>
  %w = tx.cache_write %cache, %new : (tensor<?x?x8xf32, #tx.dims<B: 4, cache: 9>>, tensor<?x?x8xf32, #tx.dims<B: 4, T: 9>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, cache: 9>>
  return %w : tensor<?x?x8xf32, #tx.dims<B: 4, cache: 9>>
}
