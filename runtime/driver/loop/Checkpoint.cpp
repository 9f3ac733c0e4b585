//===- Checkpoint.cpp - training checkpoints: params, moments, position ---===//
//
// Every mismatch between a checkpoint and the model is collected first and
// reported together (at most kMaxReportedProblems lines), before any byte
// of the arena changes.
//
//===----------------------------------------------------------------------===//
#include "loop/Checkpoint.h"
#include "core/Error.h"
#include "core/Optimizer.h"
#include "formats/Json.h"
#include "loop/Ema.h"
#include "loop/FiniteCheck.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <sstream>

namespace txrt::driver {

const char *bestByName(BestBy by) {
  switch (by) {
  case BestBy::Loss:
    return "loss";
  case BestBy::Accuracy:
    return "accuracy";
  case BestBy::Bleu:
    break;
  }
  return "bleu";
}

std::optional<BestBy> parseBestBy(std::string_view name) {
  for (BestBy by : {BestBy::Bleu, BestBy::Loss, BestBy::Accuracy})
    if (name == bestByName(by))
      return by;
  return std::nullopt;
}

namespace {

constexpr const char *kFormat = "txc-checkpoint";
constexpr const char *kTokenizerKey = "tokenizer";
constexpr const char *kConfigKey = "config";
constexpr const char *kInferenceFingerprintKey = "inference_fingerprint";
constexpr const char *kOptimizerKey = "optimizer";
constexpr const char *kLabelsKey = "labels";

template <typename T>
T metadataInteger(const SafetensorsReader &file, const std::string &key,
                  int base = 10, T maximum = std::numeric_limits<T>::max()) {
  const std::string *text = file.metadataValue(key);
  T value{};
  if (!text)
    throw InputError("'" + file.path() +
                     "' is not a training checkpoint: its __metadata__ has "
                     "no '" +
                     key + "' (train --save writes one)");
  auto result =
      std::from_chars(text->data(), text->data() + text->size(), value, base);
  if (result.ec != std::errc() || result.ptr != text->data() + text->size())
    throw InputError("'" + file.path() + "' has an invalid __metadata__ '" +
                     key + "': '" + *text + "'");
  if (value > maximum)
    throw InputError("'" + file.path() + "' has an invalid __metadata__ '" +
                     key + "': " + *text + " is more than " +
                     std::to_string(maximum));
  return value;
}

double metadataNumber(const SafetensorsReader &file, const std::string &key) {
  const std::string *text = file.metadataValue(key);
  if (!text)
    throw InputError("'" + file.path() + "' has no __metadata__ '" + key +
                     "' beside 'best_step'");
  // A validation's loss may be NaN (weights that give NaN logits on a
  // validation text): "nan", and "-nan" as files before 2026-12-02 wrote
  // it, which every command then refused.
  if (*text == "nan" || *text == "-nan")
    return NAN;
  if (*text == "inf" || *text == "-inf")
    return *text == "inf" ? INFINITY : -INFINITY;
  char *end = nullptr;
  double value = std::strtod(text->c_str(), &end);
  if (text->empty() || *end != '\0' || !std::isfinite(value))
    throw InputError("'" + file.path() + "' has an invalid __metadata__ '" +
                     key + "': '" + *text + "'");
  return value;
}

std::string formatNumber(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

/// The "best_*" keys, when "best_step" is there.
std::optional<ValidationRecord>
loadValidationRecord(const SafetensorsReader &file) {
  if (!file.metadataValue("best_step"))
    return std::nullopt;
  ValidationRecord record;
  record.bestStep =
      metadataInteger<int64_t>(file, "best_step", 10, kMaxTrainingCount);
  record.sinceBest =
      metadataInteger<int64_t>(file, "valid_since_best", 10, kMaxTrainingCount);
  record.validHash = metadataInteger<uint64_t>(file, "valid_fnv1a64", 16);
  if (const std::string *valid = file.metadataValue("valid"))
    record.validPath = *valid;
  const std::string *by = file.metadataValue("best_by");
  std::optional<BestBy> parsed = by ? parseBestBy(*by) : std::nullopt;
  if (!parsed)
    throw InputError("'" + file.path() +
                     "' has an invalid __metadata__ 'best_by': " +
                     (by ? "'" + *by + "'" : std::string("missing")) +
                     " (expected loss, accuracy or bleu)");
  record.by = *parsed;
  record.bestLoss = metadataNumber(file, "best_loss");
  record.bestAccuracy = metadataNumber(file, "best_accuracy");
  record.bestBleu = metadataNumber(file, "best_bleu");
  if (file.metadataValue("best_macro_f1"))
    record.bestMacroF1 = metadataNumber(file, "best_macro_f1");
  if (file.metadataValue("patience_best_step")) {
    record.patienceBestStep = metadataInteger<int64_t>(
        file, "patience_best_step", 10, kMaxTrainingCount);
    record.patienceBestLoss = metadataNumber(file, "patience_best_loss");
    record.patienceBestAccuracy =
        metadataNumber(file, "patience_best_accuracy");
    record.patienceBestBleu = metadataNumber(file, "patience_best_bleu");
  }
  return record;
}

/// The model's config, inference fingerprint and size configs, as every
/// file of weights records them (a training checkpoint, and a
/// parameters-only file: parametersMetadata).
void appendModelRecord(SafetensorsMetadata &metadata, const ModelInfo &model) {
  Json config = Json::object();
  for (const auto &[key, value] : modelConfigRecord(model))
    config[key] = parseJson(value);
  metadata.push_back({kConfigKey, toJson(config)});
  if (!model.inferenceFingerprint.empty())
    metadata.push_back({kInferenceFingerprintKey, model.inferenceFingerprint});
  if (!model.sizeConfigs.empty()) {
    Json sizes = Json::array();
    for (const std::string &name : model.sizeConfigs)
      sizes.push_back(name);
    metadata.push_back({"size_configs", toJson(sizes)});
  }
}

/// `marks` (one entry per example, 0 or 1) as "N:hex": N entries, 4 a hex
/// digit, the first in the digit's low bit.
std::string encodeMarks(const std::vector<char> &marks) {
  std::string hex;
  for (size_t i = 0; i < marks.size(); i += 4) {
    int nibble = 0;
    for (size_t b = 0; b < 4 && i + b < marks.size(); ++b)
      nibble |= (marks[i + b] ? 1 : 0) << b;
    hex += "0123456789abcdef"[nibble];
  }
  return std::to_string(marks.size()) + ":" + hex;
}

/// encodeMarks' inverse; empty when `text` is not of its form.
std::vector<char> decodeMarks(const std::string &text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos || colon == 0 || colon > 12 ||
      !std::all_of(text.begin(), text.begin() + long(colon),
                   [](char c) { return c >= '0' && c <= '9'; }))
    return {};
  const size_t count = size_t(std::stoull(text.substr(0, colon)));
  const std::string_view hex = std::string_view(text).substr(colon + 1);
  if (hex.size() != (count + 3) / 4)
    return {};
  std::vector<char> marks(count, 0);
  for (size_t d = 0; d < hex.size(); ++d) {
    const char c = hex[d];
    const int nibble = c >= '0' && c <= '9'   ? c - '0'
                       : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                              : -1;
    if (nibble < 0)
      return {};
    for (size_t b = 0; b < 4 && 4 * d + b < count; ++b)
      marks[4 * d + b] = char((nibble >> b) & 1);
  }
  return marks;
}

} // namespace

std::string hexHash(uint64_t hash) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx",
                static_cast<unsigned long long>(hash));
  return text;
}

