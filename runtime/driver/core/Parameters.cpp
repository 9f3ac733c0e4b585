//===- Parameters.cpp - the parameter arena: init, load, save -------------===//
//
// Matching a checkpoint to the model by name, with an error message per
// mismatch that names the tensor, the file and both shapes.
//
//===----------------------------------------------------------------------===//
#include "core/Parameters.h"
#include "core/Error.h"
#include "core/Init.h"
#include "core/Memory.h"
#include "formats/FileIO.h"
#include "formats/Json.h"
#include "loop/FiniteCheck.h"
#include "txrt/txrt.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

namespace txrt::driver {

ParameterArena::ParameterArena(const ModelInfo &model)
    : model_(model), buffer_(allocateBuffer(uint64_t(model.paramArenaBytes),
                                            "the parameter arena")) {}

void *ParameterArena::data() {
  if (bf16CopiesStale_) {
    char *base = static_cast<char *>(buffer_.data());
    for (const ParamInfo &info : model_.params)
      if (info.bf16Offset >= 0)
        txrt_round_to_bf16(
            info.numElements,
            reinterpret_cast<const float *>(base + info.offset),
            reinterpret_cast<txrt_bf16 *>(base + info.bf16Offset));
    bf16CopiesStale_ = false;
  }
  return buffer_.data();
}

float *ParameterArena::param(const ParamInfo &info) {
  bf16CopiesStale_ = true;
  return reinterpret_cast<float *>(static_cast<char *>(buffer_.data()) +
                                   info.offset);
}

const float *ParameterArena::param(const ParamInfo &info) const {
  return reinterpret_cast<const float *>(
      static_cast<const char *>(buffer_.data()) + info.offset);
}

namespace {

/// Whether `bytes` bytes at `data` are all 0 (reading fresh anonymous
/// memory maps the shared zero page: nothing becomes resident).
bool allZeroBytes(const void *data, size_t bytes) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  uint64_t any = 0;
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t word;
    std::memcpy(&word, p + i, 8);
    any |= word;
  }
  for (; i < bytes; ++i)
    any |= p[i];
  return any == 0;
}

} // namespace

void ParameterArena::initialize(uint64_t seed) {
  for (const ParamInfo &info : model_.params) {
    float *values = param(info);
    initializeParameter(info.init, info.shape, seed, info.name, values,
                        info.initStd);
    // A std near f32's limit (`init = normal, std = 3e38`) draws infinities:
    // said here, not as a first update that "made it non-finite".
    int64_t bad = firstNonFinite(values, info.numElements);
    if (bad >= 0) {
      std::ostringstream how;
      how << initKindName(info.init);
      if (info.init == InitKind::Normal)
        how << ", std " << info.initStd;
      throw InputError("initializing parameter '" + info.name + "' (" +
                       how.str() + ") gave " +
                       describeNonFinite(values, bad, info.shape) +
                       ": its values overflow f32; give it a smaller std in "
                       "the spec");
    }
  }
  clearTrainingState();
}

void ParameterArena::clearTrainingState() {
  for (const ParamInfo &info : model_.params) {
    if (!info.hasTrainingState())
      continue;
    // Gradients are not cleared: every training call writes them before
    // anything reads them, and leaving the region untouched keeps it out of
    // resident memory when only the fused step (train) runs. The moments
    // are written only where they are not 0 already: a fresh arena's are
    // (its pages are the kernel's zero pages until written), and a forward
    // run of `--init` made 2 x the parameters resident for nothing
    // (base.tx `run encode --init`: 764 MB against 322 MB with --load).
    for (float *moment : {expAvg(info), expAvgSq(info)})
      if (!allZeroBytes(moment, size_t(info.byteSize)))
        std::memset(moment, 0, size_t(info.byteSize));
  }
}

