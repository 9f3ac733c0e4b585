//===- FusedLocation.h - where a fused op came from --------------*- C++ -*-===//
//
// An op a fusion pass makes of others gets a FusedLoc: its primary location
// first (diagnostics, --tx-fusion-stats and input-id messages keep reporting
// that one: they take the first file location they find), then the
// locations of the ops it absorbed, with the metadata string
// "fused: matmul, div, masked_fill, softmax, matmul" naming them in order.
// Fusing an op that was already fused extends its list. Printed IR does
// not change (locations print only with debug info); txc --emit=dot shows
// the list on the fused node.
//
//===----------------------------------------------------------------------===//
#ifndef TXC_TRANSFORMS_FUSEDLOCATION_H
#define TXC_TRANSFORMS_FUSEDLOCATION_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

#include <string>
#include <vector>

namespace mlir::tx {

/// The ops `op` was fused from (["matmul", "add"]), or empty when it was not
/// made by a fusion pass.
std::vector<std::string> fusedFrom(Location loc);

/// The location of an op made at `primary` of `absorbed` (in program order).
Location fusedLocation(Location primary, ArrayRef<Operation *> absorbed);

} // namespace mlir::tx

#endif // TXC_TRANSFORMS_FUSEDLOCATION_H