void saveCheckpoint(const std::string &path, const ModelInfo &model,
                    const ParameterArena &params,
                    const TrainingPosition &position,
                    const Tokenizer &tokenizer, WeightAverage *average,
                    const LabelSet *labels) {
  std::vector<SafetensorsTensorView> views;
  for (const ParamInfo &info : model.params) {
    views.push_back({info.name, DType::F32, info.shape, params.param(info)});
    if (!info.hasTrainingState())
      continue;
    views.push_back({info.name + kExpAvgSuffix, DType::F32, info.shape,
                     params.expAvg(info)});
    views.push_back({info.name + kExpAvgSqSuffix, DType::F32, info.shape,
                     params.expAvgSq(info)});
  }
  SafetensorsMetadata metadata = {
      {"format", kFormat},
      {"model", model.model},
      {"step", std::to_string(position.step)},
      {"seed", std::to_string(position.seed)},
      {"epoch", std::to_string(position.epoch)},
      {"batch_in_epoch", std::to_string(position.batchInEpoch)},
      {"batch_size", std::to_string(position.batchSize)},
      {"update_freq", std::to_string(position.updateFreq)},
      {"ranks", std::to_string(position.ranks)},
      {"min_freq", std::to_string(position.minFreq)},
      {"data", position.dataPath},
      {"data_fnv1a64", hexHash(position.dataHash)},
  };
  // run --save of a train_step entry may have no tokenizer (ids in, no
  // text): then the file holds none rather than an empty, invalid one.
  if (tokenizer.source.size() > 0)
    metadata.push_back({kTokenizerKey, tokenizer.toJson()});
  if (position.maxTokens) {
    metadata.push_back({"max_tokens", std::to_string(position.maxTokens)});
    metadata.push_back({"token_windows", "budgets"});
  }
  if (position.dataPositionStep)
    metadata.push_back(
        {"data_position_step", std::to_string(*position.dataPositionStep)});
  if (position.cutChangedInEpoch &&
      *position.cutChangedInEpoch == position.epoch) {
    metadata.push_back({"cut_changed_in_epoch",
                        std::to_string(*position.cutChangedInEpoch)});
    if (!position.epochSeen.empty())
      metadata.push_back({"epoch_seen", encodeMarks(position.epochSeen)});
  }
  if (position.threads > 0)
    metadata.push_back({"threads", std::to_string(position.threads)});
  if (position.block)
    metadata.push_back({"block", std::to_string(position.block)});
  metadata.push_back({"precision", model.precision});
  appendModelRecord(metadata, model);
  if (model.optimizer)
    metadata.push_back({kOptimizerKey, describeOptimizer(*model.optimizer)});
  if (labels)
    metadata.push_back({kLabelsKey, labels->toJson()});
  if (position.validationPending)
    metadata.push_back(
        {"valid_pending", std::to_string(*position.validationPending)});
  if (position.curveThrough)
    metadata.push_back({"loss_curve", std::to_string(*position.curveThrough) +
                                          ":" + hexHash(position.curveHash)});
  if (const std::optional<ValidationRecord> &record = position.validation) {
    metadata.push_back({"valid", record->validPath});
    metadata.push_back({"valid_fnv1a64", hexHash(record->validHash)});
    metadata.push_back({"best_by", bestByName(record->by)});
    metadata.push_back({"best_step", std::to_string(record->bestStep)});
    metadata.push_back({"best_loss", formatNumber(record->bestLoss)});
    metadata.push_back({"best_accuracy", formatNumber(record->bestAccuracy)});
    metadata.push_back({"best_bleu", formatNumber(record->bestBleu)});
    if (!std::isnan(record->bestMacroF1))
      metadata.push_back({"best_macro_f1", formatNumber(record->bestMacroF1)});
    metadata.push_back({"valid_since_best", std::to_string(record->sinceBest)});
    if (record->patienceBestStep) {
      metadata.push_back(
          {"patience_best_step", std::to_string(*record->patienceBestStep)});
      metadata.push_back(
          {"patience_best_loss", formatNumber(record->patienceBestLoss)});
      metadata.push_back({"patience_best_accuracy",
                          formatNumber(record->patienceBestAccuracy)});
      metadata.push_back(
          {"patience_best_bleu", formatNumber(record->patienceBestBleu)});
    }
  }
  if (average) {
    for (SafetensorsTensorView &view : average->views())
      views.push_back(std::move(view));
    metadata.push_back({kEmaDecayKey, formatDecay(average->decay())});
  }
  writeSafetensors(path, views, metadata);
}

