//===- Ema.cpp - train --ema: an exponential moving average of the weights ===//
#include "loop/Ema.h"
#include "core/Error.h"
#include "loop/FiniteCheck.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace txrt::driver {

std::string formatDecay(double decay) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", decay);
  return text;
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
                             const ParameterArena &params, double decay)
    : model_(model), decay_(decay), tensors_(model.params.size()) {
  reset(params);
}

void WeightAverage::reset(const ParameterArena &params) {
  for (size_t i = 0; i < model_.params.size(); ++i) {
    const ParamInfo &info = model_.params[i];
    const float *param = params.param(info);
    tensors_[i].assign(param, param + info.numElements);
  }
}

void WeightAverage::update(ParameterValues params) {
  for (size_t i = 0; i < model_.params.size(); ++i)
    updateAverage(tensors_[i].data(), params.param(model_.params[i]),
                  model_.params[i].numElements, float(decay_));
}

void WeightAverage::swap(ParameterArena &params) {
  for (size_t i = 0; i < model_.params.size(); ++i)
    std::swap_ranges(tensors_[i].begin(), tensors_[i].end(),
                     params.param(model_.params[i]));
}

std::vector<SafetensorsTensorView> WeightAverage::views() const {
  std::vector<SafetensorsTensorView> views;
  for (size_t i = 0; i < model_.params.size(); ++i)
    views.push_back({kEmaPrefix + model_.params[i].name, DType::F32,
                     model_.params[i].shape, tensors_[i].data()});
  return views;
}

bool hasAveragedWeights(const SafetensorsReader &file,
                        const ModelInfo &model) {
  for (const ParamInfo &info : model.params)
    if (!file.find(kEmaPrefix + info.name))
      return false;
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
  std::vector<std::vector<float>> loaded(tensors_.size());
  for (size_t i = 0; i < loaded.size(); ++i)
    loaded[i].resize(size_t(model_.params[i].numElements));
  readAverage(file, model_, [&](size_t i) { return loaded[i].data(); });
  tensors_ = std::move(loaded);
  return true;
}

bool loadAveragedWeights(const SafetensorsReader &file, const ModelInfo &model,
                         ParameterArena &params) {
  return readAverage(file, model, [&](size_t i) {
    return params.param(model.params[i]);
  });
}

void loadWeightsForInference(const SafetensorsReader &file,
                             const ModelInfo &model, ParameterArena &params,
                             bool raw, std::ostream &err) {
  params.load(file);
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
