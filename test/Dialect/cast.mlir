// RUN: tx-opt %s | tx-opt | FileCheck %s
//
// tx.cast round-trips in both directions, with #tx.dims kept, and a linear
// and its gradient read bf16 operands and produce f32 (docs/precision.md).

// CHECK-LABEL: func.func @cast_both_ways
// CHECK-NEXT: %[[B:.+]] = tx.cast %{{.+}} : tensor<?x8xf32, #tx.dims<N: 4>> to tensor<?x8xbf16, #tx.dims<N: 4>>
// CHECK-NEXT: tx.cast %[[B]] : tensor<?x8xbf16, #tx.dims<N: 4>> to tensor<?x8xf32, #tx.dims<N: 4>>
func.func @cast_both_ways(%x: tensor<?x8xf32, #tx.dims<N: 4>>) -> tensor<?x8xf32, #tx.dims<N: 4>> {
  %b = tx.cast %x : tensor<?x8xf32, #tx.dims<N: 4>> to tensor<?x8xbf16, #tx.dims<N: 4>>
  %f = tx.cast %b : tensor<?x8xbf16, #tx.dims<N: 4>> to tensor<?x8xf32, #tx.dims<N: 4>>
  return %f : tensor<?x8xf32, #tx.dims<N: 4>>
}

// CHECK-LABEL: func.func @bf16_linear
// CHECK-NEXT: %[[Y:.+]] = tx.linear %{{.+}}, %{{.+}} bias %{{.+}} : (tensor<4x8xbf16>, tensor<6x8xbf16>, tensor<6xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: tx.linear_grad %{{.+}}, %{{.+}}, %[[Y]] : (tensor<4x8xbf16>, tensor<6x8xbf16>, tensor<4x6xf32>) -> (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6xf32>)
func.func @bf16_linear(%x: tensor<4x8xbf16>, %w: tensor<6x8xbf16>, %b: tensor<6xf32>) -> tensor<6x8xf32> {
  %y = tx.linear %x, %w bias %b : (tensor<4x8xbf16>, tensor<6x8xbf16>, tensor<6xf32>) -> tensor<4x6xf32>
  %dx, %dw, %db = tx.linear_grad %x, %w, %y : (tensor<4x8xbf16>, tensor<6x8xbf16>, tensor<4x6xf32>) -> (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6xf32>)
  return %dw : tensor<6x8xf32>
}
