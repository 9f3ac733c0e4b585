// RUN: tx-opt %s -split-input-file -verify-diagnostics
//
// One case per verifier and shape-inference error of the tx dialect.

// expected-error @+1 {{#tx.dims bound of 'B' must be positive, got 0}}
func.func @dims_bound(%x: tensor<?xf32, #tx.dims<B: 0>>)

// -----

func.func @dims_missing(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of f32 (with #tx.dims for its dynamic dims)}}
  %0 = tx.relu %x : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @dims_count(%x: tensor<?x?xf32, #tx.dims<B: 4>>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of f32 (with #tx.dims for its dynamic dims)}}
  %0 = tx.relu %x : (tensor<?x?xf32, #tx.dims<B: 4>>) -> tensor<?x?xf32, #tx.dims<B: 4>>
  return
}

// -----

// expected-error @+1 {{'tx.parameter' op type must be a static f32 tensor, got 'tensor<4xi32>'}}
tx.parameter @p : tensor<4xi32> {init = #tx.init<zeros>}

// -----

// expected-error @+1 {{'tx.parameter' op parameter must have rank >= 1}}
tx.parameter @p : tensor<f32> {init = #tx.init<zeros>}

// -----

func.func @param_missing() {
  // expected-error @+1 {{'tx.param' op refers to no tx.parameter named @nope}}
  %0 = tx.param @nope : tensor<4xf32>
  return
}

// -----

tx.parameter @w : tensor<4xf32> {init = #tx.init<zeros>}
func.func @param_type() {
  // expected-error @+1 {{'tx.param' op result type 'tensor<8xf32>' differs from parameter @w of type 'tensor<4xf32>'}}
  %0 = tx.param @w : tensor<8xf32>
  return
}

// -----

func.func @inferred_mismatch(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'tx.relu' op inferred type(s) 'tensor<4x8xf32>' are incompatible with return type(s) of operation 'tensor<8x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.relu %x : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return
}

// -----

func.func @embedding_table(%ids: tensor<4xi32>, %t: tensor<16xf32>) {
  // expected-error @+2 {{table must be a static [vocab, dim] matrix, got [16]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.embedding %ids, %t : (tensor<4xi32>, tensor<16xf32>) -> tensor<4x16xf32>
  return
}

// -----

// No id selects a row of an empty table (tx-autodiff aborted on its
// embedding_grad of vocab 0).
func.func @embedding_no_rows(%ids: tensor<4xi32>, %t: tensor<0x4xf32>) {
  // expected-error @+2 {{table has no rows ([0, 4]): no id can select one}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.embedding %ids, %t : (tensor<4xi32>, tensor<0x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @pe_rank(%x: tensor<8xf32>) {
  // expected-error @+2 {{positional_encoding input must be [..., T, d], got [8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.positional_encoding %x : (tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @pe_odd(%x: tensor<4x7xf32>) {
  // expected-error @+2 {{positional_encoding needs a static, even model dimension, got 7}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.positional_encoding %x : (tensor<4x7xf32>) -> tensor<4x7xf32>
  return
}

// -----

func.func @padding_mask_rank(%ids: tensor<4xi32>) {
  // expected-error @+2 {{padding_mask takes ids [B, S], got [4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.padding_mask %ids : (tensor<4xi32>) -> tensor<4xi1>
  return
}

// -----

func.func @causal_mask_rank(%ids: tensor<i32>) {
  // expected-error @+2 {{causal_mask needs a tensor of rank >= 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.causal_mask %ids : (tensor<i32>) -> tensor<1x1xi1>
  return
}

// -----

func.func @broadcast(%x: tensor<?x8xf32, #tx.dims<S: 9>>, %y: tensor<?x8xf32, #tx.dims<T: 9>>) {
  // expected-error @+2 {{shapes [S, 8] and [T, 8] do not broadcast: dimension 0 is S vs T}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.add %x, %y : (tensor<?x8xf32, #tx.dims<S: 9>>, tensor<?x8xf32, #tx.dims<T: 9>>) -> tensor<?x8xf32, #tx.dims<S: 9>>
  return
}

// -----

func.func @broadcast_static(%x: tensor<4x8xf32>, %y: tensor<4x3xf32>) {
  // expected-error @+2 {{shapes [4, 8] and [4, 3] do not broadcast: dimension 1 is 8 vs 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.mul %x, %y : (tensor<4x8xf32>, tensor<4x3xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @cmp_types(%x: tensor<4xf32>, %y: tensor<4xi32>) {
  // expected-error @+2 {{operand element types differ: f32[4] vs i32[4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.cmp eq, %x, %y : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xi1>
  return
}

// -----

func.func @masked_fill_broadcast(%x: tensor<4x8xf32>, %m: tensor<3xi1>) {
  // expected-error @+2 {{mask does not broadcast to the input: shapes [4, 8] and [3] do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.masked_fill %x, %m {value = 0.0 : f32} : (tensor<4x8xf32>, tensor<3xi1>) -> tensor<4x8xf32>
  return
}

// -----

func.func @masked_fill_grow(%x: tensor<8xf32>, %m: tensor<4x8xi1>) {
  // expected-error @+2 {{mask [4, 8] would grow the input [8] to [4, 8] (masked_fill keeps the input's shape; `where(mask, value, x)` broadcasts both)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.masked_fill %x, %m {value = 0.0 : f32} : (tensor<8xf32>, tensor<4x8xi1>) -> tensor<8xf32>
  return
}

// -----

func.func @dropout_rate(%x: tensor<8xf32>) {
  // expected-error @+2 {{dropout rate must be in [0, 1), got 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.dropout %x {rate = 1.0 : f32} : (tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @matmul_rank(%a: tensor<8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+2 {{matmul operands must have rank >= 2, got [8] and [8, 4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.matmul %a, %b : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @matmul_inner(%a: tensor<2x8xf32>, %b: tensor<4x8xf32>) {
  // expected-error @+2 {{matmul contracts [2, 8] with [4, 8]: inner dimensions 8 and 4 differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.matmul %a, %b : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<3x2x8xf32>, %b: tensor<5x8x4xf32>) {
  // expected-error @+2 {{matmul batch dimensions: shapes [3] and [5] do not broadcast: dimension 0 is 3 vs 5}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.matmul %a, %b : (tensor<3x2x8xf32>, tensor<5x8x4xf32>) -> tensor<3x2x4xf32>
  return
}

// -----

func.func @linear_rank(%x: tensor<f32>, %w: tensor<4x8xf32>) {
  // expected-error @+2 {{linear input must have rank >= 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.linear %x, %w : (tensor<f32>, tensor<4x8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @linear_weight(%x: tensor<2x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+2 {{linear weight must be a static [out, in] matrix, got [8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.linear %x, %w : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @linear_gate(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+2 {{linear gate must have the result's type f32[2, 4], got f32[4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.linear %x, %w gate %g : (tensor<2x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @linear_features(%x: tensor<2x8xf32>, %w: tensor<4x6xf32>) {
  // expected-error @+2 {{linear input [2, 8] has 8 features but weight [4, 6] expects 6}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.linear %x, %w : (tensor<2x8xf32>, tensor<4x6xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @linear_bias(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+2 {{linear bias must be [4], got [8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.linear %x, %w bias %b : (tensor<2x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @linear_residual(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %r: tensor<2x8xf32>) {
  // expected-error @+2 {{linear residual must have the result's type f32[2, 4], got f32[2, 8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.linear %x, %w residual %r : (tensor<2x8xf32>, tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @softmax_axis(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.softmax %x {axis = 2 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @log_softmax_axis(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{axis -3 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.log_softmax %x {axis = -3 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm_rank(%x: tensor<f32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{layer_norm input must have rank >= 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.layer_norm %x, %g, %g : (tensor<f32>, tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
  return
}

// -----

func.func @layer_norm_dynamic(%x: tensor<4x?xf32, #tx.dims<D: 8>>, %g: tensor<8xf32>) {
  // expected-error @+2 {{layer_norm normalizes the last dimension, which must be static, got [4, D]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.layer_norm %x, %g, %g : (tensor<4x?xf32, #tx.dims<D: 8>>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x?xf32, #tx.dims<D: 8>>
  return
}

// -----

func.func @layer_norm_weight(%x: tensor<4x8xf32>, %g: tensor<4xf32>, %b: tensor<8xf32>) {
  // expected-error @+2 {{weight must be [8], got [4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.layer_norm %x, %g, %b : (tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm_bias(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8x1xf32>) {
  // expected-error @+2 {{bias must be [8], got [8, 1]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.layer_norm %x, %g, %b : (tensor<4x8xf32>, tensor<8xf32>, tensor<8x1xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm_eps(%x: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{epsilon must be positive, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.layer_norm %x, %g, %g {epsilon = 0.0 : f32} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @reshape_element(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tx.reshape' op changes the element type from f32[4, 8] to i32[32]}}
  %0 = tx.reshape %x : (tensor<4x8xf32>) -> tensor<32xi32>
  return
}

// -----

func.func @reshape_symbols(%x: tensor<?x8xf32, #tx.dims<S: 9>>) {
  // expected-error @+1 {{'tx.reshape' op must keep the symbolic dimensions of [S, 8], got [T, 8]}}
  %0 = tx.reshape %x : (tensor<?x8xf32, #tx.dims<S: 9>>) -> tensor<?x8xf32, #tx.dims<T: 9>>
  return
}

// -----

func.func @reshape_count(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tx.reshape' op changes the number of elements: [4, 8] vs [30]}}
  %0 = tx.reshape %x : (tensor<4x8xf32>) -> tensor<30xf32>
  return
}

// -----

func.func @transpose_size(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{permutation has 3 entries for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.transpose %x {permutation = array<i64: 0, 1, 2>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @transpose_repeat(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{permutation must list each of 0..1 once}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.transpose %x {permutation = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<8x8xf32>
  return
}

// -----

func.func @split_heads_rank(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{split_heads takes [B, T, d], got [4, 8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.split_heads %x {heads = 2 : i64} : (tensor<4x8xf32>) -> tensor<4x2x4xf32>
  return
}

// -----

func.func @split_heads_zero(%x: tensor<2x4x8xf32>) {
  // expected-error @+2 {{heads must be positive, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.split_heads %x {heads = 0 : i64} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @split_heads_divisible(%x: tensor<2x4x8xf32>) {
  // expected-error @+2 {{model dimension 8 is not divisible by 3 heads}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.split_heads %x {heads = 3 : i64} : (tensor<2x4x8xf32>) -> tensor<2x3x4x2xf32>
  return
}

// -----

func.func @merge_heads_rank(%x: tensor<2x4x8xf32>) {
  // expected-error @+2 {{merge_heads takes [B, h, T, d_k] with static h and d_k, got [2, 4, 8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.merge_heads %x : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @reduce_empty(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{axes must name at least one axis}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.reduce_sum %x {axes = array<i64>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @reduce_twice(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{axis -1 is reduced twice}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.reduce_mean %x {axes = array<i64: 1, -1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @reduce_range(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{axis 5 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.reduce_sum %x {axes = array<i64: 5>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @cross_entropy_targets(%l: tensor<4x16xf32>, %t: tensor<5xi32>) {
  // expected-error @+2 {{cross_entropy targets must be the logits' shape without the class dimension: logits [4, 16], targets [5]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.cross_entropy %l, %t : (tensor<4x16xf32>, tensor<5xi32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_smoothing(%l: tensor<4x16xf32>, %t: tensor<4xi32>) {
  // expected-error @+2 {{label_smoothing must be in [0, 1), got -0.5}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.cross_entropy %l, %t {label_smoothing = -0.5 : f32} : (tensor<4x16xf32>, tensor<4xi32>) -> tensor<f32>
  return
}

// -----

func.func @attention_rank(%q: tensor<2x4x8xf32>, %k: tensor<4x8xf32>) {
  // expected-error @+2 {{attention query, key and value must have the same rank >= 2, got [2, 4, 8], [4, 8], [4, 8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.attention %q, %k, %k {scale = 1.0 : f32} : (tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_batch(%q: tensor<2x4x8xf32>, %k: tensor<3x4x8xf32>) {
  // expected-error @+2 {{attention leading dimensions differ: [2, 4, 8], [3, 4, 8], [3, 4, 8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.attention %q, %k, %k {scale = 1.0 : f32} : (tensor<2x4x8xf32>, tensor<3x4x8xf32>, tensor<3x4x8xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_features(%q: tensor<4x8xf32>, %k: tensor<5x6xf32>) {
  // expected-error @+2 {{attention query and key feature dimensions differ: 8 vs 6}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.attention %q, %k, %k {scale = 1.0 : f32} : (tensor<4x8xf32>, tensor<5x6xf32>, tensor<5x6xf32>) -> tensor<4x6xf32>
  return
}

// -----

func.func @attention_lengths(%q: tensor<4x8xf32>, %k: tensor<5x8xf32>, %v: tensor<6x8xf32>) {
  // expected-error @+2 {{attention key and value lengths differ: 5 vs 6}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.attention %q, %k, %v {scale = 1.0 : f32} : (tensor<4x8xf32>, tensor<5x8xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// The kernels take one head size: a narrower value was read and written as
// wide as the query (past its buffers), its results wrong.
func.func @attention_value_width(%q: tensor<2x3x4xf32>, %k: tensor<2x5x4xf32>, %v: tensor<2x5x3xf32>) {
  // expected-error @+2 {{attention value feature dimension 3 differs from the query and key's 4 (the attention kernels take one head size)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.attention %q, %k, %v {scale = 1.0 : f32} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x3xf32>) -> tensor<2x3x3xf32>
  return
}

// -----

func.func @attention_mask(%q: tensor<4x8xf32>, %k: tensor<5x8xf32>, %m: tensor<4x4xi1>) {
  // expected-error @+2 {{attention mask [4, 4] does not broadcast to the scores [4, 5]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.attention %q, %k, %k mask %m {scale = 1.0 : f32} : (tensor<4x8xf32>, tensor<5x8xf32>, tensor<5x8xf32>, tensor<4x4xi1>) -> tensor<4x8xf32>
  return
}

// -----

func.func @attention_dropout(%q: tensor<4x8xf32>) {
  // expected-error @+2 {{attention dropout must be in [0, 1), got 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.attention %q, %q, %q {scale = 1.0 : f32, dropout = 2.0 : f32} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @attention_scale(%q: tensor<4x8xf32>) {
  // expected-error @+2 {{attention scale must be finite and non-zero, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.attention %q, %q, %q {scale = 0.0 : f32} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// tx-attention-layout and the kernels take [B, h, T, d_k] with static heads:
// rank 3, rank 5 and 0 heads verified, and the layout pass then aborted
// ("Failed to infer result type(s)") on its merge_heads.
func.func @attention_rank3(%q: tensor<4x8x16xf32>, %k: tensor<4x6x16xf32>) {
  // expected-error @+2 {{attention takes [B, h, T, d_k] (rank 4) with static heads h >= 1 and head size d_k >= 1, got [4, 8, 16], [4, 6, 16], [4, 6, 16]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.attention %q, %k, %k {scale = 0.25 : f32} : (tensor<4x8x16xf32>, tensor<4x6x16xf32>, tensor<4x6x16xf32>) -> tensor<4x8x16xf32>
  return
}

// -----

func.func @attention_rank5(%q: tensor<2x2x2x8x16xf32>) {
  // expected-error @+2 {{attention takes [B, h, T, d_k] (rank 4)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.attention %q, %q, %q {scale = 0.25 : f32} : (tensor<2x2x2x8x16xf32>, tensor<2x2x2x8x16xf32>, tensor<2x2x2x8x16xf32>) -> tensor<2x2x2x8x16xf32>
  return
}

// -----

func.func @attention_no_heads(%q: tensor<2x0x8x16xf32>) {
  // expected-error @+2 {{attention takes [B, h, T, d_k] (rank 4) with static heads h >= 1 and head size d_k >= 1, got [2, 0, 8, 16]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = tx.attention_train %q, %q, %q {scale = 0.25 : f32} : (tensor<2x0x8x16xf32>, tensor<2x0x8x16xf32>, tensor<2x0x8x16xf32>) -> (tensor<2x0x8x16xf32>, tensor<2x0x8xf32>)
  return
}

// -----

func.func @add_layer_norm_types(%x: tensor<4x8xf32>, %y: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{add_layer_norm operands must have the same type, got f32[4, 8] and f32[2, 8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = tx.add_layer_norm %x, %y, %g, %g : (tensor<4x8xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @attention_train_shapes(%q: tensor<4x8xf32>, %k: tensor<5x8xf32>, %v: tensor<6x8xf32>) {
  // expected-error @+2 {{attention key and value lengths differ: 5 vs 6}}
  // expected-error @+1 {{failed to infer returned types}}
  %o, %lse = tx.attention_train %q, %k, %v {scale = 1.0 : f32} : (tensor<4x8xf32>, tensor<5x8xf32>, tensor<6x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
  return
}

// -----

func.func @attention_grad_out(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x5x8xf32>, %o: tensor<1x1x4x7xf32>, %lse: tensor<1x1x4xf32>) {
  // expected-error @+2 {{attention_grad out and dout must have type f32[1, 1, 4, 8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %g:3 = tx.attention_grad %q, %k, %k, %o, %lse, %o {scale = 1.0 : f32} : (tensor<1x1x4x8xf32>, tensor<1x1x5x8xf32>, tensor<1x1x5x8xf32>, tensor<1x1x4x7xf32>, tensor<1x1x4xf32>, tensor<1x1x4x7xf32>) -> (tensor<1x1x4x8xf32>, tensor<1x1x5x8xf32>, tensor<1x1x5x8xf32>)
  return
}

// -----

func.func @attention_grad_lse(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x5x8xf32>, %lse: tensor<1x1x5xf32>) {
  // expected-error @+2 {{attention_grad lse must have type f32[1, 1, 4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %g:3 = tx.attention_grad %q, %k, %k, %q, %lse, %q {scale = 1.0 : f32} : (tensor<1x1x4x8xf32>, tensor<1x1x5x8xf32>, tensor<1x1x5x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x5xf32>, tensor<1x1x4x8xf32>) -> (tensor<1x1x4x8xf32>, tensor<1x1x5x8xf32>, tensor<1x1x5x8xf32>)
  return
}

// -----

func.func @activation_grad_type(%x: tensor<4x8xf32>, %dy: tensor<8xf32>) {
  // expected-error @+2 {{activation_grad dresult must have type f32[4, 8], got f32[8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.activation_grad %x, %dy {activation = #tx.activation<relu>} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @activation_grad_none(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{activation_grad needs relu or gelu}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.activation_grad %x, %x {activation = #tx.activation<none>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @softmax_grad_type(%y: tensor<4x8xf32>, %dy: tensor<4x1xf32>) {
  // expected-error @+2 {{softmax_grad dresult must have type f32[4, 8], got f32[4, 1]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.softmax_grad %y, %dy : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm_grad_weight(%x: tensor<4x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+2 {{layer_norm_grad weight must be [d] for an input [..., d]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = tx.layer_norm_grad %x, %g, %x : (tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @layer_norm_grad_dresult(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %dy: tensor<2x8xf32>) {
  // expected-error @+2 {{layer_norm_grad dresult must have type f32[4, 8], got f32[2, 8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = tx.layer_norm_grad %x, %g, %dy : (tensor<4x8xf32>, tensor<8xf32>, tensor<2x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @layer_norm_grad_rhs(%x: tensor<4x8xf32>, %y: tensor<8xf32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{layer_norm_grad rhs must have type f32[4, 8], got f32[8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = tx.layer_norm_grad %x rhs %y, %g, %x : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @layer_norm_grad_dsum(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %ds: tensor<1x8xf32>) {
  // expected-error @+2 {{layer_norm_grad dsum must have type f32[4, 8], got f32[1, 8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = tx.layer_norm_grad %x rhs %x, %g, %x dsum %ds : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<1x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @linear_grad_ranks(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %dy: tensor<2x4x16xf32>) {
  // expected-error @+2 {{linear_grad needs input [..., in], weight [out, in] and dresult [..., out]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = tx.linear_grad %x, %w, %dy : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<2x4x16xf32>) -> (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>)
  return
}

// -----

func.func @linear_grad_addend(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %dy: tensor<4x16xf32>, %a: tensor<4x16xf32>) {
  // expected-error @+2 {{linear_grad addend f32[4, 16] must have dinput's type f32[4, 8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = tx.linear_grad %x, %w, %dy plus %a : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>)
  return
}

// -----

func.func @linear_grad_dresult(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %dy: tensor<4x8xf32>) {
  // expected-error @+2 {{linear_grad dresult must be [4, 16] for input [4, 8] and weight f32[16, 8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = tx.linear_grad %x, %w, %dy : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>)
  return
}

// -----

func.func @embedding_grad_ranks(%ids: tensor<4x5xi32>, %dy: tensor<4x8xf32>) {
  // expected-error @+2 {{embedding_grad needs ids [...] and dresult [..., dim]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.embedding_grad %ids, %dy {vocab = 16 : i64} : (tensor<4x5xi32>, tensor<4x8xf32>) -> tensor<16x8xf32>
  return
}

// -----

func.func @embedding_grad_vocab(%ids: tensor<4xi32>, %dy: tensor<4x8xf32>) {
  // expected-error @+2 {{embedding_grad vocab must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.embedding_grad %ids, %dy {vocab = 0 : i64} : (tensor<4xi32>, tensor<4x8xf32>) -> tensor<0x8xf32>
  return
}

// -----

func.func @cross_entropy_grad_dloss(%z: tensor<4x16xf32>, %t: tensor<4xi32>, %dl: tensor<1xf32>) {
  // expected-error @+2 {{cross_entropy_grad needs logits and a scalar dloss}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.cross_entropy_grad %z, %t, %dl : (tensor<4x16xf32>, tensor<4xi32>, tensor<1xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @cross_entropy_grad_lse(%z: tensor<4x16xf32>, %t: tensor<4xi32>, %dl: tensor<f32>, %lse: tensor<5xf32>) {
  // expected-error @+2 {{cross_entropy_grad lse must be the logits' shape without the class dimension}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.cross_entropy_grad %z, %t, %dl lse %lse : (tensor<4x16xf32>, tensor<4xi32>, tensor<f32>, tensor<5xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @cross_entropy_train_targets(%l: tensor<4x16xf32>, %t: tensor<5xi32>) {
  // expected-error @+2 {{cross_entropy targets must be the logits' shape without the class dimension: logits [4, 16], targets [5]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = tx.cross_entropy_train %l, %t : (tensor<4x16xf32>, tensor<5xi32>) -> (tensor<f32>, tensor<4xf32>)
  return
}

// -----

func.func @dropout_grad_rate(%dy: tensor<4x8xf32>) {
  // expected-error @+2 {{dropout_grad rate must be in [0, 1)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tx.dropout_grad %dy {rate = 1.0 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @sum_to_shape(%dy: tensor<4x8xf32>) {
  // expected-error @+1 {{'tx.sum_to' op result f32[4] does not broadcast to the input f32[4, 8]}}
  %0 = tx.sum_to %dy : (tensor<4x8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @broadcast_to_shape(%x: tensor<3xf32>) {
  // expected-error @+1 {{'tx.broadcast_to' op input f32[3] does not broadcast to f32[4, 8]}}
  %0 = tx.broadcast_to %x : (tensor<3xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @store_grad_symbol(%g: tensor<8xf32>) {
  // expected-error @+1 {{'tx.store_grad' op refers to no tx.parameter named @nope}}
  tx.store_grad @nope, %g : tensor<8xf32>
  return
}

// -----

tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @store_grad_type(%g: tensor<8xf32>) {
  // expected-error @+1 {{'tx.store_grad' op gradient type 'tensor<8xf32>' differs from parameter @w of type 'tensor<4x8xf32>'}}
  tx.store_grad @w, %g : tensor<8xf32>
  return
}

// -----

func.func @adam_update_symbol(%g: tensor<8xf32>) {
  // expected-error @+1 {{'tx.adam_update' op refers to no tx.parameter named @nope}}
  tx.adam_update @nope, %g {beta1 = 0.9 : f64, beta2 = 0.98 : f64, d_model = 64.0 : f64, eps = 1.0e-9 : f64, lr = 1.0 : f64, schedule = "noam", warmup = 100.0 : f64, weight_decay = 0.0 : f64} : tensor<8xf32>
  return
}

// -----

tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @adam_update_type(%g: tensor<8xf32>) {
  // expected-error @+1 {{'tx.adam_update' op gradient type 'tensor<8xf32>' differs from parameter @w of type 'tensor<4x8xf32>'}}
  tx.adam_update @w, %g {beta1 = 0.9 : f64, beta2 = 0.98 : f64, d_model = 64.0 : f64, eps = 1.0e-9 : f64, lr = 1.0 : f64, schedule = "noam", warmup = 100.0 : f64, weight_decay = 0.0 : f64} : tensor<8xf32>
  return
}

// -----

tx.parameter @w : tensor<8xf32> {init = #tx.init<normal>}
func.func @adam_update_schedule(%g: tensor<8xf32>) {
  // expected-error @+1 {{'tx.adam_update' op schedule must be "noam" or "constant", got "cosine"}}
  tx.adam_update @w, %g {beta1 = 0.9 : f64, beta2 = 0.98 : f64, d_model = 64.0 : f64, eps = 1.0e-9 : f64, lr = 1.0 : f64, schedule = "cosine", warmup = 100.0 : f64, weight_decay = 0.0 : f64} : tensor<8xf32>
  return
}

// -----

tx.parameter @w : tensor<8xf32> {init = #tx.init<normal>}
func.func @adam_update_betas(%g: tensor<8xf32>) {
  // expected-error @+1 {{'tx.adam_update' op beta1 and beta2 must be in [0, 1)}}
  tx.adam_update @w, %g {beta1 = 0.9 : f64, beta2 = 1.0 : f64, d_model = 0.0 : f64, eps = 1.0e-9 : f64, lr = 1.0e-3 : f64, schedule = "constant", warmup = 0.0 : f64, weight_decay = 0.0 : f64} : tensor<8xf32>
  return
}

// -----

tx.parameter @w : tensor<8xf32> {init = #tx.init<normal>}
func.func @adam_update_lr(%g: tensor<8xf32>) {
  // expected-error @+1 {{'tx.adam_update' op lr and eps must be positive}}
  tx.adam_update @w, %g {beta1 = 0.9 : f64, beta2 = 0.98 : f64, d_model = 0.0 : f64, eps = 1.0e-9 : f64, lr = 0.0 : f64, schedule = "constant", warmup = 0.0 : f64, weight_decay = 0.0 : f64} : tensor<8xf32>
  return
}

// -----

tx.parameter @w : tensor<8xf32> {init = #tx.init<normal>}
func.func @adam_update_noam(%g: tensor<8xf32>) {
  // expected-error @+1 {{'tx.adam_update' op noam needs positive d_model and warmup}}
  tx.adam_update @w, %g {beta1 = 0.9 : f64, beta2 = 0.98 : f64, d_model = 64.0 : f64, eps = 1.0e-9 : f64, lr = 1.0 : f64, schedule = "noam", warmup = 0.0 : f64, weight_decay = 0.0 : f64} : tensor<8xf32>
  return
}

// -----

tx.parameter @w : tensor<8xf32> {init = #tx.init<normal>}
func.func @adam_update_scale(%g: tensor<8xf32>, %s: tensor<1xf32>) {
  // expected-error @+1 {{'tx.adam_update' op scale must be a scalar tensor<f32>}}
  tx.adam_update @w, %g scale %s {beta1 = 0.9 : f64, beta2 = 0.98 : f64, d_model = 64.0 : f64, eps = 1.0e-9 : f64, lr = 1.0 : f64, schedule = "noam", warmup = 100.0 : f64, weight_decay = 0.0 : f64} : tensor<8xf32>, tensor<1xf32>
  return
}

// -----

func.func @cache_write_shapes(%cache: tensor<?x?x8xf32, #tx.dims<B: 4, cache: 9>>, %new: tensor<?x?x4xf32, #tx.dims<B: 4, T: 9>>) {
  // expected-error @+1 {{'tx.cache_write' op cache must be [B, P, d] and update [B, T, d], got [B, cache, 8] and [B, T, 4]}}
  %0 = tx.cache_write %cache, %new : (tensor<?x?x8xf32, #tx.dims<B: 4, cache: 9>>, tensor<?x?x4xf32, #tx.dims<B: 4, T: 9>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, cache: 9>>
  return
}

// -----

// The global norm (or clipping factor) is one number.
func.func @grad_norm_result(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'tx.grad_norm' op result must be a scalar}}
  %0 = tx.grad_norm %g : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @padding_mask_pad_not_i32(%ids: tensor<2x5xi32>) -> tensor<2x1x1x5xi1> {
  // expected-error @+2 {{padding_mask pad 4294967296 is not an i32 id}}
  // expected-error @+1 {{'tx.padding_mask' op failed to infer returned types}}
  %m = tx.padding_mask %ids {pad = 4294967296 : i64} : (tensor<2x5xi32>) -> tensor<2x1x1x5xi1>
  return %m : tensor<2x1x1x5xi1>
}

// -----

func.func @cross_entropy_ignore_not_i32(%logits: tensor<4x8xf32>, %t: tensor<4xi32>) -> tensor<f32> {
  // expected-error @+2 {{cross_entropy ignore_index -2147483649 is not an i32 id}}
  // expected-error @+1 {{'tx.cross_entropy' op failed to infer returned types}}
  %l = tx.cross_entropy %logits, %t {ignore_index = -2147483649 : i64} : (tensor<4x8xf32>, tensor<4xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @reshape_overflow(%x: tensor<2x3xf32>) -> tensor<4611686018427387904x4xf32> {
  // expected-error @+1 {{'tx.reshape' op has more elements than int64 can count}}
  %r = tx.reshape %x : (tensor<2x3xf32>) -> tensor<4611686018427387904x4xf32>
  return %r : tensor<4611686018427387904x4xf32>
}

// -----

// expected-error @+1 {{'tx.parameter' op std is the normal initializer's, not zeros's}}
tx.parameter @p : tensor<4xf32> {init = #tx.init<zeros>, std = 2.0e-02 : f32}

// -----

// expected-error @+1 {{'tx.parameter' op std must be positive and finite, got -1}}
tx.parameter @q : tensor<4xf32> {init = #tx.init<normal>, std = -1.0 : f32}

// -----

func.func @rms_norm_weight(%x: tensor<4x8xf32>, %g: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{weight must be [8], got [4]}}
  // expected-error @+1 {{'tx.rms_norm' op failed to infer returned types}}
  %y = tx.rms_norm %x, %g : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @add_rms_norm_types(%x: tensor<4x8xf32>, %r: tensor<8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{add_rms_norm operands must have the same type, got f32[4, 8] and f32[8]}}
  // expected-error @+1 {{'tx.add_rms_norm' op failed to infer returned types}}
  %y, %s = tx.add_rms_norm %x, %r, %g : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return %y : tensor<4x8xf32>
}

// -----

func.func @rms_norm_eps(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{epsilon must be positive, got 0}}
  // expected-error @+1 {{'tx.rms_norm' op failed to infer returned types}}
  %y = tx.rms_norm %x, %g {epsilon = 0.0 : f32} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @rope_odd_heads(%x: tensor<4x12xf32>) -> tensor<4x12xf32> {
  // expected-error @+2 {{rope needs heads >= 1 that divide the last dimension 12 into even head sizes, got heads = 4}}
  // expected-error @+1 {{'tx.rope' op failed to infer returned types}}
  %y = tx.rope %x {heads = 4 : i64} : (tensor<4x12xf32>) -> tensor<4x12xf32>
  return %y : tensor<4x12xf32>
}

// -----

func.func @rope_angles(%x: tensor<4x8xf32>, %a: tensor<4x4xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{rope angles must be [4, 2] (positions x half the rotated features), got [4, 4]}}
  // expected-error @+1 {{'tx.rope' op failed to infer returned types}}
  %y = tx.rope %x angles %a {heads = 2 : i64} : (tensor<4x8xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @rope_partial_angles(%x: tensor<4x20xf32>, %a: tensor<4x5xf32>) -> tensor<4x20xf32> {
  // expected-error @+2 {{rope angles must be [4, 2] (positions x half the rotated features), got [4, 5]}}
  // expected-error @+1 {{'tx.rope' op failed to infer returned types}}
  %y = tx.rope %x angles %a {heads = 2 : i64, rotary_dims = 4 : i64} : (tensor<4x20xf32>, tensor<4x5xf32>) -> tensor<4x20xf32>
  return %y : tensor<4x20xf32>
}

// -----

func.func @rope_rotary_odd(%x: tensor<4x20xf32>) -> tensor<4x20xf32> {
  // expected-error @+2 {{rope rotary_dims must be an even number of features from 2 to the head size 10 (0: all), got 3}}
  // expected-error @+1 {{'tx.rope' op failed to infer returned types}}
  %y = tx.rope %x {heads = 2 : i64, rotary_dims = 3 : i64} : (tensor<4x20xf32>) -> tensor<4x20xf32>
  return %y : tensor<4x20xf32>
}

// -----

func.func @rope_rotary_over_the_head(%x: tensor<4x20xf32>) -> tensor<4x20xf32> {
  // expected-error @+2 {{rope rotary_dims must be an even number of features from 2 to the head size 10 (0: all), got 12}}
  // expected-error @+1 {{'tx.rope' op failed to infer returned types}}
  %y = tx.rope %x {heads = 2 : i64, rotary_dims = 12 : i64} : (tensor<4x20xf32>) -> tensor<4x20xf32>
  return %y : tensor<4x20xf32>
}

// -----

func.func @rope_base(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{rope base must be a finite number > 1, got 0.5}}
  // expected-error @+1 {{'tx.rope' op failed to infer returned types}}
  %y = tx.rope %x {base = 0.5 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A tx op at module level verified: a tx.constant there was dropped, and a
// tx.param there failed later as "refers to no tx.parameter named @w".
module {
  tx.parameter @w : tensor<4xf32> {init = #tx.init<zeros>}
  // expected-error @+1 {{'tx.param' op must be inside a function (an entry or a def), not at module level}}
  %p = tx.param @w : tensor<4xf32>
}
