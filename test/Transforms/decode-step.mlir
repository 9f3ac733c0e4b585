// RUN: tx-opt %s -split-input-file --tx-decode-step | FileCheck %s
// RUN: tx-opt %s -split-input-file --tx-decode-step --tx-decode-step | FileCheck %s
// RUN: tx-opt %s -split-input-file --tx-decode-step=verbose=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=WHY
//
// tx-decode-step derives incremental decoding from the `decode` entry:
// decode_init(memory) projects every cross-attention's keys and values once;
// decode_step takes decode's inputs without memory, those, and a key and a
// value cache [B, cache, d] per causal self-attention, which it writes the
// new positions' keys and values into (tx.cache_write) and attends over,
// without the target padding mask; positional encodings start at
// `cache - T` (tx.position_offset). The module gets the dim `cache`. Running
// the pass twice changes nothing. It declines, leaving the module alone and
// saying why with verbose=true, when an op of decode may mix positions.

// One causal self-attention and one cross-attention over memory.
// WHY: tx-decode-step: derived decode_init and decode_step from @decode (caches for 1 of its 2 attentions)
// CHECK-LABEL: module attributes {tx.dims = {B = 4 : i64, S = 9 : i64, T = 7 : i64, cache = 7 : i64}}
// decode itself is left as it was.
// CHECK-LABEL: func.func @decode(
// CHECK-SAME: {tx.name = "memory"}
// CHECK: tx.positional_encoding %{{.+}} :
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} mask %{{.+}} {causal, scale = 5.000000e-01 : f32}
// CHECK-LABEL: func.func @decode_step(
// CHECK-SAME: %[[TGT:arg[0-9]+]]: tensor<?x?xi32, #tx.dims<B: 4, T: 7>> {tx.name = "tgt"}, %[[SRC:arg[0-9]+]]: tensor<?x?xi32, #tx.dims<B: 4, S: 9>> {tx.name = "src"}, %[[SK:arg[0-9]+]]: tensor<?x?x8xf32, #tx.dims<B: 4, cache: 7>> {tx.name = "self_k.0"}, %[[SV:arg[0-9]+]]: tensor<?x?x8xf32, #tx.dims<B: 4, cache: 7>> {tx.name = "self_v.0"}, %[[CK:arg[0-9]+]]: tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>> {tx.name = "cross_k.0"}, %[[CV:arg[0-9]+]]: tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>> {tx.name = "cross_v.0"}) -> (tensor<?x?x16xf32, #tx.dims<B: 4, T: 7>> {tx.name = "logits"})
// CHECK-SAME: attributes {tx.entry = "decode_step"}
// CHECK-NEXT: %[[SM:.+]] = tx.padding_mask %[[SRC]]
// CHECK-NEXT: %[[EMB:.+]] = tx.param @emb
// CHECK-NEXT: %[[E:.+]] = tx.embedding %[[TGT]], %[[EMB]]
// CHECK-NEXT: %[[PE:.+]] = tx.positional_encoding %[[E]] {tx.position_offset = "cache"}
// CHECK-NEXT: %[[X:.+]] = tx.add %[[E]], %[[PE]]
// CHECK-NEXT: tx.param @wq
// CHECK-NEXT: %[[Q0:.+]] = tx.linear %[[X]], %{{.+}} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
// CHECK-NEXT: %[[Q:.+]] = tx.split_heads %[[Q0]]
// CHECK-NEXT: tx.param @wk
// CHECK-NEXT: %[[K0:.+]] = tx.linear %[[X]], %{{.+}} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
// CHECK-NEXT: %[[KC:.+]] = tx.cache_write %[[SK]], %[[K0]] : (tensor<?x?x8xf32, #tx.dims<B: 4, cache: 7>>, tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, cache: 7>>
// CHECK-NEXT: %[[K:.+]] = tx.split_heads %[[KC]] {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, cache: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, cache: 7>>
// CHECK-NEXT: tx.param @wv
// CHECK-NEXT: %[[V0:.+]] = tx.linear %[[X]]
// CHECK-NEXT: %[[VC:.+]] = tx.cache_write %[[SV]], %[[V0]]
// CHECK-NEXT: %[[V:.+]] = tx.split_heads %[[VC]] {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, cache: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, cache: 7>>
// CHECK-NEXT: %[[SA:.+]] = tx.attention %[[Q]], %[[K]], %[[V]] {causal, scale = 5.000000e-01 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, cache: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, cache: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
// CHECK-NEXT: %[[H:.+]] = tx.merge_heads %[[SA]]
// CHECK-NEXT: tx.param @cq
// CHECK-NEXT: %[[CQ0:.+]] = tx.linear %[[H]]
// CHECK-NEXT: %[[CQ:.+]] = tx.split_heads %[[CQ0]]
// CHECK-NEXT: %[[CKS:.+]] = tx.split_heads %[[CK]] {heads = 2 : i64}
// CHECK-NEXT: %[[CVS:.+]] = tx.split_heads %[[CV]] {heads = 2 : i64}
// CHECK-NEXT: %[[CA:.+]] = tx.attention %[[CQ]], %[[CKS]], %[[CVS]] mask %[[SM]] {scale = 5.000000e-01 : f32}
// CHECK-NEXT: %[[CH:.+]] = tx.merge_heads %[[CA]]
// CHECK-NEXT: %[[OUT:.+]] = tx.param @out
// CHECK-NEXT: %[[LOGITS:.+]] = tx.linear %[[CH]], %[[OUT]]
// CHECK-NEXT: return %[[LOGITS]]
// CHECK-LABEL: func.func @decode_init(
// CHECK-SAME: %[[MEM:arg0]]: tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>> {tx.name = "memory"}) -> (tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>> {tx.name = "cross_k.0"}, tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>> {tx.name = "cross_v.0"})
// CHECK-SAME: attributes {tx.entry = "decode_init"}
// CHECK-NEXT: %[[WK:.+]] = tx.param @ck
// CHECK-NEXT: %[[KEYS:.+]] = tx.linear %[[MEM]], %[[WK]]
// CHECK-NEXT: %[[WV:.+]] = tx.param @cv
// CHECK-NEXT: %[[VALUES:.+]] = tx.linear %[[MEM]], %[[WV]]
// CHECK-NEXT: return %[[KEYS]], %[[VALUES]]
module attributes {tx.dims = {B = 4 : i64, S = 9 : i64, T = 7 : i64}} {
  tx.parameter @emb : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wq : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wk : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wv : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @cq : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @ck : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @cv : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @out : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
  func.func @decode(%tgt: tensor<?x?xi32, #tx.dims<B: 4, T: 7>> {tx.name = "tgt"}, %memory: tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>> {tx.name = "memory"}, %src: tensor<?x?xi32, #tx.dims<B: 4, S: 9>> {tx.name = "src"}) -> (tensor<?x?x16xf32, #tx.dims<B: 4, T: 7>> {tx.name = "logits"}) attributes {tx.entry = "decode"} {
    %sm = tx.padding_mask %src : (tensor<?x?xi32, #tx.dims<B: 4, S: 9>>) -> tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 9>>
    %tm = tx.padding_mask %tgt : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>) -> tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>
    %emb = tx.param @emb : tensor<16x8xf32>
    %e = tx.embedding %tgt, %emb : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>, tensor<16x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %pe = tx.positional_encoding %e : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x8xf32, #tx.dims<T: 7>>
    %x = tx.add %e, %pe : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<?x8xf32, #tx.dims<T: 7>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %wq = tx.param @wq : tensor<8x8xf32>
    %q0 = tx.linear %x, %wq : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %q = tx.split_heads %q0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wk = tx.param @wk : tensor<8x8xf32>
    %k0 = tx.linear %x, %wk : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %k = tx.split_heads %k0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wv = tx.param @wv : tensor<8x8xf32>
    %v0 = tx.linear %x, %wv : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %v = tx.split_heads %v0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %sa = tx.attention %q, %k, %v mask %tm {causal, scale = 0.5 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %h = tx.merge_heads %sa : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %cq = tx.param @cq : tensor<8x8xf32>
    %cq0 = tx.linear %h, %cq : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %cqs = tx.split_heads %cq0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %ck = tx.param @ck : tensor<8x8xf32>
    %ck0 = tx.linear %memory, %ck : (tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>
    %cks = tx.split_heads %ck0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 9>>
    %cv = tx.param @cv : tensor<8x8xf32>
    %cv0 = tx.linear %memory, %cv : (tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>
    %cvs = tx.split_heads %cv0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 9>>
    %ca = tx.attention %cqs, %cks, %cvs mask %sm {scale = 0.5 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, S: 9>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, S: 9>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %ch = tx.merge_heads %ca : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %out = tx.param @out : tensor<16x8xf32>
    %logits = tx.linear %ch, %out : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<16x8xf32>) -> tensor<?x?x16xf32, #tx.dims<B: 4, T: 7>>
    return %logits : tensor<?x?x16xf32, #tx.dims<B: 4, T: 7>>
  }
}

// -----

// Decoder only (no cross-attention): decode_step with the caches, no
// decode_init; the target padding mask is gone with the self-attention's
// mask.
// CHECK-LABEL: module attributes {tx.dims = {B = 4 : i64, T = 7 : i64, cache = 7 : i64}}
// CHECK-LABEL: func.func @decode_step(
// CHECK-SAME: %[[TGT:arg0]]: tensor<?x?xi32, #tx.dims<B: 4, T: 7>> {tx.name = "tgt"}, %[[SK:arg1]]: tensor<?x?x8xf32, #tx.dims<B: 4, cache: 7>> {tx.name = "self_k.0"}, %[[SV:arg2]]: tensor<?x?x8xf32, #tx.dims<B: 4, cache: 7>> {tx.name = "self_v.0"}) ->
// CHECK-NOT: tx.padding_mask
// CHECK: tx.cache_write %[[SK]]
// CHECK: tx.cache_write %[[SV]]
// CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} {causal, scale = 5.000000e-01 : f32}
// CHECK-NOT: decode_init
// CHECK: // -----
module attributes {tx.dims = {B = 4 : i64, T = 7 : i64}} {
  tx.parameter @emb : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wq : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wk : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wv : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  func.func @decode(%tgt: tensor<?x?xi32, #tx.dims<B: 4, T: 7>> {tx.name = "tgt"}) -> (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>> {tx.name = "logits"}) attributes {tx.entry = "decode"} {
    %tm = tx.padding_mask %tgt : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>) -> tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>
    %emb = tx.param @emb : tensor<16x8xf32>
    %e = tx.embedding %tgt, %emb : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>, tensor<16x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %wq = tx.param @wq : tensor<8x8xf32>
    %q0 = tx.linear %e, %wq : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %q = tx.split_heads %q0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wk = tx.param @wk : tensor<8x8xf32>
    %k0 = tx.linear %e, %wk : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %k = tx.split_heads %k0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wv = tx.param @wv : tensor<8x8xf32>
    %v0 = tx.linear %e, %wv : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %v = tx.split_heads %v0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %a = tx.attention %q, %k, %v mask %tm {causal, scale = 0.5 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %h = tx.merge_heads %a : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    return %h : tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
  }
}

// -----

// A self-attention that is not causal would need future positions.
// CHECK: func.func @decode(
// CHECK-NOT: decode_step
// CHECK-NOT: decode_init
// CHECK: // -----
// WHY: tx-decode-step: no incremental decoding for @decode: a self-attention is not causal
module attributes {tx.dims = {B = 4 : i64, T = 7 : i64}} {
  tx.parameter @emb : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wq : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wk : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wv : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  func.func @decode(%tgt: tensor<?x?xi32, #tx.dims<B: 4, T: 7>> {tx.name = "tgt"}) -> (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>> {tx.name = "logits"}) attributes {tx.entry = "decode"} {
    %tm = tx.padding_mask %tgt : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>) -> tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>
    %emb = tx.param @emb : tensor<16x8xf32>
    %e = tx.embedding %tgt, %emb : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>, tensor<16x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %wq = tx.param @wq : tensor<8x8xf32>
    %q0 = tx.linear %e, %wq : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %q = tx.split_heads %q0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wk = tx.param @wk : tensor<8x8xf32>
    %k0 = tx.linear %e, %wk : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %k = tx.split_heads %k0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wv = tx.param @wv : tensor<8x8xf32>
    %v0 = tx.linear %e, %wv : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %v = tx.split_heads %v0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %a = tx.attention %q, %k, %v mask %tm {scale = 0.5 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %h = tx.merge_heads %a : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    return %h : tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
  }
}

// -----

// A causal self-attention whose masked scores are filled softly (-2.0,
// as masked_fill wrote it): future keys keep a share of the softmax in the
// re-run and the cache has none (decode_step was derived, ~5e-4 off).
// CHECK: func.func @decode(
// CHECK-NOT: decode_step
// CHECK-NOT: decode_init
// CHECK: // -----
// WHY: tx-decode-step: no incremental decoding for @decode: an attention fills masked scores with -2, softer than -1e4: masked keys keep a share of the softmax, and a cache holds no future keys (fill with -1e9)
module attributes {tx.dims = {B = 4 : i64, T = 7 : i64}} {
  tx.parameter @emb : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wq : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wk : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wv : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  func.func @decode(%tgt: tensor<?x?xi32, #tx.dims<B: 4, T: 7>> {tx.name = "tgt"}) -> (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>> {tx.name = "logits"}) attributes {tx.entry = "decode"} {
    %tm = tx.padding_mask %tgt : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>) -> tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>
    %emb = tx.param @emb : tensor<16x8xf32>
    %e = tx.embedding %tgt, %emb : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>, tensor<16x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %wq = tx.param @wq : tensor<8x8xf32>
    %q0 = tx.linear %e, %wq : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %q = tx.split_heads %q0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wk = tx.param @wk : tensor<8x8xf32>
    %k0 = tx.linear %e, %wk : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %k = tx.split_heads %k0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wv = tx.param @wv : tensor<8x8xf32>
    %v0 = tx.linear %e, %wv : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %v = tx.split_heads %v0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %a = tx.attention %q, %k, %v mask %tm {causal, fill = -2.0 : f32, scale = 0.5 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %h = tx.merge_heads %a : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    return %h : tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
  }
}

// -----

// A softmax over the positions (axis 1 of [B, T, d]) mixes them.
// CHECK: func.func @decode(
// CHECK-NOT: decode_step
// CHECK-NOT: decode_init
// CHECK: // -----
// WHY: tx-decode-step: no incremental decoding for @decode: 'tx.softmax' may mix positions
module attributes {tx.dims = {B = 4 : i64, T = 7 : i64}} {
  tx.parameter @emb : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wq : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wk : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wv : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  func.func @decode(%tgt: tensor<?x?xi32, #tx.dims<B: 4, T: 7>> {tx.name = "tgt"}) -> (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>> {tx.name = "logits"}) attributes {tx.entry = "decode"} {
    %tm = tx.padding_mask %tgt : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>) -> tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>
    %emb = tx.param @emb : tensor<16x8xf32>
    %e = tx.embedding %tgt, %emb : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>, tensor<16x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %wq = tx.param @wq : tensor<8x8xf32>
    %q0 = tx.linear %e, %wq : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %q = tx.split_heads %q0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wk = tx.param @wk : tensor<8x8xf32>
    %k0 = tx.linear %e, %wk : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %k = tx.split_heads %k0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wv = tx.param @wv : tensor<8x8xf32>
    %v0 = tx.linear %e, %wv : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %v = tx.split_heads %v0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %a = tx.attention %q, %k, %v mask %tm {causal, scale = 0.5 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %h = tx.merge_heads %a : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %s = tx.softmax %h {axis = 1 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    return %s : tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
  }
}

// -----

// So does a reduction over them.
// CHECK: func.func @decode(
// CHECK-NOT: decode_step
// CHECK-NOT: decode_init
// CHECK: // -----
// WHY: tx-decode-step: no incremental decoding for @decode: 'tx.reduce_mean' may mix positions
module attributes {tx.dims = {B = 4 : i64, T = 7 : i64}} {
  tx.parameter @emb : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wq : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wk : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wv : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  func.func @decode(%tgt: tensor<?x?xi32, #tx.dims<B: 4, T: 7>> {tx.name = "tgt"}) -> (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>> {tx.name = "logits"}) attributes {tx.entry = "decode"} {
    %tm = tx.padding_mask %tgt : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>) -> tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>
    %emb = tx.param @emb : tensor<16x8xf32>
    %e = tx.embedding %tgt, %emb : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>, tensor<16x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %wq = tx.param @wq : tensor<8x8xf32>
    %q0 = tx.linear %e, %wq : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %q = tx.split_heads %q0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wk = tx.param @wk : tensor<8x8xf32>
    %k0 = tx.linear %e, %wk : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %k = tx.split_heads %k0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wv = tx.param @wv : tensor<8x8xf32>
    %v0 = tx.linear %e, %wv : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %v = tx.split_heads %v0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %a = tx.attention %q, %k, %v mask %tm {causal, scale = 0.5 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %h = tx.merge_heads %a : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %m = tx.reduce_mean %h {axes = array<i64: 1>, keepdim} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x1x8xf32, #tx.dims<B: 4>>
    %s = tx.sub %h, %m : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<?x1x8xf32, #tx.dims<B: 4>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    return %s : tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
  }
}

// -----

// A reduction over the features (a norm written out, reduce_mean(x, -1))
// keeps every position whole: decode_step is derived (it said "may mix
// positions", and decoding re-ran the prefix).
// CHECK-LABEL: func.func @decode_step(
// CHECK: tx.cache_write
// CHECK: tx.reduce_mean %{{.+}} {axes = array<i64: -1>, keepdim}
// CHECK: // -----
module attributes {tx.dims = {B = 4 : i64, T = 7 : i64}} {
  tx.parameter @emb : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wq : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wk : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wv : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  func.func @decode(%tgt: tensor<?x?xi32, #tx.dims<B: 4, T: 7>> {tx.name = "tgt"}) -> (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>> {tx.name = "logits"}) attributes {tx.entry = "decode"} {
    %tm = tx.padding_mask %tgt : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>) -> tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>
    %emb = tx.param @emb : tensor<16x8xf32>
    %e = tx.embedding %tgt, %emb : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>, tensor<16x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %wq = tx.param @wq : tensor<8x8xf32>
    %q0 = tx.linear %e, %wq : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %q = tx.split_heads %q0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wk = tx.param @wk : tensor<8x8xf32>
    %k0 = tx.linear %e, %wk : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %k = tx.split_heads %k0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wv = tx.param @wv : tensor<8x8xf32>
    %v0 = tx.linear %e, %wv : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %v = tx.split_heads %v0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %a = tx.attention %q, %k, %v mask %tm {causal, scale = 0.5 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %h = tx.merge_heads %a : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %m = tx.reduce_mean %h {axes = array<i64: -1>, keepdim} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x?x1xf32, #tx.dims<B: 4, T: 7>>
    %s = tx.sub %h, %m : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<?x?x1xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    return %s : tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
  }
}

// -----

// Learned positions sliced to the target length (`wpe[:T]`): the table's
// rows 0 .. T-1 are `wpe[arange(T)]`, so the step gathers the rows at the
// cache offset (it declined before: "'tx.slice' may mix positions").
// CHECK: func.func @decode(
// CHECK: tx.slice %{{.+}} {starts = array<i64: 0, 0>} : (tensor<16x8xf32>) -> tensor<?x8xf32, #tx.dims<T: 7>>
// CHECK: func.func @decode_step(
// CHECK-NOT: tx.slice
// CHECK: [[POS:%.+]] = tx.arange {tx.position_offset = "cache"} : tensor<?xi32, #tx.dims<T: 7>>
// CHECK: tx.gather %{{.+}}, [[POS]] {axis = 0 : i64} : (tensor<16x8xf32>, tensor<?xi32, #tx.dims<T: 7>>) -> tensor<?x8xf32, #tx.dims<T: 7>>
// CHECK: // -----
module attributes {tx.dims = {B = 4 : i64, T = 7 : i64}} {
  tx.parameter @emb : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wq : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wk : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wv : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  func.func @decode(%tgt: tensor<?x?xi32, #tx.dims<B: 4, T: 7>> {tx.name = "tgt"}) -> (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>> {tx.name = "logits"}) attributes {tx.entry = "decode"} {
    %tm = tx.padding_mask %tgt : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>) -> tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>
    %emb = tx.param @emb : tensor<16x8xf32>
    %e = tx.embedding %tgt, %emb : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>, tensor<16x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %wq = tx.param @wq : tensor<8x8xf32>
    %q0 = tx.linear %e, %wq : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %q = tx.split_heads %q0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wk = tx.param @wk : tensor<8x8xf32>
    %k0 = tx.linear %e, %wk : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %k = tx.split_heads %k0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wv = tx.param @wv : tensor<8x8xf32>
    %v0 = tx.linear %e, %wv : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %v = tx.split_heads %v0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %a = tx.attention %q, %k, %v mask %tm {causal, scale = 0.5 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %h = tx.merge_heads %a : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %wpe = tx.param @emb : tensor<16x8xf32>
    %p = tx.slice %wpe {starts = array<i64: 0, 0>} : (tensor<16x8xf32>) -> tensor<?x8xf32, #tx.dims<T: 7>>
    %s = tx.add %h, %p : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<?x8xf32, #tx.dims<T: 7>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    return %s : tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
  }
}

// -----

// Position ids (`arange(T)`) index tables (learned positions), but a
// gather along the positions with them mixes positions.
// CHECK: func.func @decode(
// CHECK-NOT: decode_step
// CHECK-NOT: decode_init
// CHECK: // -----
// WHY: tx-decode-step: no incremental decoding for @decode: 'tx.gather' may mix positions
module attributes {tx.dims = {B = 4 : i64, T = 7 : i64}} {
  tx.parameter @emb : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wq : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wk : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wv : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  func.func @decode(%tgt: tensor<?x?xi32, #tx.dims<B: 4, T: 7>> {tx.name = "tgt"}) -> (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>> {tx.name = "logits"}) attributes {tx.entry = "decode"} {
    %tm = tx.padding_mask %tgt : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>) -> tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>
    %emb = tx.param @emb : tensor<16x8xf32>
    %e = tx.embedding %tgt, %emb : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>, tensor<16x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %wq = tx.param @wq : tensor<8x8xf32>
    %q0 = tx.linear %e, %wq : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %q = tx.split_heads %q0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wk = tx.param @wk : tensor<8x8xf32>
    %k0 = tx.linear %e, %wk : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %k = tx.split_heads %k0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wv = tx.param @wv : tensor<8x8xf32>
    %v0 = tx.linear %e, %wv : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %v = tx.split_heads %v0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %a = tx.attention %q, %k, %v mask %tm {causal, scale = 0.5 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %h = tx.merge_heads %a : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %pos = tx.arange : tensor<?xi32, #tx.dims<T: 7>>
    %s = tx.gather %h, %pos {axis = 1 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<?xi32, #tx.dims<T: 7>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    return %s : tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
  }
}

// -----

// A gather along the positions mixes them.
// CHECK: func.func @decode(
// CHECK-NOT: decode_step
// CHECK-NOT: decode_init
// CHECK: // -----
// WHY: tx-decode-step: no incremental decoding for @decode: 'tx.gather' may mix positions
module attributes {tx.dims = {B = 4 : i64, T = 7 : i64}} {
  tx.parameter @emb : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wq : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wk : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wv : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  func.func @decode(%tgt: tensor<?x?xi32, #tx.dims<B: 4, T: 7>> {tx.name = "tgt"}, %perm: tensor<?xi32, #tx.dims<T: 7>> {tx.name = "perm"}) -> (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>> {tx.name = "logits"}) attributes {tx.entry = "decode"} {
    %tm = tx.padding_mask %tgt : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>) -> tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>
    %emb = tx.param @emb : tensor<16x8xf32>
    %e = tx.embedding %tgt, %emb : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>, tensor<16x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %wq = tx.param @wq : tensor<8x8xf32>
    %q0 = tx.linear %e, %wq : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %q = tx.split_heads %q0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wk = tx.param @wk : tensor<8x8xf32>
    %k0 = tx.linear %e, %wk : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %k = tx.split_heads %k0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wv = tx.param @wv : tensor<8x8xf32>
    %v0 = tx.linear %e, %wv : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %v = tx.split_heads %v0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %a = tx.attention %q, %k, %v mask %tm {causal, scale = 0.5 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %h = tx.merge_heads %a : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %s = tx.gather %h, %perm {axis = 1 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<?xi32, #tx.dims<T: 7>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    return %s : tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
  }
}

// -----

// A target padding mask used outside attention: the step drops those masks.
// CHECK: func.func @decode(
// CHECK-NOT: decode_step
// CHECK-NOT: decode_init
// CHECK: // -----
// WHY: tx-decode-step: no incremental decoding for @decode: a padding mask is used outside attention
module attributes {tx.dims = {B = 4 : i64, T = 7 : i64}} {
  tx.parameter @emb : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wq : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wk : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wv : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  func.func @decode(%tgt: tensor<?x?xi32, #tx.dims<B: 4, T: 7>> {tx.name = "tgt"}) -> (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>> {tx.name = "logits"}) attributes {tx.entry = "decode"} {
    %tm = tx.padding_mask %tgt : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>) -> tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>
    %emb = tx.param @emb : tensor<16x8xf32>
    %e = tx.embedding %tgt, %emb : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>, tensor<16x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %wq = tx.param @wq : tensor<8x8xf32>
    %q0 = tx.linear %e, %wq : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %q = tx.split_heads %q0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wk = tx.param @wk : tensor<8x8xf32>
    %k0 = tx.linear %e, %wk : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %k = tx.split_heads %k0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wv = tx.param @wv : tensor<8x8xf32>
    %v0 = tx.linear %e, %wv : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %v = tx.split_heads %v0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %a = tx.attention %q, %k, %v mask %tm {causal, scale = 0.5 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %h = tx.merge_heads %a : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %f = tx.to_float %tm : (tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>) -> tensor<?x1x1x?xf32, #tx.dims<B: 4, T: 7>>
    %r = tx.reshape %f : (tensor<?x1x1x?xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x?x1xf32, #tx.dims<B: 4, T: 7>>
    %z = tx.mul %h, %r : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<?x?x1xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    return %z : tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
  }
}

// -----

// A static target length leaves no symbolic dim to bound the cache with.
// CHECK: func.func @decode(
// CHECK-NOT: decode_step
// CHECK-NOT: decode_init
// CHECK: // -----
// WHY: tx-decode-step: no incremental decoding for @decode: the target length is not a symbolic dim
module attributes {tx.dims = {B = 4 : i64}} {
  tx.parameter @emb : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wq : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wk : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wv : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  func.func @decode(%tgt: tensor<?x7xi32, #tx.dims<B: 4>> {tx.name = "tgt"}) -> (tensor<?x7x8xf32, #tx.dims<B: 4>> {tx.name = "logits"}) attributes {tx.entry = "decode"} {
    %tm = tx.padding_mask %tgt : (tensor<?x7xi32, #tx.dims<B: 4>>) -> tensor<?x1x1x7xi1, #tx.dims<B: 4>>
    %emb = tx.param @emb : tensor<16x8xf32>
    %e = tx.embedding %tgt, %emb : (tensor<?x7xi32, #tx.dims<B: 4>>, tensor<16x8xf32>) -> tensor<?x7x8xf32, #tx.dims<B: 4>>
    %wq = tx.param @wq : tensor<8x8xf32>
    %q0 = tx.linear %e, %wq : (tensor<?x7x8xf32, #tx.dims<B: 4>>, tensor<8x8xf32>) -> tensor<?x7x8xf32, #tx.dims<B: 4>>
    %q = tx.split_heads %q0 {heads = 2 : i64} : (tensor<?x7x8xf32, #tx.dims<B: 4>>) -> tensor<?x2x7x4xf32, #tx.dims<B: 4>>
    %wk = tx.param @wk : tensor<8x8xf32>
    %k0 = tx.linear %e, %wk : (tensor<?x7x8xf32, #tx.dims<B: 4>>, tensor<8x8xf32>) -> tensor<?x7x8xf32, #tx.dims<B: 4>>
    %k = tx.split_heads %k0 {heads = 2 : i64} : (tensor<?x7x8xf32, #tx.dims<B: 4>>) -> tensor<?x2x7x4xf32, #tx.dims<B: 4>>
    %wv = tx.param @wv : tensor<8x8xf32>
    %v0 = tx.linear %e, %wv : (tensor<?x7x8xf32, #tx.dims<B: 4>>, tensor<8x8xf32>) -> tensor<?x7x8xf32, #tx.dims<B: 4>>
    %v = tx.split_heads %v0 {heads = 2 : i64} : (tensor<?x7x8xf32, #tx.dims<B: 4>>) -> tensor<?x2x7x4xf32, #tx.dims<B: 4>>
    %a = tx.attention %q, %k, %v mask %tm {causal, scale = 0.5 : f32} : (tensor<?x2x7x4xf32, #tx.dims<B: 4>>, tensor<?x2x7x4xf32, #tx.dims<B: 4>>, tensor<?x2x7x4xf32, #tx.dims<B: 4>>, tensor<?x1x1x7xi1, #tx.dims<B: 4>>) -> tensor<?x2x7x4xf32, #tx.dims<B: 4>>
    %h = tx.merge_heads %a : (tensor<?x2x7x4xf32, #tx.dims<B: 4>>) -> tensor<?x7x8xf32, #tx.dims<B: 4>>
    return %h : tensor<?x7x8xf32, #tx.dims<B: 4>>
  }
}

// -----

// The spec already uses the dim name 'cache'.
// CHECK: func.func @decode(
// CHECK-NOT: decode_step
// CHECK-NOT: decode_init
// WHY: tx-decode-step: no incremental decoding for @decode: the spec already has a dim named 'cache'
module attributes {tx.dims = {B = 4 : i64, T = 7 : i64, cache = 3 : i64}} {
  tx.parameter @emb : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wq : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wk : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  tx.parameter @wv : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
  func.func @decode(%tgt: tensor<?x?xi32, #tx.dims<B: 4, T: 7>> {tx.name = "tgt"}) -> (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>> {tx.name = "logits"}) attributes {tx.entry = "decode"} {
    %tm = tx.padding_mask %tgt : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>) -> tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>
    %emb = tx.param @emb : tensor<16x8xf32>
    %e = tx.embedding %tgt, %emb : (tensor<?x?xi32, #tx.dims<B: 4, T: 7>>, tensor<16x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %wq = tx.param @wq : tensor<8x8xf32>
    %q0 = tx.linear %e, %wq : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %q = tx.split_heads %q0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wk = tx.param @wk : tensor<8x8xf32>
    %k0 = tx.linear %e, %wk : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %k = tx.split_heads %k0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %wv = tx.param @wv : tensor<8x8xf32>
    %v0 = tx.linear %e, %wv : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    %v = tx.split_heads %v0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %a = tx.attention %q, %k, %v mask %tm {causal, scale = 0.5 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>, tensor<?x1x1x?xi1, #tx.dims<B: 4, T: 7>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>
    %h = tx.merge_heads %a : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 7>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
    return %h : tensor<?x?x8xf32, #tx.dims<B: 4, T: 7>>
  }
}