std::vector<std::pair<std::string, std::string>>
modelConfigRecord(const ModelInfo &model) {
  std::vector<std::pair<std::string, std::string>> record;
  for (const ConfigValue &value : model.config)
    record.push_back({value.key, toJson(parseJson(value.json))});
  return record;
}

std::optional<uint64_t> recordedDataHash(const SafetensorsReader &file) {
  if (!file.metadataValue("data_fnv1a64"))
    return std::nullopt;
  try {
    return metadataInteger<uint64_t>(file, "data_fnv1a64", 16);
  } catch (const InputError &) {
    return std::nullopt; // --resume's own checks name a bad value
  }
}

std::vector<std::pair<std::string, std::string>>
recordedConfig(const SafetensorsReader &file) {
  std::vector<std::pair<std::string, std::string>> record;
  const std::string *config = file.metadataValue(kConfigKey);
  if (!config)
    return record;
  Json object;
  try {
    object = parseJson(*config);
  } catch (const JsonError &) {
  }
  if (!object.is_object())
    throw InputError("'" + file.path() + "' has an invalid __metadata__ '" +
                     kConfigKey + "' (not a JSON object)");
  for (const auto &[key, value] : object.items())
    record.push_back({key, toJson(value)});
  return record;
}

std::string describeProgramChange() {
  return "the same config and tensors, and txc compiled the entries that do "
         "not train to another program: the spec was edited since (an "
         "activation, a norm, an order of ops), or compiled with --no-fuse "
         "or by another txc";
}

