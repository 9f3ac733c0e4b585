//===- Checkpoint.h - training checkpoints: params, moments, position -*- C++ -*-===//
//
// A training checkpoint is a safetensors file (written atomically through a
// temporary file, FileIO.h, so a crash or a failed run never leaves half a
// file or replaces a good one) holding, in the model's parameter order:
//
//   <param>              the parameter (F32, the model's shape)
//   <param>.exp_avg      Adam's first moment   (only for models that train)
//   <param>.exp_avg_sq   Adam's second moment
//
// and __metadata__ (all strings): "format": "txc-checkpoint", "model",
// "step" (updates taken), "seed", "epoch" and "batch_in_epoch" (the data
// position of the next step), "batch_size" (the row cap with
// "max_tokens", which is present only for token batches), "update_freq" and
// "ranks" (the --update-freq and the number of ranks that trained it;
// 1 when absent), "min_freq", "data" (the TSV
// path), "data_fnv1a64" (its content hash, hex) and "tokenizer" (the
// tokenizer's JSON, Tokenizer.h). With train --ema the average of every
// parameter follows as "__ema.<param>", with "ema_decay" (Ema.h). With
// train --valid the best validation so far follows (what --keep-best and
// --patience continue from after --resume, Validation.h): "valid" and
// "valid_fnv1a64" (the --valid file and its content hash), "best_by"
// ("loss" or "bleu"), "best_step", "best_loss", "best_accuracy",
// "best_bleu" (the numbers printed, %.17g), a classifier's "best_macro_f1",
// and "valid_since_best". Everything
// in it is a function of the run's inputs, so two runs that did the same
// work write byte-identical files.
//
// The tokenizer lives inside the checkpoint so the two can only change
// together: one file, one rename. `train` also writes a copy beside it
// (CKPT.tokenizer.json, after the checkpoint) for other tools; the driver
// reads the copy only for checkpoints written before the tokenizer moved
// inside (they have no "tokenizer" key), and refuses a --tokenizer file
// that differs from the one inside.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_CHECKPOINT_H
#define TXRT_DRIVER_CHECKPOINT_H

#include "core/ModelInfo.h"
#include "core/Parameters.h"
#include "formats/Safetensors.h"
#include "data/LabeledText.h"
#include "data/Tokenizer.h"

#include <cmath>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace txrt::driver {

/// train --valid's best validation so far and the validations since it.
/// What --keep-best and --patience compare (--best-by): BLEU (higher is
/// better; seq2seq), the validation loss (lower), or the accuracy (higher).
enum class BestBy { Bleu, Loss, Accuracy };
/// "bleu", "loss", "accuracy": the --best-by value and __metadata__ best_by.
const char *bestByName(BestBy by);
/// Parses bestByName's values; nullopt for anything else.
std::optional<BestBy> parseBestBy(std::string_view name);

struct ValidationRecord {
  std::string validPath;  ///< --valid, as given
  uint64_t validHash = 0; ///< its content (fnv1a64)
  BestBy by = BestBy::Bleu; ///< --best-by
  int64_t bestStep = 0;
  double bestLoss = 0, bestAccuracy = 0, bestBleu = 0;
  /// A classifier's best macro-F1 ("best_macro_f1"; NaN for other kinds
  /// and in older checkpoints).
  double bestMacroF1 = NAN;
  int64_t sinceBest = 0; ///< validations after the best, none better
  /// The best of the validations on the --valid-every schedule, which
  /// --patience counts from, when it is not the best above (that one came
  /// at a run's end or a stop: "patience_best_*"; absent: the same; 0:
  /// none yet).
  std::optional<int64_t> patienceBestStep;
  double patienceBestLoss = 0, patienceBestAccuracy = 0, patienceBestBleu = 0;
};

