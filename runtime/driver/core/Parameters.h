//===- Parameters.h - the parameter arena: init, load, save -----*- C++ -*-===//
//
// One 64-byte aligned block of param_arena_bytes holding every parameter at
// its compile-time offset (the rest of the arena, e.g. gradients and Adam
// moments, starts zeroed). It is filled by `--init SEED` (Init.h) or by
// `--load FILE.safetensors`, matching tensors to parameters by name.
//
// Loading checks the whole file against the model before copying anything
// and reports every problem, one per line: a missing tensor, an extra
// tensor, a dtype other than F32, a shape mismatch; then a NaN or infinite
// value is an error naming the tensor (a corrupt file never loads). Training
// checkpoints (Checkpoint.h) also hold "<param>.exp_avg" and
// "<param>.exp_avg_sq" (Adam's moments); loading parameters ignores those, and
// tensors whose names start with "__" (kTrainingStatePrefix).
//
// A version 2 model's arena also holds every parameter's gradient and Adam
// moments (ModelInfo.h); initialize() zero-fills them. A model compiled with
// --precision=bf16 also holds bf16 copies of the weights its bf16 linears
// read: never saved or loaded, they are rounded from the parameters by
// data() after anything wrote parameters through param() (--init, --load,
// --resume, EMA swaps); the train step's Adam keeps them current itself.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_PARAMETERS_H
#define TXRT_DRIVER_PARAMETERS_H

#include "core/ModelInfo.h"
#include "formats/Safetensors.h"
#include "core/Tensor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace txrt::driver {

/// Names with this prefix in a checkpoint are training state, not params.
constexpr const char *kTrainingStatePrefix = "__";
/// The __metadata__ "format" of a file of gradients (run --save-grads),
/// which every load of weights refuses.
constexpr const char *kGradientsFormat = "txc-gradients";

/// Suffixes of Adam's moments in a training checkpoint.
constexpr const char *kExpAvgSuffix = ".exp_avg";
constexpr const char *kExpAvgSqSuffix = ".exp_avg_sq";

/// A failed load lists at most this many problems (then a count).
constexpr size_t kMaxReportedProblems = 20;

class ParameterArena {
public:
  explicit ParameterArena(const ModelInfo &model);

  /// The arena as compiled entries read it: the bf16 copies are refreshed
  /// first when a parameter may have been written through param() since.
  void *data();
  /// The arena's bytes as they are, bf16 copies not refreshed: for copying
  /// a device's arena over it (ParameterHome).
  void *bytes() { return buffer_.data(); }
  /// A parameter to write (marks the bf16 copies stale).
  float *param(const ParamInfo &info);
  const float *param(const ParamInfo &info) const;
  /// The gradient and the moments of a parameter with training state.
  float *gradient(const ParamInfo &info) { return at(info.gradOffset); }
  const float *gradient(const ParamInfo &info) const {
    return at(info.gradOffset);
  }
  float *expAvg(const ParamInfo &info) { return at(info.expAvgOffset); }
  const float *expAvg(const ParamInfo &info) const {
    return at(info.expAvgOffset);
  }
  float *expAvgSq(const ParamInfo &info) { return at(info.expAvgSqOffset); }
  const float *expAvgSq(const ParamInfo &info) const {
    return at(info.expAvgSqOffset);
  }

  /// Fills every parameter from its initializer under `seed` and zero-fills
  /// gradients and moments.
  void initialize(uint64_t seed);

  /// Loads every parameter from a safetensors file; throws InputError (one
  /// line per problem, at most kMaxReportedProblems) before touching the
  /// arena when the file does not match the model, and InputError naming
  /// the tensor and the element when a value is NaN or infinite.
  void load(const std::string &path);
  void load(const SafetensorsReader &file);

  /// Writes every parameter (F32, by name, in the model's order) with
  /// `metadata` to `path` atomically.
  void save(const std::string &path,
            const SafetensorsMetadata &metadata = {}) const;

  /// Writes every parameter's gradient, named like the parameter.
  void saveGradients(const std::string &path,
                     const SafetensorsMetadata &metadata = {}) const;

  /// Zero-fills the Adam moments (no-op without training state); gradients
  /// are written by every training call before they are read.
  void clearTrainingState();

  /// Where a NaN or infinity is: the tensor ("exp_avg_sq of 'out.weight'")
  /// and the value ("inf at [3, 1]").
  struct NonFiniteValue {
    std::string tensor, value;
  };
  /// The first parameter or Adam moment (in the model's order, each
  /// parameter before its moments) holding a NaN or an infinity; nullopt
  /// when every value is finite. Gradients are not checked: they are
  /// scratch.
  std::optional<NonFiniteValue> findNonFinite() const;

private:
  float *at(int64_t offset) {
    return reinterpret_cast<float *>(static_cast<char *>(buffer_.data()) +
                                     offset);
  }
  const float *at(int64_t offset) const {
    return reinterpret_cast<const float *>(
        static_cast<const char *>(buffer_.data()) + offset);
  }

  const ModelInfo &model_;
  AlignedBuffer buffer_;
  bool bf16CopiesStale_ = true;
};

/// A run of the arena's bytes.
struct ArenaRange {
  int64_t offset, bytes;
};
/// The parameters' bytes in the arena, in offset order, adjacent ones
/// merged: the runs train --ema's average holds back to back and updates
/// with one device call each (loop/Ema.h).
std::vector<ArenaRange> parameterRanges(const ModelInfo &model);

/// Whether `name` is "<param>.exp_avg" or "<param>.exp_avg_sq" of a
/// parameter of `model`.
bool isMomentName(const ModelInfo &model, const std::string &name);

/// The problems of loading `model`'s parameters from `file` (empty: ok);
/// throws InputError for a file of gradients (run --save-grads).
std::vector<std::string>
checkCheckpointAgainstModel(const SafetensorsReader &file,
                            const ModelInfo &model);

/// Throws InputError listing `problems` of loading `path` into `model`, a
/// line each, the first kMaxReportedProblems and a count of the rest.
[[noreturn]] void throwLoadProblems(const std::vector<std::string> &problems,
                                    const std::string &path,
                                    const ModelInfo &model);

/// Throws InputError listing checkCheckpointAgainstModel's problems (as
/// ParameterArena::load does), if any.
void checkParametersFit(const SafetensorsReader &file, const ModelInfo &model);

/// Refuses (InputError) a checkpoint of another model, named in its
/// __metadata__ "model", whose tensors are not this model's: first, before
/// its tokenizer, labels or config are read (a language model's checkpoint
/// given to a classifier was told to recompile with another vocab, then to
/// find a label file). One whose tensors all fit (a renamed spec) loads.
void checkCheckpointModel(const SafetensorsReader &file,
                          const ModelInfo &model);

} // namespace txrt::driver

#endif // TXRT_DRIVER_PARAMETERS_H
