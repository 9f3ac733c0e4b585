//===- InputFiles.h - read entry inputs from .npy or text files -*- C++ -*-===//
//
// An input file is an .npy file (recognised by its magic string, whatever
// its name) or a text file of whitespace-separated numbers, one row per
// line; empty lines are skipped. Text gives a rank-2 tensor [lines, values
// per line], a rank-1 tensor when the input has rank 1 and the file one
// line, or a scalar when the input has rank 0. Ragged text rows are
// right-padded with `pad` (the model's config "pad") for i32 inputs, an
// error otherwise.
//
// Values are converted to the input's dtype: any .npy integer, float or bool
// type is accepted; floats must be integral to become ids, ids must fit
// int32, bools come from 0 / 1 only. Every failure is an InputError naming
// the input and the file.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_INPUTFILES_H
#define TXRT_DRIVER_INPUTFILES_H

#include "core/Tensor.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace txrt::driver {

/// What is being read, for error messages: input `name` from `path`.
struct InputSource {
  std::string name;
  std::string path;
  /// Set by parseTextTensor when it padded ragged rows with config pad:
  /// each row's own number of values (checkIds says when a bad id is one
  /// the padding put there). Empty otherwise.
  mutable std::vector<int64_t> paddedRowLengths;
  /// The file line of each of those rows (a row over a dim's bound is
  /// named by its line).
  mutable std::vector<int64_t> paddedRowLines;
  /// Why ragged rows of this input cannot be padded (a cross-entropy's
  /// targets with no value every such loss ignores), or empty.
  std::string raggedRefusal;
  /// "input 'src' ('data/src.txt')".
  std::string describe() const;
};

/// Reads `source.path` as an input of `dtype` and `rank` (the rank only
/// shapes text files; .npy files keep their own rank). `checkShape`, when
/// given, sees an .npy file's shape before its data is read (readNpy).
Tensor readInputFile(const InputSource &source, DType dtype, size_t rank,
                     std::optional<int64_t> pad,
                     const std::function<void(const Shape &)> &checkShape = {});

/// Parses text content (as readInputFile does for a text file).
Tensor parseTextTensor(const std::string &text, const InputSource &source,
                       DType dtype, size_t rank, std::optional<int64_t> pad);

/// Converts `tensor` to `dtype` (F32, I32 or Bool), checking every value.
Tensor convertTensor(const Tensor &tensor, DType dtype,
                     const InputSource &source);

} // namespace txrt::driver

#endif // TXRT_DRIVER_INPUTFILES_H