/// Where a training run stands, as a checkpoint records it.
struct TrainingPosition {
  int64_t step = 0;         ///< updates taken so far
  uint64_t seed = 0;        ///< --seed of the run
  int64_t epoch = 0;        ///< data position of the next update
  int64_t batchInEpoch = 0;
  /// The step `epoch` and `batchInEpoch` were recorded at, where `run`
  /// trained steps after it on its own inputs (they name that step's next
  /// batch; train --resume takes the batch of `step` + 1 in its order).
  std::optional<int64_t> dataPositionStep;
  /// The epoch (0-based) of the next update when a run cut it otherwise in
  /// its middle (a resume with another --batch, ...): the examples it took
  /// follow from no one cut, so a later change's counts are a lower bound.
  /// Kept while the epoch lasts.
  std::optional<int64_t> cutChangedInEpoch;
  /// With cutChangedInEpoch: which examples the epoch has trained on so
  /// far (one entry each), which no one cut gives; "epoch_seen" in the
  /// metadata, as hex digits of 4 examples each.
  std::vector<char> epochSeen;
  /// A --max-tokens run saved by a txc whose length-sorting windows were
  /// 16 x the row bound (no "token_windows" in the metadata): this build's
  /// windows of 16 token budgets give that run other batches.
  bool rowTokenWindows = false;
  int64_t batchSize = 0;
  int64_t maxTokens = 0; ///< --max-tokens (0: fixed rows of batchSize)
  int64_t updateFreq = 1; ///< --update-freq of the run that wrote it
  int64_t ranks = 1;      ///< its number of ranks (mpirun -np)
  /// The CPU kernel threads of the run that wrote it (--threads; 0: not
  /// recorded, as in older checkpoints): another count sums in other
  /// pieces, which train --resume on the CPU notes.
  int64_t threads = 0;
  int64_t minFreq = 1;
  std::string dataPath;
  uint64_t dataHash = 0;
  /// Language models: the length of the --text blocks (0: not recorded,
  /// as in older checkpoints and other kinds).
  int64_t block = 0;
  /// The txc --precision of the executable that wrote it ("fp32", "bf16";
  /// empty in older checkpoints). saveCheckpoint writes the model's.
  std::string precision;
  /// The config and optimizer of the model that wrote it (__metadata__
  /// "config", its JSON object, and "optimizer", describeOptimizer's text;
  /// empty in older checkpoints): train --resume notes a model compiled
  /// otherwise. Each config value as compact JSON, in the model's order.
  std::vector<std::pair<std::string, std::string>> config;
  std::string optimizer;
  /// txc's hash of the entries that do not train (__metadata__
  /// "inference_fingerprint"; empty in older checkpoints).
  std::string inferenceFingerprint;
  /// recordedSizeConfigs: config items that sized entry inputs.
  std::vector<std::string> sizeConfigs;
  /// With --valid, once a validation ran (absent in older checkpoints).
  std::optional<ValidationRecord> validation;
  /// The loss curve as its file held it at the save (__metadata__
  /// "loss_curve", "STEP:HASH"; absent without one and in older
  /// checkpoints): its rows through `curveThrough` have the fingerprint
  /// `curveHash` (lossCurveFingerprint). No file name: checkpoints of one
  /// run saved under two names stay byte-identical. A resume checks the
  /// curve it continues against it.
  std::optional<int64_t> curveThrough;
  uint64_t curveHash = 0;
  /// The step whose validation a stop signal abandoned (__metadata__
  /// "valid_pending"): a resume from that step runs it first, as the
  /// uninterrupted run did.
  std::optional<int64_t> validationPending;
};

/// A model's config as TrainingPosition::config holds it.
std::vector<std::pair<std::string, std::string>>
modelConfigRecord(const ModelInfo &model);

/// The content hash of the data a checkpoint was trained on (its
/// __metadata__ "data_fnv1a64"), or nullopt.
std::optional<uint64_t> recordedDataHash(const SafetensorsReader &file);

/// The config `file` records (its __metadata__ "config"; key and JSON
/// text), empty when it records none; InputError when it is not a JSON
/// object.
std::vector<std::pair<std::string, std::string>>
recordedConfig(const SafetensorsReader &file);

/// Why a checkpoint with the same config, tensors and precision records
/// another inference fingerprint than the executable: for notes.
std::string describeProgramChange();

