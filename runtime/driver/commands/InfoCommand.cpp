//===- InfoCommand.cpp - `PROGRAM info`: describe the compiled model ------===//
//
// A plain-text report in aligned columns, stable enough for tests to grep:
// one line per config key, dim, entry signature and parameter.
//
//===----------------------------------------------------------------------===//
#include "commands/InfoCommand.h"
#include "core/MetadataFloats.h"
#include "core/ModelRunner.h"
#include "core/Parameters.h"
#include "data/Tokenizer.h"
#include "formats/Json.h"
#include "loop/Checkpoint.h"
#include "loop/Ema.h"
#include "txrt/txrt.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace txrt::driver {

namespace {
std::string padRight(std::string text, size_t width) {
  if (text.size() < width)
    text.append(width - text.size(), ' ');
  return text;
}

std::string formatSignatures(const ModelInfo &model,
                             const std::vector<TensorSig> &sigs) {
  std::string text;
  for (const TensorSig &sig : sigs)
    text += (text.empty() ? "" : ", ") + model.formatSignature(sig);
  return text;
}

/// "role train: src @source, tgt_in @target_in", or "role none (only
/// run)"; cache inputs are counted, not listed.
std::string formatRoles(const EntryInfo &entry) {
  std::string text =
      "role " +
      (entry.role.empty() ? std::string("none (only run)") : entry.role);
  std::string inputs;
  int caches = 0;
  for (const TensorSig &sig : entry.inputs) {
    if (sig.role == "cache") {
      ++caches;
      continue;
    }
    if (!sig.role.empty())
      inputs += (inputs.empty() ? "" : ", ") + sig.name + " @" + sig.role;
  }
  if (caches)
    inputs += (inputs.empty() ? "" : ", ") + std::to_string(caches) + " @cache";
  return inputs.empty() ? text : text + ": " + inputs;
}
} // namespace

std::string modelInfoJson(const std::string &metadata) {
  Json root;
  try {
    root = parseJson(metadata);
  } catch (const JsonError &) {
    return metadata;
  }
  if (!root.is_object())
    return metadata;
  markMetadataFloats(root);
  // What the runtime linked in needs of the CPU, as info's line says: a
  // script read "cpu_features": [] of a --mcpu=x86-64 build and took it
  // for one that runs anywhere.
  Json features = Json::array();
  std::istringstream list(txrt_runtime_cpu_features());
  for (std::string feature; std::getline(list, feature, ',');)
    if (!feature.empty())
      features.push_back(feature);
  root["runtime"] = Json{{"march", txrt_runtime_arch()},
                         {"cpu_features", std::move(features)}};
  return toJson(root);
}

