//===- Npy.h - NumPy .npy files: read and write -----------------*- C++ -*-===//
//
// The .npy format (versions 1.0, 2.0 and 3.0 headers): magic "\x93NUMPY",
// version, header length, a Python dict literal {'descr': '<f4',
// 'fortran_order': False, 'shape': (3, 4)} padded to 64 bytes, then the raw
// elements. Supported: little-endian (or byte-order-free) bool, int8..int64,
// uint8..uint64, float16/32/64 in C order. Fortran order, big-endian data,
// structured dtypes, object arrays and truncated files are InputErrors that
// name the file.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_NPY_H
#define TXRT_DRIVER_NPY_H

#include "core/Tensor.h"

#include <functional>
#include <string>

namespace txrt::driver {

/// Reads an .npy file into a tensor of the file's own dtype. `checkShape`,
/// when given, sees the header's shape before any data is read or memory
/// allocated, and may throw.
Tensor readNpy(const std::string &path,
               const std::function<void(const Shape &)> &checkShape = {});

/// The .npy header of `tensor` (magic to the '\n' before the data).
std::string encodeNpyHeader(const Tensor &tensor);

/// The complete .npy encoding of `tensor` (version 1.0 header, or 2.0 when
/// the header does not fit in 65535 bytes).
std::string encodeNpy(const Tensor &tensor);

/// Writes `tensor` to `path` (atomically, see AtomicFileWriter).
void writeNpy(const std::string &path, const Tensor &tensor);

} // namespace txrt::driver

#endif // TXRT_DRIVER_NPY_H
