// RUN: tx-opt %s -split-input-file -verify-diagnostics
//
// `bf16` on the fused attention ops (set by tx-precision) is a unit
// attribute; any other value is an error, on every op that carries it.

func.func @attention_bf16_value(%q: tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, %k: tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>) {
  // expected-error @+2 {{attention bf16 must be a unit attribute (it marks bf16 block products)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.attention %q, %k, %k {bf16 = 1 : i32, scale = 0.5 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>
  return
}

// -----

func.func @attention_grad_bf16_value(%q: tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, %k: tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, %o: tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, %lse: tensor<?x2x?xf32, #tx.dims<B: 4, T: 9>>) {
  // expected-error @+2 {{attention bf16 must be a unit attribute (it marks bf16 block products)}}
  // expected-error @+1 {{failed to infer returned types}}
  %g:3 = tx.attention_grad %q, %k, %k, %o, %lse, %o {bf16 = "yes", scale = 0.5 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>) -> (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 7>>)
  return
}