std::optional<bool> sameInferenceFingerprint(const SafetensorsReader &file,
                                             const ModelInfo &model) {
  const std::string *recorded = file.metadataValue(kInferenceFingerprintKey);
  if (!recorded || model.inferenceFingerprint.empty())
    return std::nullopt;
  return *recorded == model.inferenceFingerprint;
}

bool anotherInferenceProgram(const SafetensorsReader &file,
                             const ModelInfo &model) {
  // Another precision also changes the fingerprint: said apart.
  const std::string *precision = file.metadataValue("precision");
  return sameInferenceFingerprint(file, model) == false &&
         (!precision || *precision == model.precision);
}

std::vector<std::string> recordedSizeConfigs(const SafetensorsReader &file) {
  std::vector<std::string> names;
  const std::string *text = file.metadataValue("size_configs");
  if (!text)
    return names;
  Json sizes;
  try {
    sizes = parseJson(*text);
  } catch (const JsonError &) {
  }
  if (sizes.is_array())
    for (const Json &name : sizes)
      if (name.is_string())
        names.push_back(name.get<std::string>());
  return names;
}

ConfigChanges describeConfigChanges(
    const std::vector<std::pair<std::string, std::string>> &saved,
    const ModelInfo &model, const std::vector<std::string> &savedSizes) {
  ConfigChanges out;
  // A dim bound, or a size of an entry input here or in the saved model.
  auto isBound = [&](const std::string &key) {
    return std::any_of(model.dims.begin(), model.dims.end(),
                       [&](const DimInfo &dim) {
                         return dim.config && *dim.config == key;
                       }) ||
           std::find(model.sizeConfigs.begin(), model.sizeConfigs.end(), key) !=
               model.sizeConfigs.end() ||
           std::find(savedSizes.begin(), savedSizes.end(), key) !=
               savedSizes.end();
  };
  auto valueOf = [](const auto &record,
                    const std::string &key) -> std::optional<std::string> {
    for (const auto &[name, value] : record)
      if (name == key)
        return value;
    return std::nullopt;
  };
  auto add = [](std::string &list, const std::string &text) {
    list += (list.empty() ? "" : ", ") + text;
  };
  // The same number written two ways is the same value: a float item of
  // integral value is 1 in checkpoints saved before metadata
  // "float_configs", 1.0 since.
  auto same = [](const std::string &a, const std::string &b) {
    if (a == b)
      return true;
    try {
      const Json x = parseJson(a), y = parseJson(b);
      return x.is_number() && y.is_number() &&
             x.get<double>() == y.get<double>();
    } catch (const JsonError &) {
      return false;
    }
  };
  const std::vector<std::pair<std::string, std::string>> current =
      modelConfigRecord(model);
  for (const auto &[key, value] : current) {
    std::optional<std::string> was = valueOf(saved, key);
    if (was && same(*was, value))
      continue;
    if (!was && isBound(key)) {
      add(out.bounds, key + " = " + value + " (new)");
    } else if (!was) {
      add(out.changes, key + " = " + value + " (new)");
      out.keys.push_back(key);
    } else if (*was != value && isBound(key)) {
      add(out.bounds, key + " = " + value + " (was " + *was + ")");
    } else if (*was != value) {
      add(out.changes, key + " = " + value + " (was " + *was + ")");
      out.flags += " -D " + key + "=" + *was;
      out.keys.push_back(key);
    }
  }
  for (const auto &[key, value] : saved)
    if (!valueOf(current, key) && isBound(key)) {
      add(out.bounds, key + " (was " + value + ") is gone");
    } else if (!valueOf(current, key)) {
      add(out.changes, key + " (was " + value + ") is gone");
      out.keys.push_back(key);
    }
  // A config item the spec no longer has: no -D builds the trained model
  // (the advice named a build that still computed another function).
  bool gone = false;
  for (const auto &[key, value] : saved)
    gone = gone || (!valueOf(current, key) && !isBound(key));
  if (gone)
    out.flags.clear();
  else if (!out.flags.empty())
    out.flags = model.compileFlagsWith(out.flags);
  return out;
}

