//===- Ema.cpp - train --ema: an exponential moving average of the weights ===//
#include "loop/Ema.h"
#include "core/Error.h"
#include "core/Memory.h"
#include "loop/Checkpoint.h"
#include "loop/FiniteCheck.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace txrt::driver {

std::string formatDecay(double decay) {
  // The shortest text that reads back as the same double (`0.9`, not
  // `0.90000000000000002`): exact in the metadata, readable in messages.
  char text[32];
  const std::to_chars_result end =
      std::to_chars(text, text + sizeof(text), decay);
  return std::string(text, end.ptr);
}

std::optional<double> checkpointDecay(const SafetensorsReader &file) {
  const std::string *text = file.metadataValue(kEmaDecayKey);
  if (!text)
    return std::nullopt;
  char *end = nullptr;
  double decay = std::strtod(text->c_str(), &end);
  if (text->empty() || *end != '\0' || !(decay > 0 && decay < 1))
    throw InputError("'" + file.path() + "' has an invalid " + kEmaDecayKey +
                     " '" + *text + "' (expected a number in (0, 1))");
  return decay;
}

void updateAverage(float *ema, const float *param, int64_t count,
                   float decay) {
  const float keep = decay, take = 1.0f - decay;
  // Two rounded products, then their rounded sum: this file is compiled
  // with -ffp-contract=off, so no FMA fuses them (EmaKernels.cuh writes the
  // same with __fmul_rn / __fadd_rn, which nvcc does not fuse either).
#pragma omp simd
  for (int64_t i = 0; i < count; ++i)
    ema[i] = keep * ema[i] + take * param[i];
}

WeightAverage::WeightAverage(const ModelInfo &model,
                             const ParameterArena &params, double decay,
                             Device *device)
    : model_(model), decay_(decay), ranges_(parameterRanges(model)),
      device_(device) {
  // The ranges back to back: where each starts in the average, then each
  // parameter by where it lies in its range.
  std::vector<int64_t> rangeStarts;
  int64_t floats = 0;
  for (const ArenaRange &range : ranges_) {
    rangeStarts.push_back(floats);
    floats += range.bytes / int64_t(sizeof(float));
  }
  for (const ParamInfo &info : model_.params) {
    auto after = std::upper_bound(ranges_.begin(), ranges_.end(), info.offset,
                                  [](int64_t offset, const ArenaRange &range) {
                                    return offset < range.offset;
                                  });
    size_t k = size_t(after - ranges_.begin()) - 1;
    starts_.push_back(rangeStarts[k] + (info.offset - ranges_[k].offset) /
                                           int64_t(sizeof(float)));
  }
  host_.resize(size_t(floats));
  if (device_)
    deviceAverage_ = static_cast<float *>(
        device_->allocate(uint64_t(bytes()), "the --ema weight average (" +
                                                 formatBytes(bytes()) + ")"));
  reset(params);
}

WeightAverage::~WeightAverage() {
  if (device_)
    device_->release(deviceAverage_);
}

float *WeightAverage::readHost() {
  if (hostStale_) {
    // The updates queued on the device end before the copy; a failure
    // names what was running.
    device_->finish("the --ema update");
    device_->toHost(host_.data(), deviceAverage_, uint64_t(bytes()));
    hostStale_ = false;
    ++copiesToHost_;
  }
  return host_.data();
}

float *WeightAverage::writeHost() {
  float *host = readHost();
  deviceStale_ = device_ != nullptr;
  return host;
}

float *WeightAverage::replaceHost() {
  hostStale_ = false;
  deviceStale_ = device_ != nullptr;
  return host_.data();
}

float *WeightAverage::onDevice() {
  if (deviceStale_) {
    device_->toDevice(deviceAverage_, host_.data(), uint64_t(bytes()));
    deviceStale_ = false;
    ++copiesToDevice_;
  }
  return deviceAverage_;
}

void WeightAverage::reset(const ParameterArena &params) {
  float *host = replaceHost();
  for (size_t i = 0; i < model_.params.size(); ++i) {
    const ParamInfo &info = model_.params[i];
    const float *param = params.param(info);
    std::copy(param, param + info.numElements, host + starts_[i]);
  }
}

