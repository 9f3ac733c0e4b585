//===- InputIdRanges.h - which ids an entry's i32 inputs may hold -*- C++ -*-===//
//
// The values an i32 entry input may take, found from the ops that read it
// (embedding rows, cross-entropy classes and ignore_index), for the model
// metadata: the driver validates ids against what they index.
//
//===----------------------------------------------------------------------===//
#ifndef TXC_CODEGEN_INPUTIDRANGES_H
#define TXC_CODEGEN_INPUTIDRANGES_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir::tx {

/// Ids in [begin, end), or one of `also` (an ignore_index outside it).
struct IdRange {
  int64_t begin = 0, end = 0;
  llvm::SmallVector<int64_t, 1> also;
  /// What the ids index, for messages: "the 20 rows of the embedding
  /// 'src_embed.weight' at model.tx:3:7".
  std::string what;
  /// A cross-entropy's ignore_index when one reads the ids (inside or
  /// outside [begin, end)): the driver checks that it pads targets with it.
  std::optional<int64_t> ignored;
  /// Whether a cross-entropy reads the ids as its targets: ragged rows must
  /// then be padded with a value every such loss ignores (`ignored`), and
  /// without one the driver refuses them.
  bool scored = false;
  /// The parameters whose rows the ids pick (an embedding's table,
  /// `wte[ids]`), in the order found: the driver gives a source and a
  /// target that index one table one vocabulary.
  llvm::SmallVector<std::string, 1> tables;
};

/// The ids an i32 entry argument may hold: the intersection over the ops
/// that read it (through reshapes). nullopt when nothing constrains it (a
/// padding mask's comparison takes any value) or it is not i32.
std::optional<IdRange> inputIdRange(BlockArgument input);

/// Ids bounded by a dim's value at the call (an index along an axis of
/// size T: [-T, T); the classes of a cross-entropy over C: [0, C), or one
/// of `also`): the driver checks them once the inputs bind the dims.
struct DimIdRange {
  std::string dim;
  bool negative = false; ///< [-n, n) (PyTorch's indexing), else [0, n)
  llvm::SmallVector<int64_t, 1> also;
  std::string what; ///< "the entries along axis 1 of 'h' at m.tx:9:12"
};

/// Every reader of `input` (through reshapes) whose bound is a dim.
llvm::SmallVector<DimIdRange> inputDimIdRanges(BlockArgument input);

} // namespace mlir::tx

#endif // TXC_CODEGEN_INPUTIDRANGES_H