std::optional<ParameterArena::NonFiniteValue>
ParameterArena::findNonFinite() const {
  for (const ParamInfo &info : model_.params) {
    struct Region {
      const float *data;
      const char *what;
    };
    std::vector<Region> regions = {{param(info), ""}};
    if (info.hasTrainingState()) {
      regions.push_back({expAvg(info), "exp_avg of "});
      regions.push_back({expAvgSq(info), "exp_avg_sq of "});
    }
    for (const Region &region : regions) {
      int64_t bad = firstNonFinite(region.data, info.numElements);
      if (bad >= 0)
        return NonFiniteValue{std::string(region.what) + "'" + info.name + "'",
                              describeNonFinite(region.data, bad, info.shape)};
    }
  }
  return std::nullopt;
}

std::vector<ArenaRange> parameterRanges(const ModelInfo &model) {
  std::vector<ArenaRange> sorted;
  for (const ParamInfo &param : model.params)
    sorted.push_back({param.offset, param.byteSize});
  std::sort(sorted.begin(), sorted.end(),
            [](const ArenaRange &a, const ArenaRange &b) {
              return a.offset < b.offset;
            });
  std::vector<ArenaRange> merged;
  for (const ArenaRange &range : sorted) {
    if (!merged.empty() &&
        merged.back().offset + merged.back().bytes == range.offset)
      merged.back().bytes += range.bytes;
    else
      merged.push_back(range);
  }
  return merged;
}

bool isMomentName(const ModelInfo &model, const std::string &name) {
  for (const char *suffix : {kExpAvgSuffix, kExpAvgSqSuffix})
    if (endsWith(name, suffix) &&
        model.findParam(name.substr(0, name.size() - std::strlen(suffix))))
      return true;
  return false;
}

namespace {

/// "'C' was trained with config src_vocab = 64 (this model: 20); recompile
/// with txc -D src_vocab=64 to load it", from the checkpoint's __metadata__
/// "config"; empty when it records none or no number differs.
std::string configHint(const SafetensorsReader &file, const ModelInfo &model) {
  // The (checkpoint, model) sizes of the dims that differ: a config value
  // that explains one of them is the one to name.
  std::set<std::pair<int64_t, int64_t>> differing;
  for (const ParamInfo &info : model.params)
    if (const SafetensorsEntry *entry = file.find(info.name))
      if (entry->shape.size() == info.shape.size())
        for (size_t i = 0; i < info.shape.size(); ++i)
          if (entry->shape[i] != info.shape[i])
            differing.insert({entry->shape[i], info.shape[i]});
  // Tensors only one side has: a count (layers = 2 against 3) differs, which
  // no dim shows. Then every whole number that differs is named, so that one
  // recompile loads the file (it named d_model alone, and the recompile
  // then failed on layers).
  bool presenceDiffers = false;
  for (const ParamInfo &info : model.params)
    presenceDiffers |= file.find(info.name) == nullptr;
  for (const SafetensorsEntry &entry : file.tensors())
    presenceDiffers |= entry.name.rfind(kTrainingStatePrefix, 0) != 0 &&
                       !isMomentName(model, entry.name) &&
                       !model.findParam(entry.name);
  const std::string *text = file.metadataValue("config");
  if (!text)
    return "";
  Json trained;
  try {
    trained = parseJson(*text);
  } catch (const std::exception &) {
    return "";
  }
  if (!trained.is_object())
    return "";
  // Every config number that differs, and those that explain a differing
  // dim (src_vocab = 64 for [64, 32] against [20, 32]; not a batch size).
  std::string values, flags, allValues, allFlags;
  int shown = 0, allShown = 0;
  for (const ConfigValue &value : model.config) {
    const Json *then = jsonMember(trained, value.key);
    if (!then || !value.number || !then->is_number())
      continue;
    const double was = then->get<double>();
    if (was == *value.number)
      continue;
    const std::string wasText = toJson(*then);
    const std::string entry =
        value.key + " = " + wasText + " (this model: " + value.json + ")";
    const std::string flag = " -D " + value.key + "=" + wasText;
    if (allShown++ < 6) {
      allValues += (allValues.empty() ? "" : ", ") + entry;
      allFlags += flag;
    }
    // A dim's bound (batch, max_len) or a size written as a constant sizes
    // the inputs, not the tensors.
    const bool sizesInputs =
        std::find(model.sizeConfigs.begin(), model.sizeConfigs.end(),
                  value.key) != model.sizeConfigs.end() ||
        std::any_of(
            model.dims.begin(), model.dims.end(),
            [&](const DimInfo &dim) { return dim.config == value.key; });
    const bool wholeNumbers = was == std::floor(was) &&
                              *value.number == std::floor(*value.number) &&
                              !sizesInputs;
    if ((differing.count({int64_t(was), int64_t(*value.number)}) ||
         (presenceDiffers && wholeNumbers)) &&
        shown++ < 6) {
      values += (values.empty() ? "" : ", ") + entry;
      flags += flag;
    }
  }
  if (values.empty()) { // sizes derived from the config (d_ff = 4 * d)
    values = allValues;
    flags = allFlags;
  }
  if (values.empty())
    return "";
  return "'" + file.path() + "' was trained with config " + values +
         "; recompile with txc" + flags + " to load it";
}

/// The parameters a file holds under one prefix (a Hugging Face state_dict:
/// `transformer.wte.weight` for `wte.weight`): said once, first, rather
/// than as each tensor missing and each one not a parameter. "" when no
/// prefix accounts for every missing parameter.
std::string prefixHint(const SafetensorsReader &file, const ModelInfo &model) {
  std::vector<std::string> missing;
  for (const ParamInfo &info : model.params)
    if (!file.find(info.name))
      missing.push_back(info.name);
  if (missing.empty())
    return "";
  std::map<std::string, size_t> found; // prefix -> missing names it covers
  for (const SafetensorsEntry &entry : file.tensors())
    for (const std::string &name : missing)
      if (entry.name.size() > name.size() && endsWith(entry.name, name))
        ++found[entry.name.substr(0, entry.name.size() - name.size())];
  for (const auto &[prefix, count] : found)
    if (count == missing.size())
      return "every parameter missing from '" + file.path() +
             "' is there under the prefix '" + prefix + "' ('" + prefix +
             missing[0] + "' for '" + missing[0] +
             "'): save the tensors without it (in PyTorch, {k.removeprefix('" +
             prefix + "'): v for k, v in state_dict.items()})";
  return "";
}

} // namespace