/// Whether `file`, written at `model`'s precision, records another
/// inference fingerprint (the same config then means an edited spec,
/// --no-fuse or another txc); false when either has none.
bool anotherInferenceProgram(const SafetensorsReader &file,
                             const ModelInfo &model);

/// Whether `file` records the inference fingerprint `model` has
/// (ModelAbi.h), nullopt when either has none (an older txc or driver).
std::optional<bool> sameInferenceFingerprint(const SafetensorsReader &file,
                                             const ModelInfo &model);

/// How `model`'s config differs from a checkpoint's (`saved`):
/// `changes` lists "key = now (was then)", "key = now (new)" and "key (was
/// then) is gone"; `bounds` the changed, new or gone values that are dim
/// bounds or sizes of entry inputs (here, or in `savedSizes`, the
/// checkpoint's "size_configs": a batch written `dim B <= 8` in one build
/// and `config B = 4` in the other): they limit sizes, not what the model
/// computes, apart; `flags` the txc options that build the trained model
/// again: this executable's compile flags with the changed values (" -D
/// d=16 -D heads=2"), "" when nothing changed or an item the checkpoint
/// records is gone from the spec (no flag builds that model); `keys` the
/// keys `changes` lists.
struct ConfigChanges {
  std::string changes, bounds, flags;
  std::vector<std::string> keys;
};
ConfigChanges describeConfigChanges(
    const std::vector<std::pair<std::string, std::string>> &saved,
    const ModelInfo &model, const std::vector<std::string> &savedSizes = {});

/// The config items that sized entry inputs in the model that wrote `file`
/// (__metadata__ "size_configs"), empty when it records none.
std::vector<std::string> recordedSizeConfigs(const SafetensorsReader &file);

/// Limits on a checkpoint's training position (a corrupt or hand-edited
/// file must not overflow the step arithmetic): the flags' own limit.
constexpr int64_t kMaxTrainingCount = int64_t(1) << 40;
/// The most micro-batches an update takes (--update-freq, and a
/// checkpoint's update_freq: a hand-edited 1e9 grew memory until the
/// process was killed).
constexpr int64_t kMaxUpdateFreq = int64_t(1) << 16;

/// The tokenizer copy and loss-curve files beside a checkpoint.
constexpr const char *kTokenizerSuffix = ".tokenizer.json";
constexpr const char *kLossCurveSuffix = ".loss.csv";
/// A subword tokenizer's SentencePiece model (also inside the checkpoint).
constexpr const char *kSentencePieceSuffix = ".spm.model";
/// train --keep-best: the checkpoint with the best validation score.
constexpr const char *kBestCheckpointSuffix = ".best.safetensors";

class WeightAverage;

/// Writes params and moments (when the model has them) with `position` and
/// `tokenizer`, `average` (train --ema, Ema.h: its host copy, brought back
/// from the device first when it is behind) and a classifier's `labels`
/// (__metadata__ "labels", the CKPT.labels.json text) when given.
void saveCheckpoint(const std::string &path, const ModelInfo &model,
                    const ParameterArena &params,
                    const TrainingPosition &position,
                    const Tokenizer &tokenizer,
                    WeightAverage *average = nullptr,
                    const LabelSet *labels = nullptr);

/// Whether `file` is a training checkpoint (train --save, run --save after
/// a train_step entry): its __metadata__ "format" is "txc-checkpoint".
bool isTrainingCheckpoint(const SafetensorsReader &file);

/// The training checkpoint at `path`, or nullptr (no regular file there,
/// or a file that is not one: parameters, gradients, something else):
/// what train --save and run --save must not write over unasked.
std::unique_ptr<SafetensorsReader>
existingTrainingCheckpoint(const std::string &path);

/// "model 'translate', step 300": which run a training checkpoint is, for
/// the messages that refuse to write over it.
std::string describeTrainingCheckpoint(const SafetensorsReader &file);

/// Throws InputError naming `file` when it is not a training checkpoint:
/// --resume checks it first, before the tokenizer it would look for there.
void requireTrainingCheckpoint(const SafetensorsReader &file);

