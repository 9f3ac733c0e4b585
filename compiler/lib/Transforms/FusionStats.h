//===- FusionStats.h - what a fusion pass fused and declined ------*- C++ -*-===//
//
// Each fusion pass counts the patterns it rewrote and keeps, for each
// candidate it left alone, the spec location and the reason. With the pass's
// `stats` option (txc --tx-fusion-stats) they are printed to stderr:
//
//   tx-fuse-attention: fused 36, declined 1
//   tx-fuse-attention: declined at base.tx:28:12: softmax over axis 2, ...
//   tx-fuse-linear: declined at gpt.tx:31:17 (2 candidates): train entry: ...
//
//===----------------------------------------------------------------------===//
#ifndef TXC_TRANSFORMS_FUSIONSTATS_H
#define TXC_TRANSFORMS_FUSIONSTATS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/STLExtras.h"
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
  /// `pass: fused N, declined M`, then a line per spec location and reason
  /// in the order first declined: the copies of one layer's code (a def
  /// called per layer, an op in several entries) are one line that counts
  /// them, `declined at model.tx:40:35 (6 candidates): ...`.
  void print(llvm::raw_ostream &os) const {
    os << pass << ": fused " << numFused << ", declined " << declines.size()
       << "\n";
    llvm::SmallVector<std::pair<const Decline *, int64_t>> lines;
    for (const Decline &decline : declines) {
      auto same = llvm::find_if(
          lines, [&](const auto &line) { return *line.first == decline; });
      if (same != lines.end())
        ++same->second;
      else
        lines.push_back({&decline, 1});
    }
    for (const auto &[decline, count] : lines) {
      os << pass << ": declined at " << decline->first;
      if (count > 1)
        os << " (" << count << " candidates)";
      os << ": " << decline->second << "\n";
    }
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
  /// Where (`file:line:col`) and why.
  using Decline = std::pair<std::string, std::string>;

  std::string pass;
  int64_t numFused = 0;
  llvm::SmallVector<Decline> declines;
};

} // namespace mlir::tx

#endif // TXC_TRANSFORMS_FUSIONSTATS_H