namespace {

/// `run --save-grads` writes the gradients under the parameters' names and
/// shapes, so every tensor fits: eval, generate, export, run --load and
/// train --init-from took them as weights without a word (and export wrote
/// them out as an ordinary weights file). The file says what it holds.
void refuseGradients(const SafetensorsReader &file) {
  const std::string *format = file.metadataValue("format");
  if (!format || *format != kGradientsFormat)
    return;
  const std::string *entry = file.metadataValue("entry");
  throw InputError("'" + file.path() + "' holds the gradients of " +
                   (entry ? "entry '" + *entry + "'" : std::string("a step")) +
                   " (written by run --save-grads), not weights; give a "
                   "checkpoint or a weights file");
}

} // namespace

std::vector<std::string>
checkCheckpointAgainstModel(const SafetensorsReader &file,
                            const ModelInfo &model) {
  refuseGradients(file);
  std::vector<std::string> problems;
  const std::string &path = file.path();
  for (const ParamInfo &info : model.params) {
    const SafetensorsEntry *entry = file.find(info.name);
    if (!entry) {
      problems.push_back("tensor '" + info.name + "' is missing from '" + path +
                         "' (the model expects F32 " + formatShape(info.shape) +
                         ")");
      continue;
    }
    if (entry->dtype != "F32")
      problems.push_back("tensor '" + info.name + "' has dtype " +
                         entry->dtype + " in '" + path +
                         "' but the model expects F32");
    if (entry->shape != info.shape)
      problems.push_back("tensor '" + info.name + "' has shape " +
                         formatShape(entry->shape) + " in '" + path +
                         "' but the model expects " + formatShape(info.shape));
  }
  // The moments of a tensor the file holds go with it: an extra parameter
  // is said once, not three times (a checkpoint of 2 layers into a build of
  // 1 listed each extra tensor's exp_avg and exp_avg_sq as well).
  auto momentOfFileTensor = [&](const std::string &name) {
    for (const char *suffix : {kExpAvgSuffix, kExpAvgSqSuffix})
      if (endsWith(name, suffix) &&
          file.find(name.substr(0, name.size() - std::strlen(suffix))))
        return true;
    return false;
  };
  for (const SafetensorsEntry &entry : file.tensors()) {
    if (entry.name.rfind(kTrainingStatePrefix, 0) == 0 ||
        isMomentName(model, entry.name) || momentOfFileTensor(entry.name))
      continue;
    if (!model.findParam(entry.name))
      problems.push_back("tensor '" + entry.name + "' " +
                         formatShape(entry.shape) + " in '" + path +
                         "' is not a parameter of model '" + model.model + "'");
  }
  // A checkpoint records the config it was trained with: when the tensors
  // do not fit, the values that differ are what to recompile with (first,
  // so the cut list of problems never hides it).
  if (!problems.empty())
    if (std::string hint = configHint(file, model); !hint.empty())
      problems.insert(problems.begin(), hint);
  if (!problems.empty())
    if (std::string hint = prefixHint(file, model); !hint.empty())
      problems.insert(problems.begin(), hint);
  return problems;
}

