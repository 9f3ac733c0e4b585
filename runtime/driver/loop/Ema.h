//===- Ema.h - train --ema: an exponential moving average of the weights -*- C++ -*-===//
//
// `train --ema DECAY` keeps, beside the parameter arena,
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
// On the CPU the average is a host buffer updated by the host loop
// updateAverage. On a device (a --target=cuda executable) it also lives in
// device memory, beside the device's parameter arena (ParameterHome.h),
// and each update is a device call per run of adjacent parameters
// (Device::updateAverage): a training step copies nothing back for it.
// WeightAverage is the one place that knows which copy is current, with
// two flags as ParameterHome keeps for the arena:
//
//   host stale    the device updated the average since the host copy was
//                 last brought back
//   device stale  the host copy was written (the start, reset(), load(),
//                 swap()) since it was last copied in
//
// Every way to the values goes through them: update() copies the host's
// in first when the device's is stale; views() (a checkpoint) and swap()
// (a validation) bring the device's back first when the host's is; load()
// and reset() overwrite the host copy and leave the device's stale. Both
// copies hold the parameters back to back in arena order (their merged
// ranges, parameterRanges), so each crossing is one copy. The host loop and
// the device kernel (runtime/cuda/kernels/EmaKernels.cuh) compute each
// element the same way, round(round(DECAY * ema) + round((1 - DECAY) *
// param)) with no fused multiply-add, so both give the same bits.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_EMA_H
#define TXRT_DRIVER_EMA_H

#include "core/Device.h"
#include "core/ModelInfo.h"
#include "core/ParameterHome.h"
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
/// The decay as written: the shortest text that reads back exactly.
std::string formatDecay(double decay);
/// A checkpoint's decay; nullopt when it has none, InputError when it is
/// not a number in (0, 1).
std::optional<double> checkpointDecay(const SafetensorsReader &file);

/// ema[i] = decay * ema[i] + (1 - decay) * param[i], each product rounded
/// and then their sum (no fused multiply-add: Ema.cpp is compiled with
/// -ffp-contract=off), as the device kernel computes it.
void updateAverage(float *ema, const float *param, int64_t count,
                   float decay);

class WeightAverage {
public:
  /// Starts at the arena's current parameters. With `device` (not owned;
  /// nullptr: the CPU) the average also lives in device memory, allocated
  /// now (a ResourceError names it and its size), and is updated there.
  WeightAverage(const ModelInfo &model, const ParameterArena &params,
                double decay, Device *device = nullptr);
  ~WeightAverage();
  WeightAverage(const WeightAverage &) = delete;
  WeightAverage &operator=(const WeightAverage &) = delete;

  double decay() const { return decay_; }
  /// After an update: folds the parameters of `home` in. On the CPU the
  /// host loop over its arena; on a device (the average's, which must be
  /// home's) device calls on its device arena, nothing copied back.
  void update(ParameterHome &home);
  /// After an update: folds the host arena's parameters into the host
  /// copy (the CPU's update).
  void update(const ParameterArena &params);
  /// Exchanges the average with the arena's parameters (twice: undone).
  void swap(ParameterArena &params);
  /// Resets the average to the arena's parameters.
  void reset(const ParameterArena &params);

  /// The average as "__ema.<param>" tensors, for a checkpoint: views of
  /// the host copy, brought back first when the device's is newer; valid
  /// until the next call that changes the average.
  std::vector<SafetensorsTensorView> views();
  /// Reads the average from a checkpoint; false when it has none (then the
  /// average is unchanged). InputError when its tensors do not fit.
  bool load(const SafetensorsReader &file);

  /// The average's bytes (those of the parameters).
  int64_t bytes() const { return int64_t(host_.size() * sizeof(float)); }
  /// Whether each copy is current (always, on the CPU).
  bool hostCurrent() const { return !hostStale_; }
  bool deviceCurrent() const { return !deviceStale_; }
  /// The copies of the whole average made so far, each way, and the
  /// updates run on the device; 0 on the CPU.
  int64_t copiesToDevice() const { return copiesToDevice_; }
  int64_t copiesToHost() const { return copiesToHost_; }
  int64_t deviceUpdates() const { return deviceUpdates_; }

private:
  /// The host copy with the current values, to read.
  float *readHost();
  /// The same, to change: the device copy is stale from now on.
  float *writeHost();
  /// The host copy to overwrite whole: nothing is brought back, and the
  /// device copy is stale from now on.
  float *replaceHost();
  /// The device copy with the current values (the host's copied in first
  /// when stale).
  float *onDevice();

  const ModelInfo &model_;
  double decay_;
  /// The arena's parameter ranges: the average holds them back to back.
  std::vector<ArenaRange> ranges_;
  /// Where each parameter (model.params order) starts in the average, in
  /// floats.
  std::vector<int64_t> starts_;
  std::vector<float> host_;
  Device *device_;
  float *deviceAverage_ = nullptr;
  bool hostStale_ = false, deviceStale_ = false;
  int64_t copiesToDevice_ = 0, copiesToHost_ = 0, deviceUpdates_ = 0;
};

/// Whether `file` holds an average of every parameter of `model`.
bool hasAveragedWeights(const SafetensorsReader &file, const ModelInfo &model);
/// Overwrites the parameters with the checkpoint's average (`--load` then
/// this): true when it had one.
bool loadAveragedWeights(const SafetensorsReader &file, const ModelInfo &model,
                         ParameterArena &params);

/// What the loaded weights are for, which decides what a changed config
/// means.
enum class WeightsUse {
  /// Only entries that do not train run (translate, eval, run of a
  /// forward entry): a config that differs while the checkpoint records
  /// this executable's inference fingerprint changes nothing they compute.
  Inference,
  /// Training starts from them (train --init-from, run of a train step).
  Training,
  /// A training entry runs on them as they are (run of train_grad, bench's
  /// train step): every config value counts.
  TrainingEntry,
};

/// The shapes agree (ParameterArena::load checked them), the config may
/// not: heads, eps or a scale change the function without changing a
/// tensor. Warns on `err` when `file` records another config than
/// `model`'s; a note instead for Training (training starts from the
/// weights) and for Inference when the file records the same inference
/// fingerprint as `model` (the values that differ are used only in
/// training). Only a recorded config says anything (an export or a PyTorch
/// state_dict records none; every key would read as new, a false warning).
void noteConfigChanges(const SafetensorsReader &file, const ModelInfo &model,
                       std::ostream &err, WeightsUse use);

/// `translate`, `eval`, `generate`, `predict`, `export`: loads the
/// parameters of `file`, then its average unless `raw` (--no-ema), with a
/// note on `err` saying which. A file trained with another config of the
/// same shapes (txc -D heads=4 against heads=2) loads, with a warning:
/// this executable computes another function of its weights.
/// WeightsUse::Training (train --init-from, which starts from them): a note.
void loadWeightsForInference(const SafetensorsReader &file,
                             const ModelInfo &model, ParameterArena &params,
                             bool raw, std::ostream &err,
                             WeightsUse use = WeightsUse::Inference);

} // namespace txrt::driver

#endif // TXRT_DRIVER_EMA_H
