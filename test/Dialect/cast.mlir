// RUN: tx-opt %s | tx-opt | FileCheck %s
//
// tx.cast round-trips in both directions, with #tx.dims kept, and with
// by_producer on the output of a norm; a linear and its gradient read bf16
// operands and produce f32 (docs/precision.md).

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

// CHECK-LABEL: func.func @by_producer
// CHECK-NEXT: %[[Y:[^,]+]], %{{.+}} = tx.add_layer_norm
// CHECK-NEXT: tx.cast %[[Y]] {by_producer} : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-NEXT: %[[R:.+]] = tx.rms_norm
// CHECK-NEXT: tx.cast %[[R]] {by_producer} : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-NEXT: %[[A:[^,]+]], %{{.+}} = tx.add_rms_norm
// CHECK-NEXT: tx.cast %[[A]] {by_producer} : tensor<4x8xf32> to tensor<4x8xbf16>
func.func @by_producer(%x: tensor<4x8xf32>, %r: tensor<4x8xf32>, %g: tensor<8xf32>) -> (tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>) {
  %y:2 = tx.add_layer_norm %x, %r, %g, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %yb = tx.cast %y#0 {by_producer} : tensor<4x8xf32> to tensor<4x8xbf16>
  %n = tx.rms_norm %x, %g : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %nb = tx.cast %n {by_producer} : tensor<4x8xf32> to tensor<4x8xbf16>
  %a:2 = tx.add_rms_norm %x, %r, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %ab = tx.cast %a#0 {by_producer} : tensor<4x8xf32> to tensor<4x8xbf16>
  return %yb, %nb, %ab : tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>
}
