//===- FusionStats.h - what a fusion pass fused and declined ------*- C++ -*-===//
//
// Each fusion pass counts the patterns it rewrote and keeps, for each
// candidate it left alone, the spec location and the reason. With the pass's
// `stats` option (txc --tx-fusion-stats) they are printed to stderr:
//
//   tx-fuse-attention: fused 36, declined 1
//   tx-fuse-attention: declined at base.tx:28:12: softmax over axis 2, ...
//
//===----------------------------------------------------------------------===//
#ifndef TXC_TRANSFORMS_FUSIONSTATS_H
#define TXC_TRANSFORMS_FUSIONSTATS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::tx {

class FusionStats {
public:
  explicit FusionStats(llvm::StringRef pass) : pass(pass.str()) {}

  void fused() { ++numFused; }
  void declined(Location loc, const llvm::Twine &why) {
    declines.push_back({formatLocation(loc), why.str()});
  }

  /// Whether nothing was fused or declined.
  bool empty() const { return numFused == 0 && declines.empty(); }
  /// `pass: fused N, declined M`, then one line per declined candidate.
  void print(llvm::raw_ostream &os) const {
    os << pass << ": fused " << numFused << ", declined " << declines.size()
       << "\n";
    for (const auto &[where, why] : declines)
      os << pass << ": declined at " << where << ": " << why << "\n";
  }

  /// `file:line:col` of the first file location in `loc`, else `unknown`.
  static std::string formatLocation(Location loc) {
    if (auto file = loc->findInstanceOf<FileLineColLoc>())
      return (file.getFilename().getValue() + ":" +
              llvm::Twine(file.getLine()) + ":" + llvm::Twine(file.getColumn()))
          .str();
    return "unknown";
  }

private:
  std::string pass;
  int64_t numFused = 0;
  llvm::SmallVector<std::pair<std::string, std::string>> declines;
};

} // namespace mlir::tx

#endif // TXC_TRANSFORMS_FUSIONSTATS_H
