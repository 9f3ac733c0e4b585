// RUN: tx-opt %s --tx-plan-memory --tx-lower-entries | FileCheck %s
//
// The ops of TxMathOps.td become outlined glue kernels: a linalg.generic
// whose body is arith and math ops (PyTorch's formulas); reduce_max a
// reduction from -inf with maximumf (NaN propagates); reduce_mean_grad
// divides by a count that the entry computes from the runtime dims and
// passes as a 0-d memref.

module attributes {tx.dims = {N = 4 : i64}} {
// CHECK-LABEL: func.func @txc_entry_f(
// CHECK: call @__txc_kernel_0_silu(
// CHECK: call @__txc_kernel_1_pow(
// CHECK: call @__txc_kernel_2_pow(
// CHECK: call @__txc_kernel_3_clamp(
// CHECK: call @__txc_kernel_4_where(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) : (memref<?x1xi1>, memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>) -> ()
// CHECK: call @__txc_kernel_5_tanh(
// CHECK: call @__txc_kernel_6_reduce_max(%{{.+}}, %{{.+}}) : (memref<?x8xf32>, memref<8xf32>) -> ()
// The count of a mean over N: N itself, as f32, in a 0-d memref.
// CHECK: %[[N:.+]] = arith.uitofp %{{.+}} : i64 to f32
// CHECK: %[[COUNT:.+]] = arith.mulf %[[N]], %{{.+}} : f32
// CHECK: %[[SLOT:.+]] = memref.alloca() : memref<f32>
// CHECK: memref.store %[[COUNT]], %[[SLOT]][] : memref<f32>
// CHECK: call @__txc_kernel_7_reduce_mean_grad(%{{.+}}, %[[SLOT]], %{{.+}}) : (memref<1x8xf32>, memref<f32>, memref<?x8xf32>) -> ()
// CHECK: call @__txc_kernel_8_unary_grad(
// CHECK: return %{{.+}} : i32
func.func @f(%x: tensor<?x8xf32, #tx.dims<N: 4>> {tx.name = "x"}, %m: tensor<?x1xi1, #tx.dims<N: 4>> {tx.name = "m"}) -> (tensor<?x8xf32, #tx.dims<N: 4>> {tx.name = "y"}, tensor<8xf32> {tx.name = "r"}, tensor<?x8xf32, #tx.dims<N: 4>> {tx.name = "g"}, tensor<?x8xf32, #tx.dims<N: 4>> {tx.name = "d"}) attributes {tx.entry = "f"} {
  %0 = tx.silu %x : (tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<?x8xf32, #tx.dims<N: 4>>
  %1 = tx.pow %0 {exponent = 1.5 : f32} : (tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<?x8xf32, #tx.dims<N: 4>>
  %2 = tx.pow %1 {exponent = -0.5 : f32} : (tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<?x8xf32, #tx.dims<N: 4>>
  %3 = tx.clamp %2 {min = -1.0 : f32, max = 1.0 : f32} : (tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<?x8xf32, #tx.dims<N: 4>>
  %4 = tx.where %m, %3, %x : (tensor<?x1xi1, #tx.dims<N: 4>>, tensor<?x8xf32, #tx.dims<N: 4>>, tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<?x8xf32, #tx.dims<N: 4>>
  %5 = tx.tanh %4 : (tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<?x8xf32, #tx.dims<N: 4>>
  %r = tx.reduce_max %5 {axes = array<i64: 0>} : (tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<8xf32>
  %k = tx.reshape %r : (tensor<8xf32>) -> tensor<1x8xf32>
  %g = tx.reduce_mean_grad %k : (tensor<1x8xf32>) -> tensor<?x8xf32, #tx.dims<N: 4>>
  %d = tx.unary_grad %x, %g {function = #tx.unary<silu>} : (tensor<?x8xf32, #tx.dims<N: 4>>, tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<?x8xf32, #tx.dims<N: 4>>
  return %5, %r, %g, %d : tensor<?x8xf32, #tx.dims<N: 4>>, tensor<8xf32>, tensor<?x8xf32, #tx.dims<N: 4>>, tensor<?x8xf32, #tx.dims<N: 4>>
}
}

// silu: x / (1 + exp(-x)), on one flat loop.
// CHECK-LABEL: func.func private @__txc_kernel_0_silu(
// CHECK-SAME: %{{.+}}: memref<?xf32>, %{{.+}}: memref<?xf32>)
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[NEG:.+]] = arith.negf %[[IN]] : f32
// CHECK-NEXT: %[[E:.+]] = math.exp %[[NEG]] : f32
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[D:.+]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK-NEXT: %[[Y:.+]] = arith.divf %[[IN]], %[[D]] : f32
// CHECK-NEXT: linalg.yield %[[Y]] : f32

// An exponent without a special case is math.powf; -0.5 is math.rsqrt.
// CHECK-LABEL: func.func private @__txc_kernel_1_pow(
// CHECK: %[[C:.+]] = arith.constant 1.500000e+00 : f32
// CHECK: math.powf %{{.+}}, %[[C]] : f32
// CHECK-LABEL: func.func private @__txc_kernel_2_pow(
// CHECK: math.rsqrt %{{.+}} : f32

// clamp as PyTorch's: x < min ? min : x, then max < x ? max : x (NaN stays
// NaN, and -0 stays -0 against a bound of 0, which maximumf made +0).
// CHECK-LABEL: func.func private @__txc_kernel_3_clamp(
// CHECK: %[[LO:.+]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT: %[[BELOW:.+]] = arith.cmpf olt, %[[X:.+]], %[[LO]] : f32
// CHECK-NEXT: %[[MAX:.+]] = arith.select %[[BELOW]], %[[LO]], %[[X]] : f32
// CHECK-NEXT: %[[HI:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[ABOVE:.+]] = arith.cmpf olt, %[[HI]], %[[MAX]] : f32
// CHECK-NEXT: arith.select %[[ABOVE]], %[[HI]], %[[MAX]] : f32

// where: select, the condition broadcast along the inner dim.
// CHECK-LABEL: func.func private @__txc_kernel_4_where(
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel"]}
// CHECK: arith.select %{{.+}}, %{{.+}}, %{{.+}} : f32

// CHECK-LABEL: func.func private @__txc_kernel_5_tanh(
// CHECK: math.tanh %{{.+}} : f32

// reduce_max over N: fill with -inf, then a reduction with maximumf.
// CHECK-LABEL: func.func private @__txc_kernel_6_reduce_max(
// CHECK: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NINF]] : f32) outs(%{{.+}} : memref<8xf32>)
// CHECK: linalg.generic {{.+}} iterator_types = ["reduction", "parallel"]
// CHECK: arith.maximumf %{{.+}}, %{{.+}} : f32

// reduce_mean_grad: dy / count, the count read from the 0-d memref.
// CHECK-LABEL: func.func private @__txc_kernel_7_reduce_mean_grad(
// CHECK-SAME: %{{.+}}: memref<1x8xf32>, %{{.+}}: memref<f32>, %{{.+}}: memref<?x8xf32>)
// CHECK: ^bb0(%[[DY:.+]]: f32, %[[COUNT:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[Q:.+]] = arith.divf %[[DY]], %[[COUNT]] : f32
// CHECK-NEXT: linalg.yield %[[Q]] : f32

// The silu gradient recomputes sigmoid(x) from the input.
// CHECK-LABEL: func.func private @__txc_kernel_8_unary_grad(
// CHECK: math.exp
// CHECK-NOT: math.
// CHECK: linalg.yield
