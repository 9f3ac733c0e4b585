// RUN: tx-opt %s --tx-attention-layout | FileCheck %s

// The usual shape: split_heads operands read by attention alone, the result
// read by merge_heads alone. Nothing changes.
// CHECK-LABEL: func.func @usual
// CHECK-NEXT: [[S:%.+]] = tx.split_heads %arg0 {heads = 2 : i64}
// CHECK-NEXT: [[A:%.+]] = tx.attention [[S]], [[S]], [[S]]
// CHECK-NEXT: [[M:%.+]] = tx.merge_heads [[A]]
// CHECK-NEXT: return [[M]]
func.func @usual(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %s = tx.split_heads %x {heads = 2 : i64} : (tensor<2x4x8xf32>) -> tensor<2x2x4x4xf32>
  %a = tx.attention %s, %s, %s {scale = 0.5 : f32} : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %m = tx.merge_heads %a : (tensor<2x2x4x4xf32>) -> tensor<2x4x8xf32>
  return %m : tensor<2x4x8xf32>
}

// A split_heads that another op reads too is a copy; the kernel reads the
// split's input, so attention gets a split of its own (a view).
// CHECK-LABEL: func.func @shared_split
// CHECK-NEXT: [[S:%.+]] = tx.split_heads %arg0 {heads = 2 : i64}
// CHECK-NEXT: [[V:%.+]] = tx.split_heads %arg0 {heads = 2 : i64}
// CHECK-NEXT: [[A:%.+]] = tx.attention [[V]], [[V]], [[V]]
// CHECK-NEXT: tx.merge_heads [[A]]
// CHECK-NEXT: tx.merge_heads [[S]]
func.func @shared_split(%x: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %s = tx.split_heads %x {heads = 2 : i64} : (tensor<2x4x8xf32>) -> tensor<2x2x4x4xf32>
  %a = tx.attention %s, %s, %s {scale = 0.5 : f32} : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %m = tx.merge_heads %a : (tensor<2x2x4x4xf32>) -> tensor<2x4x8xf32>
  %n = tx.merge_heads %s : (tensor<2x2x4x4xf32>) -> tensor<2x4x8xf32>
  return %m, %n : tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// Operands made otherwise go through the merged layout, once per value; a
// result another op reads is read back through it.
// CHECK-LABEL: func.func @not_split
// CHECK: [[M:%.+]] = tx.merge_heads %arg0
// CHECK-NEXT: [[S:%.+]] = tx.split_heads [[M]] {heads = 2 : i64}
// CHECK-NEXT: [[A:%.+]] = tx.attention [[S]], [[S]], [[S]]
// CHECK-NEXT: [[AM:%.+]] = tx.merge_heads [[A]]
// CHECK-NEXT: [[AS:%.+]] = tx.split_heads [[AM]] {heads = 2 : i64}
// CHECK-NEXT: [[R:%.+]] = tx.relu [[AS]]
// CHECK-NEXT: return [[R]]
func.func @not_split(%q: tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32> {
  %a = tx.attention %q, %q, %q {scale = 0.5 : f32} : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %r = tx.relu %a : (tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  return %r : tensor<2x2x4x4xf32>
}

// Q and K the same tensor: autodiff sums dQ and dK before the merge_heads,
// so both are read back in [B, h, T, d]; dV, read by merge_heads alone,
// and the forward output, read by merge_heads and attention_grad, stay.
// CHECK-LABEL: func.func @summed_grads
// CHECK: [[O:%.+]], [[LSE:%.+]] = tx.attention_train [[Q:%.+]], [[Q]], [[V:%.+]] {scale
// CHECK-NEXT: tx.merge_heads [[O]]
// CHECK: [[DQ:%.+]], [[DK:%.+]], [[DV:%.+]] = tx.attention_grad [[Q]], [[Q]], [[V]], [[O]], [[LSE]], {{%.+}} {scale
// CHECK-NEXT: [[MK:%.+]] = tx.merge_heads [[DK]]
// CHECK-NEXT: [[SK:%.+]] = tx.split_heads [[MK]]
// CHECK-NEXT: [[MQ:%.+]] = tx.merge_heads [[DQ]]
// CHECK-NEXT: [[SQ:%.+]] = tx.split_heads [[MQ]]
// CHECK-NEXT: [[SUM:%.+]] = tx.add [[SQ]], [[SK]]
// CHECK-NEXT: tx.merge_heads [[DV]]
// CHECK-NEXT: tx.merge_heads [[SUM]]
func.func @summed_grads(%x: tensor<2x4x8xf32>, %y: tensor<2x4x8xf32>, %g: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %q = tx.split_heads %x {heads = 2 : i64} : (tensor<2x4x8xf32>) -> tensor<2x2x4x4xf32>
  %v = tx.split_heads %y {heads = 2 : i64} : (tensor<2x4x8xf32>) -> tensor<2x2x4x4xf32>
  %o, %lse = tx.attention_train %q, %q, %v {scale = 0.5 : f32} : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> (tensor<2x2x4x4xf32>, tensor<2x2x4xf32>)
  %m = tx.merge_heads %o : (tensor<2x2x4x4xf32>) -> tensor<2x4x8xf32>
  %dout = tx.split_heads %g {heads = 2 : i64} : (tensor<2x4x8xf32>) -> tensor<2x2x4x4xf32>
  %dq, %dk, %dv = tx.attention_grad %q, %q, %v, %o, %lse, %dout {scale = 0.5 : f32} : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4xf32>, tensor<2x2x4x4xf32>) -> (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>)
  %sum = tx.add %dq, %dk : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %gv = tx.merge_heads %dv : (tensor<2x2x4x4xf32>) -> tensor<2x4x8xf32>
  %gx = tx.merge_heads %sum : (tensor<2x2x4x4xf32>) -> tensor<2x4x8xf32>
  return %m, %gv, %gx : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
}