int64_t recordedBlock(const SafetensorsReader &file) {
  if (!file.metadataValue("block"))
    return 0;
  int64_t block =
      metadataInteger<int64_t>(file, "block", 10, kMaxTrainingCount);
  if (block < 1)
    throw InputError("'" + file.path() +
                     "' has an invalid __metadata__ 'block': 0");
  return block;
}

bool isTrainingCheckpoint(const SafetensorsReader &file) {
  const std::string *format = file.metadataValue("format");
  return format && *format == kFormat;
}

std::unique_ptr<SafetensorsReader>
existingTrainingCheckpoint(const std::string &path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error))
    return nullptr;
  try {
    auto file = std::make_unique<SafetensorsReader>(path);
    return isTrainingCheckpoint(*file) ? std::move(file) : nullptr;
  } catch (const InputError &) {
    return nullptr; // not a safetensors file: no training state to lose
  }
}

std::string describeTrainingCheckpoint(const SafetensorsReader &file) {
  const std::string *step = file.metadataValue("step");
  const std::string *name = file.metadataValue("model");
  return (name ? "model '" + *name + "', " : std::string()) + "step " +
         (step ? *step : std::string("?"));
}

void requireTrainingCheckpoint(const SafetensorsReader &file) {
  if (!isTrainingCheckpoint(file))
    throw InputError("'" + file.path() +
                     "' is not a training checkpoint (its __metadata__ "
                     "'format' is not '" +
                     kFormat +
                     "'); --resume needs a file written by train (parameters "
                     "alone, as export writes them, start a new run with "
                     "--init-from)");
}

std::optional<int64_t> recordedStep(const SafetensorsReader &file) {
  if (!file.metadataValue("step"))
    return std::nullopt;
  try {
    return metadataInteger<int64_t>(file, "step");
  } catch (const InputError &) {
    return std::nullopt;
  }
}

