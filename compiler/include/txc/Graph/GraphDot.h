//===- GraphDot.h - the model graph as Graphviz DOT --------------*- C++ -*-===//
//
// txc --emit=dot / --emit=svg: one `digraph` per entry at a readable level.
//  - Nodes are the tx ops of the entry after fusion; parameters are not
//    nodes, the op that reads one lists it ("c_attn.weight [192, 64]").
//  - Ops inlined from a def are grouped in a cluster per `as` scope
//    ("encoder" > "encoder.layers.3" > "encoder.layers.3.self_attn"), from
//    the NameLoc the frontend gives them.
//  - Ops a fusion pass made are filled gold and list what they absorbed
//    (FusedLocation.h): "fused: matmul, div, masked_fill, softmax, matmul".
//  - Edges carry the shapes of the values ("[B, T, 512]", "i32[B, S]").
//  - A training entry shows its forward; its backward and optimizer are
//    folded into one node after the loss that counts their ops, unless
//    `full` is set (then the whole differentiated entry is drawn).
//
//===----------------------------------------------------------------------===//
#ifndef TXC_GRAPH_GRAPHDOT_H
#define TXC_GRAPH_GRAPHDOT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace txc {

struct GraphOptions {
  /// Draw backward and optimizer ops instead of folding them.
  bool full = false;
  /// Entries to draw (empty: all).
  std::vector<std::string> entries;
};

/// The names of the entries `options` selects, in module order; an unknown
/// name in options.entries is returned in `unknown`.
std::vector<std::string> selectEntries(mlir::ModuleOp module,
                                       const GraphOptions &options,
                                       std::string &unknown);

/// Writes the DOT graph of `entry`. `forward` is the module after fusion,
/// `differentiated` the same after autodiff and the optimizer (null when
/// the stage was not run: nothing to fold).
void writeEntryDot(mlir::ModuleOp forward, mlir::ModuleOp differentiated,
                   llvm::StringRef entry, const GraphOptions &options,
                   llvm::raw_ostream &os);

} // namespace txc

#endif // TXC_GRAPH_GRAPHDOT_H