void printModelInfo(const ModelInfo &model, std::ostream &out) {
  out << "model          " << model.model << "\n";
  out << "source         " << (model.source.empty() ? "-" : model.source)
      << "\n";
  out << "compile flags  "
      << (model.compileFlags.empty() ? "(none)" : model.compileFlags) << "\n";
  // What the CPU needs: the model's code (txc --mcpu) and the runtime
  // linked in (its -march, CMake's TXRT_ARCH).
  const std::string runtimeFeatures = txrt_runtime_cpu_features();
  std::string codeFeatures;
  for (const std::string &feature : model.cpuFeatures)
    codeFeatures += (codeFeatures.empty() ? "" : ",") + feature;
  out << "cpu features   "
      << (codeFeatures.empty() ? std::string("(none)") : codeFeatures)
      << "; runtime -march=" << txrt_runtime_arch() << ": "
      << (runtimeFeatures.empty() ? std::string("(none)") : runtimeFeatures)
      << "\n";
  out << "precision      " << model.precision
      << (model.precision == "bf16"
              ? " (linears and attention products read bf16, accumulate f32)"
              : "")
      << "\n";
  // A CUDA executable: its target and the devices it can run on.
  const CudaSupport *cuda = cudaSupport();
  if (model.target == "cuda") {
    out << "target         cuda (--device cuda[:N]; default cuda:0)\n";
    out << "cuda devices\n";
    if (cuda)
      cuda->list(out);
    else
      out << "  none: this executable lacks the CUDA backend\n";
  }
  out << "kind           " << modelKindName(model.kind);
  if (model.kindInferred)
    out << " (roles inferred from input names; declare them with `kind` and "
           "`@role`)";
  out << "\n";
  if (!model.noKvCache.empty())
    out << "kv cache       none: each decoded token re-runs the prefix; txc "
           "derived no incremental decoding: "
        << model.noKvCache << "\n";

  out << "\nconfig\n";
  size_t keyWidth = 0;
  for (const ConfigValue &value : model.config)
    keyWidth = std::max(keyWidth, value.key.size());
  for (const ConfigValue &value : model.config)
    out << "  " << padRight(value.key, keyWidth) << " = " << value.json << "\n";

  out << "\ndims\n";
  for (const DimInfo &dim : model.dims)
    out << "  " << dim.name << " <= " << dim.bound << "\n";

  out << "\nentries\n";
  for (const EntryInfo &entry : model.entries) {
    out << "  " << entry.name << "(" << formatSignatures(model, entry.inputs)
        << ") -> (" << formatSignatures(model, entry.outputs) << ")\n";
    if (model.kind != ModelKind::None)
      out << "      " << formatRoles(entry) << "\n";
    out << "      activation arena " << formatBytes(entry.arenaBytes) << " ("
        << entry.arenaBytes << " bytes)";
    if (entry.tensorBytes > 0) {
      char saving[32];
      std::snprintf(
          saving, sizeof(saving), "%.1f%%",
          100.0 * (1.0 - double(entry.arenaBytes) / double(entry.tensorBytes)));
      out << ", unplanned tensors " << formatBytes(entry.tensorBytes)
          << ", saving " << saving;
    }
    out << "\n";
  }

  out << "\nparameters: " << model.totalParamElements() << " values in "
      << model.params.size() << " tensors, parameter arena "
      << formatBytes(model.paramArenaBytes) << " (" << model.paramArenaBytes
      << " bytes)\n";
  size_t nameWidth = 0, shapeWidth = 0;
  for (const ParamInfo &param : model.params) {
    nameWidth = std::max(nameWidth, param.name.size());
    shapeWidth = std::max(shapeWidth, formatShape(param.shape).size());
  }
  for (const ParamInfo &param : model.params)
    out << "  " << padRight(param.name, nameWidth) << "  "
        << padRight(formatShape(param.shape), shapeWidth) << "  "
        << initKindName(param.init) << "\n";
}

namespace {

/// `path` read as --resume reads it (a file that does not fit is its
/// error); InputError when it is no training checkpoint.
TrainingPosition readCheckpointForInfo(const ModelInfo &model,
                                       const SafetensorsReader &file) {
  if (!isTrainingCheckpoint(file))
    throw InputError("'" + file.path() +
                     "' is not a training checkpoint (its __metadata__ "
                     "'format' is not 'txc-checkpoint'): info --load "
                     "describes what train writes; a file of parameters "
                     "(export, run --save) is for --load of run, eval, "
                     "translate, generate and predict, and for train "
                     "--init-from");
  ParameterArena params(model);
  TrainingPosition position = loadCheckpoint(file, model, params);
  // The weight average too (read, so checked against its checksums): a
  // damaged __ema.* tensor passed info, which reads every tensor, while
  // translate and --resume refused the file.
  loadAveragedWeights(file, model, params);
  return position;
}

} // namespace