TrainingPosition readTrainingPosition(const SafetensorsReader &file) {
  const std::string &path = file.path();
  requireTrainingCheckpoint(file);
  TrainingPosition position;
  position.step = metadataInteger<int64_t>(file, "step", 10, kMaxTrainingCount);
  position.seed = metadataInteger<uint64_t>(file, "seed");
  position.epoch =
      metadataInteger<int64_t>(file, "epoch", 10, kMaxTrainingCount);
  position.batchInEpoch =
      metadataInteger<int64_t>(file, "batch_in_epoch", 10, kMaxTrainingCount);
  position.batchSize =
      metadataInteger<int64_t>(file, "batch_size", 10, kMaxTrainingCount);
  position.minFreq =
      metadataInteger<int64_t>(file, "min_freq", 10, kMaxTrainingCount);
  if (file.metadataValue("data_position_step"))
    position.dataPositionStep = metadataInteger<int64_t>(
        file, "data_position_step", 10, kMaxTrainingCount);
  if (file.metadataValue("cut_changed_in_epoch"))
    position.cutChangedInEpoch = metadataInteger<int64_t>(
        file, "cut_changed_in_epoch", 10, kMaxTrainingCount);
  // A malformed record is ignored: the resume then counts against the
  // checkpoint's own cut.
  if (const std::string *text = file.metadataValue("epoch_seen"))
    position.epochSeen = decodeMarks(*text);
  if (file.metadataValue("max_tokens")) {
    position.maxTokens =
        metadataInteger<int64_t>(file, "max_tokens", 10, kMaxTrainingCount);
    // Missing (an older build), or a value this build does not know.
    const std::string *windows = file.metadataValue("token_windows");
    position.rowTokenWindows = !windows || *windows != "budgets";
  }
  // Written since data-parallel training; older checkpoints: one process.
  if (file.metadataValue("update_freq"))
    position.updateFreq =
        metadataInteger<int64_t>(file, "update_freq", 10, kMaxUpdateFreq);
  if (file.metadataValue("ranks"))
    position.ranks =
        metadataInteger<int64_t>(file, "ranks", 10, kMaxTrainingCount);
  if (file.metadataValue("threads"))
    position.threads =
        metadataInteger<int64_t>(file, "threads", 10, kMaxTrainingCount);
  position.dataHash = metadataInteger<uint64_t>(file, "data_fnv1a64", 16);
  if (const std::string *data = file.metadataValue("data"))
    position.dataPath = *data;
  position.block = recordedBlock(file);
  if (const std::string *precision = file.metadataValue("precision"))
    position.precision = *precision;
  position.validation = loadValidationRecord(file);
  if (file.metadataValue("valid_pending"))
    position.validationPending =
        metadataInteger<int64_t>(file, "valid_pending", 10, kMaxTrainingCount);
  if (const std::string *curve = file.metadataValue("loss_curve")) {
    const size_t colon = curve->find(':');
    int64_t through = -1;
    uint64_t hash = 0;
    const char *end = curve->data() + curve->size();
    bool valid = colon != std::string::npos;
    if (valid) {
      auto step =
          std::from_chars(curve->data(), curve->data() + colon, through);
      auto digits = std::from_chars(curve->data() + colon + 1, end, hash, 16);
      valid = step.ec == std::errc() && step.ptr == curve->data() + colon &&
              through >= 0 && digits.ec == std::errc() && digits.ptr == end &&
              end - (curve->data() + colon + 1) == 16;
    }
    if (!valid)
      throw InputError("'" + file.path() +
                       "' has an invalid __metadata__ 'loss_curve': '" +
                       *curve + "'");
    position.curveThrough = through;
    position.curveHash = hash;
  }
  position.config = recordedConfig(file);
  if (const std::string *optimizer = file.metadataValue(kOptimizerKey))
    position.optimizer = *optimizer;
  if (const std::string *fingerprint =
          file.metadataValue(kInferenceFingerprintKey))
    position.inferenceFingerprint = *fingerprint;
  position.sizeConfigs = recordedSizeConfigs(file);
  if (position.step < 0 || position.batchSize < 1 || position.minFreq < 1 ||
      position.epoch < 0 || position.batchInEpoch < 0 ||
      position.updateFreq < 1 || position.ranks < 1)
    throw InputError("'" + path + "' has an invalid training position (step " +
                     std::to_string(position.step) + ", epoch " +
                     std::to_string(position.epoch) + ", batch_in_epoch " +
                     std::to_string(position.batchInEpoch) + ", batch_size " +
                     std::to_string(position.batchSize) + ", min_freq " +
                     std::to_string(position.minFreq) + ", update_freq " +
                     std::to_string(position.updateFreq) + ", ranks " +
                     std::to_string(position.ranks) + ")");
  return position;
}

