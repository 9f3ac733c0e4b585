//===- Ema.h - train --ema: an exponential moving average of the weights -*- C++ -*-===//
//
// `train --ema DECAY` keeps, host-side, beside the parameter arena,
//
//   ema <- DECAY * ema + (1 - DECAY) * param        after every update
//
// starting from the weights before the first update. Validation (and so
// --keep-best) scores the average: swap() exchanges it with the arena's
// parameters, the validator runs, swap() puts the raw weights back. The
// checkpoint stores it beside the raw tensors as "__ema.<param>" (the "__"
// prefix marks training state, which a plain --load skips) with the decay
// in __metadata__ "ema_decay"; --resume restores it, and `translate` /
// `eval` load the average instead of the raw weights when the checkpoint
// has one (--no-ema: the raw ones).
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_EMA_H
#define TXRT_DRIVER_EMA_H

#include "core/ModelInfo.h"
#include "core/Parameters.h"
#include "formats/Safetensors.h"

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace txrt::driver {

/// The checkpoint name of a parameter's average.
constexpr const char *kEmaPrefix = "__ema.";

/// The checkpoint's __metadata__ key of the decay.
constexpr const char *kEmaDecayKey = "ema_decay";
/// The decay as written ("%.17g": read back exactly).
std::string formatDecay(double decay);
/// A checkpoint's decay; nullopt when it has none, InputError when it is
/// not a number in (0, 1).
std::optional<double> checkpointDecay(const SafetensorsReader &file);

/// ema[i] = decay * ema[i] + (1 - decay) * param[i].
void updateAverage(float *ema, const float *param, int64_t count,
                   float decay);

class WeightAverage {
public:
  /// Starts at the arena's current parameters.
  WeightAverage(const ModelInfo &model, const ParameterArena &params,
                double decay);

  double decay() const { return decay_; }
  /// After an update: folds the arena's parameters in.
  void update(ParameterValues params);
  /// Exchanges the average with the arena's parameters (twice: undone).
  void swap(ParameterArena &params);
  /// Resets the average to the arena's parameters.
  void reset(const ParameterArena &params);

  /// The average as "__ema.<param>" tensors, for a checkpoint.
  std::vector<SafetensorsTensorView> views() const;
  /// Reads the average from a checkpoint; false when it has none (then the
  /// average is unchanged). InputError when its tensors do not fit.
  bool load(const SafetensorsReader &file);

private:
  const ModelInfo &model_;
  double decay_;
  std::vector<std::vector<float>> tensors_; ///< in model.params order
};

/// Whether `file` holds an average of every parameter of `model`.
bool hasAveragedWeights(const SafetensorsReader &file, const ModelInfo &model);
/// Overwrites the parameters with the checkpoint's average (`--load` then
/// this): true when it had one.
bool loadAveragedWeights(const SafetensorsReader &file, const ModelInfo &model,
                         ParameterArena &params);

/// `translate`, `eval`, `generate`, `predict`: loads the parameters of `file`, then its average
/// unless `raw` (--no-ema), with a note on `err` saying which.
void loadWeightsForInference(const SafetensorsReader &file,
                             const ModelInfo &model, ParameterArena &params,
                             bool raw, std::ostream &err);

} // namespace txrt::driver

#endif // TXRT_DRIVER_EMA_H