std::string describeCheckpoint(const ModelInfo &model,
                               const std::string &path) {
  SafetensorsReader file(path);
  TrainingPosition position = readCheckpointForInfo(model, file);
  std::ostringstream out;
  out << "\ncheckpoint     " << path << "\n";
  out << "  step         " << position.step;
  // A model without a kind trains through `run` on the user's batches:
  // no corpus position to name.
  if (model.kind == ModelKind::None) {
    out << " (run --load continues it: the next call is step "
        << position.step + 1 << ")\n";
  } else if (position.dataPath.empty()) {
    // Saved by `run` alone (no corpus yet): "next: batch 1 of epoch 1" read
    // as a position in data it never had.
    out << " (saved by `run` on its own inputs; train --resume starts at "
           "batch 1 of epoch 1)\n";
  } else {
    out << " (next: batch " << position.batchInEpoch + 1 << " of epoch "
        << position.epoch + 1;
    if (position.dataPositionStep)
      out << " as of step " << *position.dataPositionStep
          << "; `run` saved step " << position.step
          << " on its own inputs since, and train --resume takes step "
          << position.step + 1 << "'s batch";
    out << ")\n";
  }
  out << "  batch        ";
  if (position.maxTokens)
    out << "at most " << position.maxTokens << " padded tokens, "
        << position.batchSize << " rows\n";
  else
    out << position.batchSize << "\n";
  out << "  update-freq  " << position.updateFreq << "\n";
  out << "  ranks        " << position.ranks << "\n";
  out << "  seed         " << position.seed << "\n";
  // (A model without a kind trains on the user's batches through run:
  // no corpus, no validation.)
  if (model.kind != ModelKind::None) {
    // No data: no hash of it (fnv1a64 0000000000000000 read as one).
    out << "  data         ";
    if (position.dataPath.empty())
      out << "-\n";
    else
      out << position.dataPath << " (fnv1a64 " << hexHash(position.dataHash)
          << ")\n";
  }
  if (position.block)
    out << "  block        " << position.block << " positions (--text)\n";
  out << "  precision    ";
  if (position.precision.empty())
    out << "not recorded (a checkpoint from before txc recorded it)\n";
  else
    out << position.precision
        << (position.precision == model.precision
                ? std::string()
                : " (this executable: " + model.precision + ")")
        << "\n";
  out << "  config       ";
  const std::vector<std::pair<std::string, std::string>> config =
      recordedConfig(file);
  if (config.empty()) {
    out << "not recorded\n";
  } else {
    const auto [changes, bounds, flags, keys] =
        describeConfigChanges(config, model, recordedSizeConfigs(file));
    if (changes.empty() && bounds.empty()) {
      out << "as this executable's"
          << (anotherInferenceProgram(file, model)
                  ? " (but the entries that do not train compute another "
                    "function: an edited spec, --no-fuse or another txc)"
                  : "")
          << "\n";
    }
    if (!changes.empty()) {
      const std::optional<bool> same = sameInferenceFingerprint(file, model);
      out << "this executable: " << changes
          << (flags.empty() ? std::string()
                            : "; txc" + flags + " builds the trained model")
          << (!same   ? ""
              : *same ? " (the entries that do not train compute the same)"
                      : " (the entries that do not train compute another "
                        "function)")
          << "\n";
    }
    if (!bounds.empty())
      out << (changes.empty() ? "" : "               ")
          << "other bounds or sizes here: " << bounds << "\n";
  }
  out << "  tokenizer    ";
  if (const std::string *json = file.metadataValue("tokenizer")) {
    Tokenizer tokenizer =
        Tokenizer::fromJson(*json, "the tokenizer inside '" + path + "'");
    if (tokenizer.subwords)
      out << "inside: SentencePiece, " << tokenizer.source.size()
          << " pieces\n";
    else
      out << "inside: words, vocabularies " << tokenizer.source.size() << " / "
          << tokenizer.target.size() << ", min-freq " << tokenizer.minFreq
          << "\n";
  } else if (model.kind == ModelKind::None) {
    // eval, generate and --resume refuse a model without a kind.
    out << "none (a model without a kind: run --load continues it)\n";
  } else {
    out << "none inside (eval, generate and --resume read "
        << checkpointSibling(path, kTokenizerSuffix)
        << " beside it, or --tokenizer FILE)\n";
  }
  if (std::optional<LabelSet> labels = checkpointLabels(file)) {
    out << "  labels       inside: " << labels->size() << " (";
    for (int64_t id = 0; id < labels->size(); ++id)
      out << (id ? ", " : "") << labels->label(id);
    out << ")\n";
  }
  if (std::optional<double> decay = checkpointDecay(file))
    out << "  ema          decay " << formatDecay(*decay)
        << " (the weight average beside the weights)\n";
  if (model.kind != ModelKind::None) { // (run trains without validation)
    out << "  validation   ";
    if (const std::optional<ValidationRecord> &record = position.validation) {
      char numbers[160];
      if (!std::isnan(record->bestMacroF1)) // a classifier's
        std::snprintf(numbers, sizeof(numbers),
                      "loss %.4f, accuracy %.2f%%, macro-F1 %.4f",
                      record->bestLoss, 100.0 * record->bestAccuracy,
                      record->bestMacroF1);
      else if (model.kind != ModelKind::Seq2Seq) // no translations, no BLEU
        std::snprintf(numbers, sizeof(numbers), "loss %.4f, accuracy %.2f%%",
                      record->bestLoss, 100.0 * record->bestAccuracy);
      else
        std::snprintf(numbers, sizeof(numbers),
                      "loss %.4f, accuracy %.2f%%, BLEU %.2f", record->bestLoss,
                      100.0 * record->bestAccuracy, record->bestBleu);
      out << "best at step " << record->bestStep << " by "
          << (record->by == BestBy::Bleu ? "BLEU" : bestByName(record->by))
          << " on '" << record->validPath << "': " << numbers << "; "
          << record->sinceBest << " validation(s) since\n";
    } else {
      out << "none recorded (train --valid records the best)\n";
    }
  }
  if (position.validationPending)
    out << "  pending      the validation of step " << *position.validationPending
        << " (a stop abandoned it; train --resume with --valid runs it "
           "first)\n";
  return out.str();
}