TrainingPosition loadCheckpoint(const SafetensorsReader &file,
                                const ModelInfo &model,
                                ParameterArena &params) {
  const std::string &path = file.path();
  requireTrainingCheckpoint(file);
  const std::string *name = file.metadataValue("model");
  if (name && *name != model.model)
    throw InputError("'" + path + "' is a checkpoint of model '" + *name +
                     "', not of '" + model.model + "'");
  std::vector<std::string> problems = checkCheckpointAgainstModel(file, model);
  for (const ParamInfo &info : model.params) {
    if (!info.hasTrainingState())
      continue;
    for (const char *suffix : {kExpAvgSuffix, kExpAvgSqSuffix}) {
      std::string moment = info.name + suffix;
      const SafetensorsEntry *entry = file.find(moment);
      if (!entry)
        problems.push_back("tensor '" + moment + "' is missing from '" + path +
                           "' (the model expects F32 " +
                           formatShape(info.shape) + ")");
      else if (entry->dtype != "F32" || entry->shape != info.shape)
        problems.push_back("tensor '" + moment + "' is " + entry->dtype + " " +
                           formatShape(entry->shape) + " in '" + path +
                           "' but the model expects F32 " +
                           formatShape(info.shape));
    }
  }
  if (!problems.empty())
    throwLoadProblems(problems, path, model);

  TrainingPosition position = readTrainingPosition(file);

  // The mismatch checks above ran before any byte of the arena changed; a
  // non-finite value is found while reading, and the error ends the run.
  auto readTensor = [&](const std::string &name, float *destination) {
    const SafetensorsEntry &entry = *file.find(name);
    file.read(entry, destination);
    checkFinite(destination, int64_t(entry.end - entry.begin) / 4, entry.shape,
                "tensor '" + name + "' in '" + path + "'");
  };
  for (const ParamInfo &info : model.params) {
    readTensor(info.name, params.param(info));
    if (!info.hasTrainingState())
      continue;
    readTensor(info.name + kExpAvgSuffix, params.expAvg(info));
    readTensor(info.name + kExpAvgSqSuffix, params.expAvgSq(info));
    // A mean of squares: a negative one (an edited or damaged file) made
    // sqrt(v) NaN or, near 0, a step many times lr.
    checkNonNegative(params.expAvgSq(info), info.numElements, info.shape,
                     "tensor '" + info.name + kExpAvgSqSuffix + "' in '" +
                         path + "' (Adam's second moment)");
    std::fill(params.gradient(info), params.gradient(info) + info.numElements,
              0.0f);
  }
  return position;
}

TrainingPosition loadCheckpoint(const std::string &path, const ModelInfo &model,
                                ParameterArena &params) {
  return loadCheckpoint(SafetensorsReader(path), model, params);
}

void initializeFromWeights(const SafetensorsReader &file,
                           const ModelInfo &model, ParameterArena &params,
                           bool raw, std::ostream *notes) {
  std::ostringstream unused;
  loadWeightsForInference(file, model, params, raw, notes ? *notes : unused,
                          WeightsUse::Training);
  params.clearTrainingState();
}

SafetensorsMetadata parametersMetadata(const ModelInfo &model,
                                       const std::string &format) {
  SafetensorsMetadata metadata = {{"format", format}, {"model", model.model}};
  appendModelRecord(metadata, model);
  return metadata;
}

void exportParameters(const std::string &path, const ModelInfo &model,
                      const ParameterArena &params) {
  params.save(path, parametersMetadata(model, "pt"));
}

std::optional<Tokenizer> checkpointTokenizer(const SafetensorsReader &file) {
  const std::string *text = file.metadataValue(kTokenizerKey);
  if (!text)
    return std::nullopt;
  return Tokenizer::fromJson(*text, "__metadata__ '" +
                                        std::string(kTokenizerKey) + "' of '" +
                                        file.path() + "'");
}