void checkCheckpointModel(const SafetensorsReader &file,
                          const ModelInfo &model) {
  refuseGradients(file);
  const std::string *name = file.metadataValue("model");
  if (!name || *name == model.model)
    return;
  for (const ParamInfo &info : model.params) {
    const SafetensorsEntry *entry = file.find(info.name);
    std::string problem;
    if (!entry)
      problem = "tensor '" + info.name + "' is missing from it";
    else if (entry->shape != info.shape)
      problem = "tensor '" + info.name + "' is " + formatShape(entry->shape) +
                " there, " + formatShape(info.shape) + " here";
    if (!problem.empty())
      throw InputError("'" + file.path() + "' is a checkpoint of model '" +
                       *name + "', not of this executable's '" + model.model +
                       "' (" + problem + "); give a checkpoint of '" +
                       model.model + "'");
  }
}

void ParameterArena::load(const std::string &path) {
  load(SafetensorsReader(path));
}

void throwLoadProblems(const std::vector<std::string> &problems,
                       const std::string &path, const ModelInfo &model) {
  std::string message;
  for (size_t i = 0; i < problems.size() && i < kMaxReportedProblems; ++i)
    message += (i ? "\n" : "") + problems[i];
  if (problems.size() > kMaxReportedProblems)
    message += "\n... and " +
               std::to_string(problems.size() - kMaxReportedProblems) +
               " more mismatches between '" + path + "' and model '" +
               model.model + "'";
  throw InputError(message);
}

void checkParametersFit(const SafetensorsReader &file, const ModelInfo &model) {
  // Another model's checkpoint that does not fit is named as such first
  // (export, run --load and bench --load advised recompiling with its -D
  // values, which cannot make another model's tensors fit).
  checkCheckpointModel(file, model);
  std::vector<std::string> problems = checkCheckpointAgainstModel(file, model);
  if (!problems.empty())
    throwLoadProblems(problems, file.path(), model);
}

void ParameterArena::load(const SafetensorsReader &file) {
  const std::string &path = file.path();
  checkParametersFit(file, model_);
  for (const ParamInfo &info : model_.params) {
    file.read(*file.find(info.name), param(info));
    checkFinite(param(info), info.numElements, info.shape,
                "tensor '" + info.name + "' in '" + path + "'");
  }
}

void ParameterArena::save(const std::string &path,
                          const SafetensorsMetadata &metadata) const {
  std::vector<SafetensorsTensorView> views;
  for (const ParamInfo &info : model_.params)
    views.push_back({info.name, DType::F32, info.shape, param(info)});
  writeSafetensors(path, views, metadata);
}

void ParameterArena::saveGradients(const std::string &path,
                                   const SafetensorsMetadata &metadata) const {
  std::vector<SafetensorsTensorView> views;
  for (const ParamInfo &info : model_.params)
    views.push_back({info.name, DType::F32, info.shape, gradient(info)});
  writeSafetensors(path, views, metadata);
}

} // namespace txrt::driver