void WeightAverage::update(const ParameterArena &params) {
  float *host = writeHost();
  for (size_t i = 0; i < model_.params.size(); ++i)
    updateAverage(host + starts_[i], params.param(model_.params[i]),
                  model_.params[i].numElements, float(decay_));
}

void WeightAverage::update(ParameterHome &home) {
  if (!device_) {
    update(home.read());
    return;
  }
  if (home.device() != device_)
    throw std::logic_error("WeightAverage::update: the average and the "
                           "arena are on different devices");
  const char *arena = static_cast<const char *>(home.onDevice());
  float *average = onDevice();
  // Behind from the first call on: after a failed one the host reads what
  // the device holds (or the failure), never its own older copy.
  hostStale_ = true;
  for (const ArenaRange &range : ranges_) {
    const int64_t count = range.bytes / int64_t(sizeof(float));
    device_->updateAverage(
        average, reinterpret_cast<const float *>(arena + range.offset), count,
        float(decay_));
    average += count;
  }
  ++deviceUpdates_;
}

void WeightAverage::swap(ParameterArena &params) {
  float *host = writeHost();
  for (size_t i = 0; i < model_.params.size(); ++i) {
    const ParamInfo &info = model_.params[i];
    std::swap_ranges(host + starts_[i], host + starts_[i] + info.numElements,
                     params.param(info));
  }
}

std::vector<SafetensorsTensorView> WeightAverage::views() {
  const float *host = readHost();
  std::vector<SafetensorsTensorView> views;
  for (size_t i = 0; i < model_.params.size(); ++i)
    views.push_back({kEmaPrefix + model_.params[i].name, DType::F32,
                     model_.params[i].shape, host + starts_[i]});
  return views;
}

bool hasAveragedWeights(const SafetensorsReader &file,
                        const ModelInfo &model) {
  // All or nothing: a file with some of the average (a damaged or edited
  // one) was read as having none, and predict, eval and --resume used the
  // raw weights or a new average without a word.
  const ParamInfo *missing = nullptr;
  size_t present = 0;
  for (const ParamInfo &info : model.params) {
    if (file.find(kEmaPrefix + info.name))
      ++present;
    else if (!missing)
      missing = &info;
  }
  if (present == 0 && !file.metadataValue(kEmaDecayKey))
    return false;
  if (missing)
    throw InputError(
        std::string("tensor '") + kEmaPrefix + missing->name +
        "' is missing from '" + file.path() + "' (the model expects F32 " +
        formatShape(missing->shape) + "), which holds " +
        (present ? std::to_string(present) + " of the " +
                       std::to_string(model.params.size()) +
                       " tensors of a weight average (--ema)"
                 : std::string("no weight average although its __metadata__ "
                               "has '") +
                       kEmaDecayKey + "'") +
        ": the file is damaged or was edited; use another copy");
  return !model.params.empty();
}

namespace {

/// Reads every "__ema.<param>" of `file` into `out(i)`, checked first.
template <typename Destination>
bool readAverage(const SafetensorsReader &file, const ModelInfo &model,
                 Destination out) {
  if (!hasAveragedWeights(file, model))
    return false;
  for (const ParamInfo &info : model.params) {
    const SafetensorsEntry &entry = *file.find(kEmaPrefix + info.name);
    if (entry.dtype != "F32" || entry.shape != info.shape)
      throw InputError("tensor '" + entry.name + "' is " + entry.dtype + " " +
                       formatShape(entry.shape) + " in '" + file.path() +
                       "' but the model expects F32 " +
                       formatShape(info.shape));
  }
  for (size_t i = 0; i < model.params.size(); ++i) {
    const ParamInfo &info = model.params[i];
    float *destination = out(i);
    file.read(*file.find(kEmaPrefix + info.name), destination);
    checkFinite(destination, info.numElements, info.shape,
                std::string("tensor '") + kEmaPrefix + info.name + "' in '" + file.path() +
                    "'");
  }
  return true;
}

} // namespace

