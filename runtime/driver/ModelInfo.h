//===- ModelInfo.h - the compiled model's metadata, parsed ------*- C++ -*-===//
//
// The typed view of txc_model_json (see ModelAbi.h): config, symbolic dims
// with bounds, parameters with their arena offsets and initializers, and the
// entries with their input/output signatures and arena sizes. Parsing
// validates everything the driver later relies on (known dtypes and
// initializers, dim names, parameters inside the arena and not overlapping),
// so a malformed metadata string is a ModelError, never a crash.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_MODELINFO_H
#define TXRT_DRIVER_MODELINFO_H

#include "Init.h"
#include "Json.h"
#include "Tensor.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace txrt::driver {

/// A symbolic size with its upper bound.
struct DimInfo {
  std::string name;
  int64_t bound = 0;
};

/// One dimension of an entry signature: a constant, or model dim `dim`.
struct DimRef {
  int64_t size = 0; ///< the constant (when dim < 0)
  int dim = -1;     ///< index into ModelInfo::dims, or -1
  bool isSymbolic() const { return dim >= 0; }
};

/// An input or output of an entry.
struct TensorSig {
  std::string name;
  DType dtype = DType::F32;
  std::vector<DimRef> shape;
};

/// A parameter and where it lives in the parameter arena.
struct ParamInfo {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  InitKind init = InitKind::Zeros;
  int64_t offset = 0; ///< bytes from the start of the arena
  int64_t numElements = 0;
  int64_t byteSize = 0;
};

/// A compiled entry point.
struct EntryInfo {
  std::string name;
  int64_t arenaBytes = 0;  ///< the planned activation arena
  int64_t tensorBytes = 0; ///< all its tensors without planning
  std::vector<TensorSig> inputs, outputs;
};

struct ModelInfo {
  int64_t version = 0;
  std::string model, source, compileFlags;
  JsonObject config;
  std::vector<DimInfo> dims;
  int64_t paramArenaBytes = 0;
  std::vector<ParamInfo> params;
  std::vector<EntryInfo> entries;

  /// Parses and validates the metadata; throws ModelError.
  static ModelInfo parse(std::string_view json);

  const EntryInfo *findEntry(std::string_view name) const;
  const ParamInfo *findParam(std::string_view name) const;
  /// A numeric config value, or nullopt when absent or not a number.
  std::optional<double> configNumber(std::string_view key) const;
  /// The total number of parameter elements.
  int64_t totalParamElements() const;

  /// "[B, S, 512]".
  std::string formatSignatureShape(const TensorSig &sig) const;
  /// "src: i32[B, S]".
  std::string formatSignature(const TensorSig &sig) const;
};

} // namespace txrt::driver

#endif // TXRT_DRIVER_MODELINFO_H
