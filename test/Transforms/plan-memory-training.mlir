// RUN: tx-opt %s --tx-plan-memory | FileCheck %s
// RUN: tx-opt %s --tx-plan-memory=alignment=2048 | FileCheck %s --check-prefix=ALIGN
//
// A module that trains keeps a gradient and Adam's two moments for every
// parameter, each in a region laid out like the parameters'. The regions are
// the parameters' size rounded up to 4 KiB plus 1 KiB apart, so that a
// parameter, its gradient and its moments start 1, 2 and 3 KiB apart modulo
// 4 KiB (aligned alike, Adam's streams alias in the L1 cache's sets).
// Parameters: 1088 bytes, regions 4096 + 1024 = 5120 bytes apart, arena
// 1088 + 3 * 5120 = 16448 bytes.

// CHECK: module attributes {tx.param_arena_bytes = 16448 : i64}
// CHECK: tx.parameter @w : tensor<16x16xf32> {exp_avg_offset = 10240 : i64, exp_avg_sq_offset = 15360 : i64, grad_offset = 5120 : i64, init = #tx.init<zeros>, offset = 0 : i64}
// CHECK: tx.parameter @b : tensor<16xf32> {exp_avg_offset = 11264 : i64, exp_avg_sq_offset = 16384 : i64, grad_offset = 6144 : i64, init = #tx.init<zeros>, offset = 1024 : i64}
// A larger alignment is kept: the skew is the alignment (2 KiB here), the
// parameters end at 4096 bytes, the regions are 4096 + 2048 bytes apart.
// ALIGN: module attributes {tx.param_arena_bytes = 22528 : i64}
// ALIGN: tx.parameter @w : tensor<16x16xf32> {exp_avg_offset = 12288 : i64, exp_avg_sq_offset = 18432 : i64, grad_offset = 6144 : i64
// ALIGN: tx.parameter @b : tensor<16xf32> {exp_avg_offset = 14336 : i64, exp_avg_sq_offset = 20480 : i64, grad_offset = 8192 : i64
tx.parameter @w : tensor<16x16xf32> {init = #tx.init<zeros>}
tx.parameter @b : tensor<16xf32> {init = #tx.init<zeros>}

func.func @train() attributes {tx.entry = "train", tx.train_kind = "grad"} {
  return
}