bool WeightAverage::load(const SafetensorsReader &file) {
  if (!hasAveragedWeights(file, model_))
    return false;
  std::vector<float> loaded(host_.size());
  readAverage(file, model_,
              [&](size_t i) { return loaded.data() + starts_[i]; });
  replaceHost();
  host_ = std::move(loaded);
  return true;
}

bool loadAveragedWeights(const SafetensorsReader &file, const ModelInfo &model,
                         ParameterArena &params) {
  return readAverage(file, model, [&](size_t i) {
    return params.param(model.params[i]);
  });
}

void noteConfigChanges(const SafetensorsReader &file, const ModelInfo &model,
                       std::ostream &err, WeightsUse use) {
  const std::vector<std::pair<std::string, std::string>> recorded =
      recordedConfig(file);
  if (recorded.empty())
    return;
  const auto [changes, bounds, flags, keys] =
      describeConfigChanges(recorded, model, recordedSizeConfigs(file));
  if (changes.empty()) {
    // The same config: another inference program is an edited spec (or
    // --no-fuse, another txc): it loaded without a word.
    // (Sizes written as constants change the entries' types, and so the
    // fingerprint: with other bounds or sizes it tells nothing.)
    if (use != WeightsUse::TrainingEntry && bounds.empty() &&
        anotherInferenceProgram(file, model))
      err << "note: '" << file.path() << "' was trained by another program ("
          << describeProgramChange()
          << (use == WeightsUse::Inference
                  ? "): this executable's outputs may differ from that one's"
                  : "): training starts from its weights")
          << "\n";
    return;
  }
  if (use == WeightsUse::Training) {
    err << "note: '" << file.path()
        << "' was trained with another config (this model: " << changes
        << "); training starts from its weights\n";
    return;
  }
  const std::optional<bool> same = sameInferenceFingerprint(file, model);
  // The driver reads `pad` itself (it pads batches with it): that changes
  // what the entries are given, whatever they compute.
  const bool padChanged =
      std::find(keys.begin(), keys.end(), "pad") != keys.end();
  if (use == WeightsUse::Inference && same.value_or(false) && !padChanged) {
    err << "note: '" << file.path()
        << "' was trained with another config (this executable: " << changes
        << "), which changes nothing the entries that do not train compute "
           "(txc compiled them to the same program)\n";
    return;
  }
  // A checkpoint of another model whose tensors fit (a renamed spec, or
  // another spec of the same layers): the -D advice builds this spec, not
  // the one that trained it (it then failed as "a checkpoint of model").
  const std::string *trainedAs = file.metadataValue("model");
  const bool otherModel = trainedAs && *trainedAs != model.model;
  err << "warning: '" << file.path() << "' was trained "
      << (otherModel ? "as model '" + *trainedAs + "' (this executable is '" +
                           model.model + "') "
                     : std::string())
      << "with another config (this executable: " << changes
      << "): its tensors fit, but a value that shapes the model (heads, "
         "eps, a scale) makes this executable compute another function "
         "of them"
      << (flags.empty() ? std::string()
          : otherModel
              ? "; model '" + *trainedAs + "''s own spec, compiled with txc" +
                    flags + ", builds the model it trained"
              : "; txc" + flags + " builds the model it trained")
      // Without both fingerprints nothing tells which values those are
      // (in a training entry, run as it is, they all count).
      << (use == WeightsUse::Inference && !same
              ? " (values used only in training, such as dropout or warmup, "
                "change nothing here)"
              : "")
      << "\n";
}

void loadWeightsForInference(const SafetensorsReader &file,
                             const ModelInfo &model, ParameterArena &params,
                             bool raw, std::ostream &err, WeightsUse use) {
  params.load(file);
  noteConfigChanges(file, model, err, use);
  if (!hasAveragedWeights(file, model))
    return;
  if (raw) {
    err << "note: the raw weights of '" << file.path()
        << "' (--no-ema; it also holds their average)\n";
    return;
  }
  loadAveragedWeights(file, model, params);
  err << "note: the weight average (--ema) of '" << file.path()
      << "'; --no-ema for the raw weights\n";
}

} // namespace txrt::driver