/// The training position a training checkpoint's metadata records (step,
/// seed, data position, ...); throws InputError naming the metadata key
/// (missing, not a number, out of range) or when `file` is not one.
TrainingPosition readTrainingPosition(const SafetensorsReader &file);

/// The step a training checkpoint's metadata records, or none when it
/// records none or an invalid one.
std::optional<int64_t> recordedStep(const SafetensorsReader &file);

/// Loads params and moments for --resume; throws InputError naming the
/// tensor (missing, wrong dtype or shape, extra, a non-finite value) or the
/// metadata key (missing, not a number, out of range) before touching
/// `params` when the file does not fit the model.
TrainingPosition loadCheckpoint(const SafetensorsReader &file,
                                const ModelInfo &model, ParameterArena &params);
TrainingPosition loadCheckpoint(const std::string &path, const ModelInfo &model,
                                ParameterArena &params);

/// The --block a language model's checkpoint records (0: none), read
/// before the data are: a resumed run cuts its text as the checkpoint's did.
int64_t recordedBlock(const SafetensorsReader &file);

/// Parameters from elsewhere (`export`, a PyTorch state_dict saved as
/// safetensors): every parameter is checked as --load checks it (missing,
/// extra, dtype, shape, non-finite; Adam moments in the file are ignored),
/// then the moments are zeroed: a run from step 0 on these weights. Of a
/// train --ema checkpoint the weight average, as eval and export take it,
/// unless `raw` (--no-ema); the note saying which goes to `notes` when
/// given.
void initializeFromWeights(const SafetensorsReader &file,
                           const ModelInfo &model, ParameterArena &params,
                           bool raw, std::ostream *notes);

/// The __metadata__ of a parameters-only file (export, run --save of an
/// entry that does not take Adam's step): `format`, the model's name, and
/// its config, inference fingerprint and size configs, so that a build with
/// another config (heads) that the tensors still fit says so on load, as
/// for a training checkpoint (it loaded without a word).
SafetensorsMetadata parametersMetadata(const ModelInfo &model,
                                       const std::string &format);

/// Writes the parameters alone, named as the model names them, with
/// parametersMetadata(model, "pt") ("pt" is what PyTorch's safetensors
/// writer puts there), atomically.
void exportParameters(const std::string &path, const ModelInfo &model,
                      const ParameterArena &params);

/// The tokenizer stored in a checkpoint's __metadata__, nullopt for files
/// without one; InputError when it is malformed.
std::optional<Tokenizer> checkpointTokenizer(const SafetensorsReader &file);

/// The label set stored in a classifier checkpoint's __metadata__, nullopt
/// for files without one; InputError when it is malformed.
std::optional<LabelSet> checkpointLabels(const SafetensorsReader &file);

/// "ckpt.safetensors" -> "ckpt" + suffix ("ckpt.tokenizer.json"); a path
/// without the .safetensors extension gets the suffix appended. A symlink
/// is followed: the files beside the checkpoint a save replaces.
/// Copies the file `from` to `to` (written atomically, 64 MiB at a time).
void copyCheckpointFile(const std::string &from, const std::string &to);

/// train --keep-last: CKPT.step-N.safetensors beside the checkpoint at
/// `savePath`, just saved at `step`, as a hard link to it (the next save
/// replaces the name, not the file) or, where the file system has none, a
/// copy; then removes all but the `keepLast` latest such files of steps up
/// to `step` (a later step's file, left by a run this one resumed before,
/// stays).
void keepStepCheckpoint(const std::string &savePath, int64_t step,
                        int64_t keepLast);

/// The CKPT.step-N.safetensors files beside the checkpoint at `savePath`,
/// as (N, path), the latest first.
std::vector<std::pair<int64_t, std::string>>
stepCheckpoints(const std::string &savePath);

std::string checkpointSibling(const std::string &checkpointPath,
                              const std::string &suffix);

/// 64-bit FNV-1a of a file's bytes, for "data_fnv1a64".
std::string hexHash(uint64_t hash);

} // namespace txrt::driver

#endif // TXRT_DRIVER_CHECKPOINT_H
