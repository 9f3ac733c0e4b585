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
};

/// The ids an i32 entry argument may hold: the intersection over the ops
/// that read it (through reshapes). nullopt when nothing constrains it (a
/// padding mask's comparison takes any value) or it is not i32.
std::optional<IdRange> inputIdRange(BlockArgument input);

} // namespace mlir::tx

#endif // TXC_CODEGEN_INPUTIDRANGES_H
