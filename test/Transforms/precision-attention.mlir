// RUN: tx-opt %s --tx-precision=precision=bf16 | FileCheck %s
// RUN: tx-opt %s --tx-precision | FileCheck %s --check-prefix=FP32
// RUN: tx-opt %s --tx-precision=precision=bf16 | tx-opt | FileCheck %s
//
// tx-precision with bf16 marks the fused attention ops `bf16` (their block
// products run on bf16 operands inside txrt_attention_fwd_bf16 / _bwd_bf16)
// and casts none of their operands: Q, K, V, O, lse and dO stay f32. The
// attribute survives a round trip. With fp32 nothing is marked.

// CHECK-LABEL: func.func @attention
// CHECK-NOT: tx.cast
// CHECK: tx.attention %arg0, %arg1, %arg1 mask %arg2 {bf16, scale = 5.000000e-01 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>
// CHECK-NEXT: %[[O:.+]], %[[LSE:.+]] = tx.attention_train %arg0, %arg1, %arg1 mask %arg2 {bf16, causal, dropout = 1.000000e-01 : f32, scale = 5.000000e-01 : f32, tx.rng = 3 : i64} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 7>>) -> (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?xf32, #tx.dims<B: 4, T: 9>>)
// CHECK-NEXT: %{{.+}}, %{{.+}}, %{{.+}} = tx.attention_grad %arg0, %arg1, %arg1 mask %arg2, %[[O]], %[[LSE]], %arg3 {bf16, causal, dropout = 1.000000e-01 : f32, scale = 5.000000e-01 : f32, tx.rng = 3 : i64} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>) -> (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>)
// CHECK-NOT: tx.cast
// FP32-LABEL: func.func @attention
// FP32-NOT: bf16
func.func @attention(%q: tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, %k: tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, %m: tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 7>>, %do: tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>) -> (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>) {
  %a = tx.attention %q, %k, %k mask %m {scale = 0.5 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>
  %o, %lse = tx.attention_train %q, %k, %k mask %m {causal, dropout = 1.000000e-01 : f32, scale = 5.000000e-01 : f32, tx.rng = 3 : i64} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 7>>) -> (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?xf32, #tx.dims<B: 4, T: 9>>)
  %g:3 = tx.attention_grad %q, %k, %k mask %m, %o, %lse, %do {causal, dropout = 1.000000e-01 : f32, scale = 5.000000e-01 : f32, tx.rng = 3 : i64} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>) -> (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>)
  return %a, %g#0, %g#1 : tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>
}
