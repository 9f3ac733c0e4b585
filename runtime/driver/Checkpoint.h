//===- Checkpoint.h - training checkpoints: params, moments, position -*- C++ -*-===//
//
// A training checkpoint is a safetensors file (written to FILE.tmp, fsynced
// and renamed, so a crash or a failed run never leaves half a file or
// replaces a good one) holding, in the model's parameter order:
//
//   <param>              the parameter (F32, the model's shape)
//   <param>.exp_avg      Adam's first moment   (only for models that train)
//   <param>.exp_avg_sq   Adam's second moment
//
// and __metadata__ (all strings): "format": "txc-checkpoint", "model",
// "step" (updates taken), "seed", "epoch" and "batch_in_epoch" (the data
// position of the next step), "batch_size", "min_freq", "data" (the TSV
// path) and "data_fnv1a64" (its content hash, hex). Everything in it is a
// function of the run's inputs, so two runs that did the same work write
// byte-identical files. `translate` / `eval` / `run --load` read only the
// parameters.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_CHECKPOINT_H
#define TXRT_DRIVER_CHECKPOINT_H

#include "ModelInfo.h"
#include "Parameters.h"

#include <cstdint>
#include <string>

namespace txrt::driver {

/// Where a training run stands, as a checkpoint records it.
struct TrainingPosition {
  int64_t step = 0;         ///< updates taken so far
  uint64_t seed = 0;        ///< --seed of the run
  int64_t epoch = 0;        ///< data position of the next update
  int64_t batchInEpoch = 0;
  int64_t batchSize = 0;
  int64_t minFreq = 1;
  std::string dataPath;
  uint64_t dataHash = 0;
};

/// The tokenizer and loss-curve files beside a checkpoint.
constexpr const char *kTokenizerSuffix = ".tokenizer.json";
constexpr const char *kLossCurveSuffix = ".loss.csv";

/// Writes params and moments (when the model has them) with `position`.
void saveCheckpoint(const std::string &path, const ModelInfo &model,
                    const ParameterArena &params,
                    const TrainingPosition &position);

/// Loads params and moments for --resume; throws InputError naming the
/// tensor (missing, wrong dtype or shape, extra) or the metadata key before
/// touching `params` when the file does not fit the model.
TrainingPosition loadCheckpoint(const std::string &path, const ModelInfo &model,
                                ParameterArena &params);

/// "ckpt.safetensors" -> "ckpt" + suffix ("ckpt.tokenizer.json"); a path
/// without the .safetensors extension gets the suffix appended.
std::string checkpointSibling(const std::string &checkpointPath,
                              const std::string &suffix);

/// 64-bit FNV-1a of a file's bytes, for "data_fnv1a64".
std::string hexHash(uint64_t hash);

} // namespace txrt::driver

#endif // TXRT_DRIVER_CHECKPOINT_H
