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
         "; recompile with txc" + model.compileFlagsWith(flags) + " to load it";
}

/// The names of the model's parameters `file` does not hold.
std::vector<std::string> missingParameters(const SafetensorsReader &file,
                                           const ModelInfo &model) {
  std::vector<std::string> missing;
  for (const ParamInfo &info : model.params)
    if (!file.find(info.name))
      missing.push_back(info.name);
  return missing;
}

/// The parameters a file holds under one prefix (a Hugging Face state_dict:
/// `transformer.wte.weight` for `wte.weight`): said once, first, rather
/// than as each tensor missing and each one not a parameter. "" when no
/// prefix accounts for every missing parameter.
std::string prefixHint(const SafetensorsReader &file, const ModelInfo &model) {
  std::vector<std::string> missing = missingParameters(file, model);
  if (missing.empty())
    return "";
  std::set<std::string> params;
  for (const ParamInfo &info : model.params)
    params.insert(info.name);
  // A prefix ends at a name's dot, and the tensor under it is no parameter
  // of the model: `layers.0.input_layernorm.weight` (a parameter) read as
  // 'norm.weight' under 'layers.0.input_layer' gave that advice, which
  // renames every tensor.
  std::map<std::string, size_t> found; // prefix -> missing names it covers
  for (const SafetensorsEntry &entry : file.tensors())
    for (const std::string &name : missing)
      if (entry.name.size() > name.size() && endsWith(entry.name, name) &&
          entry.name[entry.name.size() - name.size() - 1] == '.' &&
          !params.count(entry.name))
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

/// Every parameter missing from a file that holds it without a prefix the
/// model's names have (a spec written with Hugging Face's `model.` names,
/// a file saved without them): said once. "" when no prefix accounts for
/// every missing parameter.
std::string missingPrefixHint(const SafetensorsReader &file,
                              const ModelInfo &model) {
  std::vector<std::string> missing = missingParameters(file, model);
  if (missing.empty())
    return "";
  std::map<std::string, size_t> found; // prefix -> missing names it covers
  for (const std::string &name : missing)
    for (size_t dot = name.find('.'); dot != std::string::npos;
         dot = name.find('.', dot + 1))
      if (file.find(name.substr(dot + 1)))
        ++found[name.substr(0, dot + 1)];
  for (const auto &[prefix, count] : found)
    if (count == missing.size())
      return "every parameter missing from '" + file.path() +
             "' is there without the prefix '" + prefix + "' ('" +
             missing[0].substr(prefix.size()) + "' for '" + missing[0] +
             "'): write the spec's names without it, or save the tensors "
             "with it";
  return "";
}

/// Hints for the shapes and dtypes that do not fit, said once before the
/// per-tensor lines: tensors stored transposed (Hugging Face's GPT-2 keeps
/// its Conv1D weights [in, out]), and dtypes other than F32 (a bf16 or
/// fp16 checkpoint).
std::vector<std::string> layoutHints(const SafetensorsReader &file,
                                     const ModelInfo &model) {
  std::vector<std::string> hints;
  size_t transposed = 0, otherShape = 0;
  std::string firstTransposed;
  std::set<std::string> dtypes;
  for (const ParamInfo &info : model.params) {
    const SafetensorsEntry *entry = file.find(info.name);
    if (!entry)
      continue;
    if (entry->dtype != "F32")
      dtypes.insert(entry->dtype);
    if (entry->shape == info.shape)
      continue;
    if (entry->shape.size() == 2 && info.shape.size() == 2 &&
        entry->shape[0] == info.shape[1] && entry->shape[1] == info.shape[0]) {
      if (firstTransposed.empty())
        firstTransposed = info.name;
      ++transposed;
    } else {
      ++otherShape;
    }
  }
  if (transposed && !otherShape)
    hints.push_back(
        "every tensor of another shape in '" + file.path() +
        "' has the model's shape transposed ('" + firstTransposed + "'" +
        (transposed > 1 ? " and " + std::to_string(transposed - 1) + " more"
                        : std::string()) +
        "): a file that stores weights [in, out] (Hugging Face's GPT-2 "
        "Conv1D) where the model's linears keep [out, in] needs them "
        "transposed (w.t().contiguous() in PyTorch), its square weights "
        "too (GPT-2's attn.c_proj.weight), whose shape cannot tell and "
        "which would load without a word");
  if (!dtypes.empty()) {
    std::string list;
    for (const std::string &dtype : dtypes)
      list += (list.empty() ? "" : ", ") + dtype;
    hints.push_back("'" + file.path() + "' holds " + list +
                    " tensors and the model reads F32 (a --precision=bf16 "
                    "build too): convert them ({k: v.float() for k, v in "
                    "state_dict.items()} in PyTorch, then save_file)");
  }
  return hints;
}

/// A file named as one shard of a sharded checkpoint
/// (`model-00001-of-00002.safetensors`): it holds only some tensors.
std::string shardHint(const SafetensorsReader &file) {
  std::string name = file.path();
  size_t slash = name.find_last_of('/');
  if (slash != std::string::npos)
    name = name.substr(slash + 1);
  size_t of = name.find("-of-");
  if (of == std::string::npos || of < 5 || name.size() < of + 9 ||
      name.compare(name.size() - 12, 12, ".safetensors") != 0)
    return "";
  auto digits = [&](size_t at, size_t n) {
    for (size_t i = at; i < at + n; ++i)
      if (i >= name.size() ||
          !std::isdigit(static_cast<unsigned char>(name[i])))
        return false;
    return true;
  };
  if (!digits(of - 5, 5) || !digits(of + 4, 5))
    return "";
  return "'" + file.path() + "' is one shard of a sharded checkpoint (" +
         name.substr(of + 4, 5) +
         " files, model.safetensors.index.json lists which tensor is in "
         "which): merge them into one file (in PyTorch, update one dict with "
         "safetensors.torch.load_file of each shard, then save_file)";
}

/// The file's tensors that are no parameters, said once after their lines:
/// a state_dict holds buffers too (rotary_emb.inv_freq, causal masks), and
/// a tied model's file an output weight that is the embedding's.
std::string extraTensorsHint(const SafetensorsReader &file,
                             const ModelInfo &model,
                             const std::vector<std::string> &extra) {
  if (extra.empty())
    return "";
  // A tied output weight: an extra matrix of a parameter's shape whose
  // values are that parameter's in the file. Looked for only when the
  // extra matrices are few (an output weight beside buffers): each
  // comparison reads both tensors, and a file of another model's layers
  // holds many matrices of its parameters' shapes.
  std::vector<const SafetensorsEntry *> matrices;
  for (const std::string &name : extra)
    if (const SafetensorsEntry *entry = file.find(name);
        entry && entry->dtype == "F32" && entry->shape.size() == 2)
      matrices.push_back(entry);
  if (matrices.size() > 2)
    matrices.clear();
  for (const SafetensorsEntry *entry : matrices) {
    const std::string &name = entry->name;
    std::vector<float> a, b;
    for (const ParamInfo &info : model.params) {
      const SafetensorsEntry *twin = file.find(info.name);
      if (!twin || twin->dtype != "F32" || twin->shape != entry->shape ||
          info.shape != entry->shape)
        continue;
      if (a.empty()) {
        a.resize(size_t(info.numElements));
        file.read(*entry, a.data());
      }
      b.resize(a.size());
      file.read(*twin, b.data());
      if (a == b)
        return "'" + name + "' in '" + file.path() + "' equals '" + info.name +
               "' (tied embeddings, as Hugging Face's save_pretrained "
               "writes both): the model ties them, so leave it out of the "
               "file";
    }
  }
  // A weight of a parameter's shape with other values: the file's model
  // has a layer of its own where this spec reads another parameter (an
  // untied output beside a spec that ties it). It was called a buffer,
  // and "leave it out" dropped the trained layer.
  for (const SafetensorsEntry *entry : matrices) {
    if (!endsWith(entry->name, ".weight"))
      continue;
    // The one parameter of its shape (an embedding's [vocab, d]); a shape
    // several layers share says nothing of which.
    const ParamInfo *twin = nullptr;
    size_t sameShape = 0;
    for (const ParamInfo &info : model.params)
      if (info.shape == entry->shape) {
        ++sameShape;
        twin = &info;
      }
    if (sameShape != 1 || !file.find(twin->name))
      continue;
    return "'" + entry->name + "' in '" + file.path() + "' has the shape of '" +
           twin->name +
           "' but other values: the file's model has a weight of its own "
           "there, where this spec reads '" +
           twin->name +
           "' again (an output layer tied to the embedding): give that "
           "layer a parameter of its own in the spec to load it; left out of "
           "the file, the model computes another function than the file's";
  }
  // A bias the spec's layer does not have (`bias = false`): its weight is
  // a parameter.
  for (const std::string &name : extra)
    if (endsWith(name, ".bias") &&
        model.findParam(name.substr(0, name.size() - 5) + ".weight"))
      return "'" + name + "': the model's layer has no bias where the "
             "file's has one: write it with a bias in the spec (linear(x, "
             "n) has one unless bias = false), or leave the tensor out";
  // Buffers: a state_dict's non-parameters (rotary_emb.inv_freq, GPT-2's
  // attn.bias and attn.masked_bias masks, position_ids), by name or by a
  // dtype no parameter has.
  for (const std::string &name : extra) {
    const SafetensorsEntry *entry = file.find(name);
    bool buffer = endsWith(name, "inv_freq") || endsWith(name, "masked_bias") ||
                  endsWith(name, "position_ids") ||
                  (entry && entry->dtype != "F32" && entry->dtype != "F16" &&
                   entry->dtype != "BF16" && entry->dtype != "F64");
    if (buffer)
      return "'" + name +
             "' is a module's buffer, not a parameter (a "
             "state_dict holds both): save the parameters alone ({n: p for "
             "n, p in model.named_parameters()} in PyTorch)" +
             (endsWith(name, "inv_freq")
                  ? std::string("; rope(x, base = ...) computes the "
                                "frequencies: give it the model's base "
                                "(rope_theta)")
                  : std::string());
  }
  // One or two other tensors beside every parameter, without Adam moments
  // (a trained layer has them): most often a buffer a notebook registers
  // (a sinusoidal table `pe`, a mask), which a state_dict holds. Following
  // the torch.save hint with model.state_dict() led there without advice.
  if (extra.size() > 2)
    return "";
  for (const ParamInfo &info : model.params)
    if (!file.find(info.name))
      return "";
  std::vector<std::string> buffers;
  for (const std::string &name : extra)
    if (!endsWith(name, kExpAvgSuffix) && !endsWith(name, kExpAvgSqSuffix) &&
        !file.find(name + kExpAvgSuffix))
      buffers.push_back(name);
  if (buffers.empty())
    return "";
  return "'" + buffers.front() + "'" +
         (buffers.size() > 1 ? " and '" + buffers.back() + "' are"
                             : std::string(" is")) +
         " in the file beside every parameter of the model: a module's "
         "buffer (register_buffer: a positional-encoding table, a mask) is "
         "no parameter, and a state_dict holds both; save the parameters "
         "alone ({n: p for n, p in model.named_parameters()} in PyTorch), or "
         "leave it out";
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
  std::vector<std::string> extra;
  for (const SafetensorsEntry &entry : file.tensors()) {
    if (entry.name.rfind(kTrainingStatePrefix, 0) == 0 ||
        isMomentName(model, entry.name) || momentOfFileTensor(entry.name))
      continue;
    if (!model.findParam(entry.name)) {
      extra.push_back(entry.name);
      problems.push_back("tensor '" + entry.name + "' " +
                         formatShape(entry.shape) + " in '" + path +
                         "' is not a parameter of model '" + model.model + "'");
    }
  }
  if (problems.empty())
    return problems;
  // What to do, said once before the per-tensor lines (a cut list never
  // hides it): a prefix the file's names have, the config the checkpoint
  // records (the values that differ are what to recompile with), then the
  // layout, shard and missing-prefix hints.
  const std::string prefix = prefixHint(file, model);
  std::vector<std::string> hints;
  for (const std::string &hint : {prefix, configHint(file, model)})
    if (!hint.empty())
      hints.push_back(hint);
  for (const std::string &hint : layoutHints(file, model))
    hints.push_back(hint);
  for (const std::string &hint :
       {shardHint(file), missingPrefixHint(file, model)})
    if (!hint.empty())
      hints.push_back(hint);
  // Said after the lines it is about; extra tensors a prefix explains are
  // not buffers.
  if (!extra.empty() && prefix.empty())
    if (std::string hint = extraTensorsHint(file, model, extra); !hint.empty())
      problems.push_back(hint);
  problems.insert(problems.begin(), hints.begin(), hints.end());
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