std::string checkpointJson(const ModelInfo &model, const std::string &path) {
  SafetensorsReader file(path);
  TrainingPosition position = readCheckpointForInfo(model, file);
  Json out = Json::object();
  out["checkpoint"] = path;
  out["model"] = model.model;
  out["step"] = position.step;
  // A model without a kind trains through `run` on the user's batches:
  // no corpus position and no data, as in the text.
  // Nor has a checkpoint `run` started (no data yet): train --resume
  // starts the data at batch 1 of epoch 1.
  const bool kindless = model.kind == ModelKind::None;
  const bool noData = !kindless && position.dataPath.empty();
  out["next"] = kindless ? Json(nullptr)
                : noData ? Json{{"epoch", 1}, {"batch", 1}}
                         : Json{{"epoch", position.epoch + 1},
                                {"batch", position.batchInEpoch + 1}};
  if (position.dataPositionStep && !kindless && !noData)
    out["next"]["as_of_step"] = *position.dataPositionStep;
  out["batch_size"] = position.batchSize;
  out["max_tokens"] =
      position.maxTokens ? Json(position.maxTokens) : Json(nullptr);
  out["update_freq"] = position.updateFreq;
  out["ranks"] = position.ranks;
  out["threads"] = position.threads ? Json(position.threads) : Json(nullptr);
  out["seed"] = position.seed;
  out["data"] = kindless || noData
                    ? Json(nullptr)
                    : Json{{"path", position.dataPath},
                           {"fnv1a64", hexHash(position.dataHash)}};
  out["block"] = position.block ? Json(position.block) : Json(nullptr);
  out["precision"] =
      position.precision.empty() ? Json(nullptr) : Json(position.precision);
  const std::vector<std::pair<std::string, std::string>> config =
      recordedConfig(file);
  if (config.empty()) {
    out["config"] = nullptr;
    out["config_as_this_executable"] = nullptr;
  } else {
    Json recorded = Json::object();
    for (const auto &[key, value] : config)
      recorded[key] = parseJson(value);
    out["config"] = std::move(recorded);
    const auto [changes, bounds, flags, keys] =
        describeConfigChanges(config, model, recordedSizeConfigs(file));
    out["config_as_this_executable"] = changes.empty() && bounds.empty();
  }
  if (const std::string *json = file.metadataValue("tokenizer")) {
    Tokenizer tokenizer =
        Tokenizer::fromJson(*json, "the tokenizer inside '" + path + "'");
    if (tokenizer.subwords)
      out["tokenizer"] =
          Json{{"kind", "sentencepiece"}, {"pieces", tokenizer.source.size()}};
    else
      out["tokenizer"] = Json{{"kind", "words"},
                              {"source_size", tokenizer.source.size()},
                              {"target_size", tokenizer.target.size()},
                              {"min_freq", tokenizer.minFreq}};
  } else {
    out["tokenizer"] = nullptr;
  }
  if (std::optional<LabelSet> labels = checkpointLabels(file)) {
    Json list = Json::array();
    for (int64_t id = 0; id < labels->size(); ++id)
      list.push_back(labels->label(id));
    out["labels"] = std::move(list);
  } else {
    out["labels"] = nullptr;
  }
  std::optional<double> decay = checkpointDecay(file);
  out["ema_decay"] = decay ? Json(*decay) : Json(nullptr);
  if (const std::optional<ValidationRecord> &record = position.validation) {
    Json validation{
        {"valid", record->validPath},       {"best_by", bestByName(record->by)},
        {"best_step", record->bestStep},    {"loss", record->bestLoss},
        {"accuracy", record->bestAccuracy}, {"since_best", record->sinceBest}};
    if (!std::isnan(record->bestMacroF1))
      validation["macro_f1"] = record->bestMacroF1;
    else if (model.kind == ModelKind::Seq2Seq)
      validation["bleu"] = record->bestBleu;
    out["validation"] = std::move(validation);
  } else {
    out["validation"] = nullptr;
  }
  out["valid_pending"] = position.validationPending
                             ? Json(*position.validationPending)
                             : Json(nullptr);
  // A file name (or a path recorded in the checkpoint) need not be UTF-8:
  // its bad bytes are written as U+FFFD (it failed: "cannot write JSON").
  return toJson(out, /*replaceInvalidUtf8=*/true);
}

} // namespace txrt::driver
