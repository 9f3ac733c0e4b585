//===- Parameters.h - the parameter arena: init, load, save -----*- C++ -*-===//
//
// One 64-byte aligned block of param_arena_bytes holding every parameter at
// its compile-time offset (the rest of the arena, e.g. gradients and Adam
// moments, starts zeroed). It is filled by `--init SEED` (Init.h) or by
// `--load FILE.safetensors`, matching tensors to parameters by name.
//
// Loading checks the whole file against the model before copying anything
// and reports every problem, one per line: a missing tensor, an extra
// tensor, a dtype other than F32, a shape mismatch. Tensors whose names
// start with "__" (kTrainingStatePrefix; e.g. "__adam_m__.<param>",
// "__adam_v__.<param>", "__step__") are training state written by
// checkpoints; loading parameters ignores them.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_PARAMETERS_H
#define TXRT_DRIVER_PARAMETERS_H

#include "ModelInfo.h"
#include "Safetensors.h"
#include "Tensor.h"

#include <cstdint>
#include <string>

namespace txrt::driver {

/// Names with this prefix in a checkpoint are training state, not params.
constexpr const char *kTrainingStatePrefix = "__";

/// A failed load lists at most this many problems (then a count).
constexpr size_t kMaxReportedProblems = 20;

class ParameterArena {
public:
  explicit ParameterArena(const ModelInfo &model);

  void *data() { return buffer_.data(); }
  float *param(const ParamInfo &info);
  const float *param(const ParamInfo &info) const;

  /// Fills every parameter from its initializer under `seed`.
  void initialize(uint64_t seed);

  /// Loads every parameter from a safetensors file; throws InputError (one
  /// line per problem, at most kMaxReportedProblems) before touching the
  /// arena when the file does not match the model.
  void load(const std::string &path);

  /// Writes every parameter (F32, by name, in the model's order) with
  /// `metadata` to `path` atomically.
  void save(const std::string &path,
            const SafetensorsMetadata &metadata = {}) const;

private:
  const ModelInfo &model_;
  AlignedBuffer buffer_;
};

/// The problems of loading `model`'s parameters from `file` (empty: ok).
std::vector<std::string>
checkCheckpointAgainstModel(const SafetensorsReader &file,
                            const ModelInfo &model);

} // namespace txrt::driver

#endif // TXRT_DRIVER_PARAMETERS_H