std::optional<LabelSet> checkpointLabels(const SafetensorsReader &file) {
  const std::string *text = file.metadataValue(kLabelsKey);
  if (!text)
    return std::nullopt;
  return LabelSet::fromJson(*text, "__metadata__ '" + std::string(kLabelsKey) +
                                       "' of '" + file.path() + "'");
}

void copyCheckpointFile(const std::string &from, const std::string &to) {
  BinaryFile source(from);
  AtomicFileWriter writer(to);
  std::vector<char> chunk(std::min<uint64_t>(source.size(), 64ull << 20));
  for (uint64_t offset = 0; offset < source.size(); offset += chunk.size()) {
    size_t bytes =
        size_t(std::min<uint64_t>(chunk.size(), source.size() - offset));
    source.readAt(offset, chunk.data(), bytes);
    writer.write(chunk.data(), bytes);
  }
  writer.commit();
}

std::vector<std::pair<int64_t, std::string>>
stepCheckpoints(const std::string &savePath) {
  namespace fs = std::filesystem;
  const std::string suffix = ".safetensors";
  const fs::path stem(checkpointSibling(savePath, ".step-"));
  const std::string prefix = stem.filename().string();
  fs::path directory = stem.parent_path();
  if (directory.empty())
    directory = ".";
  std::vector<std::pair<int64_t, std::string>> steps;
  std::error_code ec;
  for (const fs::directory_entry &entry :
       fs::directory_iterator(directory, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= prefix.size() + suffix.size() ||
        name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string digits =
        name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (digits.empty() || digits.size() > 18 ||
        digits.find_first_not_of("0123456789") != std::string::npos ||
        (digits.size() > 1 && digits[0] == '0'))
      continue;
    steps.push_back({std::stoll(digits), entry.path().string()});
  }
  // Latest first.
  std::sort(steps.begin(), steps.end(),
            [](const auto &a, const auto &b) { return a.first > b.first; });
  return steps;
}

void keepStepCheckpoint(const std::string &savePath, int64_t step,
                        int64_t keepLast) {
  namespace fs = std::filesystem;
  const std::string saved = followSymlinks(savePath);
  const std::string copy = checkpointSibling(
      savePath, ".step-" + std::to_string(step) + ".safetensors");
  // Linked under a temporary name, then renamed over any older file of
  // that name: a reader never sees it half there. A new name each time, as
  // AtomicFileWriter's (a fixed C.step-N.safetensors.link.tmp was removed
  // first, whatever the user kept under it).
  removeStaleTemporaries(copy);
  std::error_code ec;
  std::string temporary;
  for (int attempt = 0; attempt < 8; ++attempt) {
    temporary = temporaryNameFor(copy);
    fs::create_hard_link(saved, temporary, ec);
    if (ec != std::errc::file_exists)
      break;
  }
  if (!ec) {
    fs::rename(temporary, copy, ec);
    if (ec) {
      fs::remove(temporary);
      throw ResourceError("cannot keep '" + copy +
                          "' (--keep-last): " + ec.message());
    }
  } else {
    copyCheckpointFile(saved, copy);
  }
  int64_t kept = 0;
  for (const auto &[its, path] : stepCheckpoints(savePath))
    if (its <= step && ++kept > keepLast)
      fs::remove(path, ec);
}

std::string checkpointSibling(const std::string &checkpointPath,
                              const std::string &suffix) {
  const std::string extension = ".safetensors";
  // Beside the file a symlink leads to, which a save replaces (writing
  // through the link): `--save latest.safetensors` with latest -> run1
  // started a new latest.loss.csv beside run1's checkpoint, whose own
  // resume then refused run1.loss.csv.
  std::string stem = followSymlinks(checkpointPath);
  if (stem.size() > extension.size() &&
      stem.compare(stem.size() - extension.size(), extension.size(),
                   extension) == 0)
    stem.resize(stem.size() - extension.size());
  return stem + suffix;
}

} // namespace txrt::driver
