//===- ModelInfo.cpp - parse and validate the embedded model metadata -----===//
//
// Field accessors that turn every missing or mistyped member into a
// ModelError naming its path ("entries[1].inputs[0].shape"), then the
// cross-checks: dims referenced by name exist, parameters fit the arena
// without overlapping, names are unique.
//
//===----------------------------------------------------------------------===//
#include "core/ModelInfo.h"
#include "core/Error.h"
#include "core/MetadataFloats.h"
#include "formats/Json.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

namespace txrt::driver {

namespace {

const Json &member(const Json &object, const char *key,
                   const std::string &path) {
  const Json *value = jsonMember(object, key);
  if (!value)
    throw ModelError(path + " has no member '" + key + "'");
  return *value;
}

std::string getString(const Json &object, const char *key,
                      const std::string &path, bool required = true) {
  const Json *value = jsonMember(object, key);
  if (!value && !required)
    return "";
  if (!value || !value->is_string())
    throw ModelError(path + "." + key + " must be a string");
  return jsonString(*value);
}

int64_t getInteger(const Json &object, const char *key, const std::string &path,
                   int64_t minimum = 0) {
  std::optional<int64_t> value = jsonInteger(member(object, key, path));
  if (!value || *value < minimum)
    throw ModelError(path + "." + key +
                     " must be an integer >= " + std::to_string(minimum));
  return *value;
}

double getNumber(const Json &object, const char *key, const std::string &path,
                 std::optional<double> fallback) {
  const Json *value = jsonMember(object, key);
  if (!value && fallback)
    return *fallback;
  if (!value || !value->is_number())
    throw ModelError(path + "." + key + " must be a number");
  return value->get<double>();
}

const Json &getArray(const Json &object, const char *key,
                     const std::string &path) {
  const Json &value = member(object, key, path);
  if (!value.is_array())
    throw ModelError(path + "." + key + " must be an array");
  return value;
}

DType getDType(const Json &object, const std::string &path) {
  std::string name = getString(object, "dtype", path);
  std::optional<DType> dtype = parseDTypeName(name);
  if (!dtype)
    throw ModelError(path + ".dtype '" + name + "' is not a known dtype");
  return *dtype;
}

std::string at(const std::string &path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

/// A constant size or the name of a model dim.
DimRef parseDimRef(const Json &value, const std::string &path,
                   const std::vector<DimInfo> &dims) {
  DimRef ref;
  std::optional<int64_t> size = jsonInteger(value);
  if (size && *size >= 0) {
    ref.size = *size;
  } else if (value.is_string()) {
    auto found = std::find_if(dims.begin(), dims.end(), [&](const auto &d) {
      return d.name == jsonString(value);
    });
    if (found == dims.end())
      throw ModelError(path + " names an unknown dim '" + jsonString(value) +
                       "'");
    ref.dim = int(found - dims.begin());
  } else {
    throw ModelError(path + " must be a non-negative integer or a dim name");
  }
  return ref;
}

TensorSig parseSignature(const Json &value, const std::string &path,
                         const std::vector<DimInfo> &dims) {
  if (!value.is_object())
    throw ModelError(path + " must be an object");
  TensorSig sig;
  sig.name = getString(value, "name", path);
  sig.dtype = getDType(value, path);
  if (sig.dtype != DType::F32 && sig.dtype != DType::I32 &&
      sig.dtype != DType::Bool)
    throw ModelError(path + ".dtype must be f32, i32 or bool");
  const Json &shape = getArray(value, "shape", path);
  for (size_t i = 0; i < shape.size(); ++i)
    sig.shape.push_back(parseDimRef(shape[i], at(path + ".shape", i), dims));
  if (const Json *rows = jsonMember(value, "writes_last_rows")) {
    if (sig.shape.size() < 2)
      throw ModelError(path + ".writes_last_rows needs a tensor of rank >= 2");
    sig.writesLastRows = parseDimRef(*rows, path + ".writes_last_rows", dims);
  }
  if (const Json *ids = jsonMember(value, "ids")) {
    const std::string idsPath = path + ".ids";
    if (sig.dtype != DType::I32 || !ids->is_object())
      throw ModelError(idsPath + " must be an object, on an i32 tensor");
    IdRange range;
    range.begin = getInteger(*ids, "begin", idsPath,
                             std::numeric_limits<int64_t>::min());
    range.end = getInteger(*ids, "end", idsPath, range.begin);
    for (const Json &id : getArray(*ids, "also", idsPath)) {
      std::optional<int64_t> also = jsonInteger(id);
      if (!also)
        throw ModelError(idsPath + ".also must hold integers");
      range.also.push_back(*also);
    }
    range.what = getString(*ids, "what", idsPath);
    if (jsonMember(*ids, "tables"))
      for (const Json &table : getArray(*ids, "tables", idsPath)) {
        if (!table.is_string())
          throw ModelError(idsPath + ".tables must hold strings");
        range.tables.push_back(jsonString(table));
      }
    if (const Json *ignored = jsonMember(*ids, "ignored")) {
      range.ignored = jsonInteger(*ignored);
      if (!range.ignored)
        throw ModelError(idsPath + ".ignored must be an integer");
    }
    if (const Json *scored = jsonMember(*ids, "scored")) {
      if (!scored->is_boolean())
        throw ModelError(idsPath + ".scored must be a bool");
      range.scored = scored->get<bool>();
    }
    sig.ids = std::move(range);
  }
  if (const Json *dimIds = jsonMember(value, "dim_ids")) {
    const std::string idsPath = path + ".dim_ids";
    if (sig.dtype != DType::I32 || !dimIds->is_array())
      throw ModelError(idsPath + " must be an array, on an i32 tensor");
    for (size_t i = 0; i < dimIds->size(); ++i) {
      const Json &item = (*dimIds)[i];
      const std::string itemPath = at(idsPath, i);
      if (!item.is_object())
        throw ModelError(itemPath + " must be an object");
      DimIdRange range;
      const Json *size = jsonMember(item, "size");
      if (!size)
        throw ModelError(itemPath + ".size is missing");
      range.size = parseDimRef(*size, itemPath + ".size", dims);
      const Json *negative = jsonMember(item, "negative");
      if (!negative || !negative->is_boolean())
        throw ModelError(itemPath + ".negative must be true or false");
      range.negative = negative->get<bool>();
      for (const Json &id : getArray(item, "also", itemPath)) {
        std::optional<int64_t> also = jsonInteger(id);
        if (!also)
          throw ModelError(itemPath + ".also must hold integers");
        range.also.push_back(*also);
      }
      range.what = getString(item, "what", itemPath);
      sig.dimIds.push_back(std::move(range));
    }
  }
  return sig;
}

std::vector<TensorSig> parseSignatures(const Json &entry, const char *key,
                                       const std::string &path,
                                       const std::vector<DimInfo> &dims) {
  std::vector<TensorSig> sigs;
  std::set<std::string> names;
  const Json &list = getArray(entry, key, path);
  for (size_t i = 0; i < list.size(); ++i) {
    sigs.push_back(parseSignature(list[i], at(path + "." + key, i), dims));
    if (!names.insert(sigs.back().name).second)
      throw ModelError(path + " has two " + key + " named '" +
                       sigs.back().name + "'");
  }
  return sigs;
}

ParamInfo parseParam(const Json &value, const std::string &path,
                     int64_t arenaBytes) {
  if (!value.is_object())
    throw ModelError(path + " must be an object");
  ParamInfo param;
  param.name = getString(value, "name", path);
  param.dtype = getDType(value, path);
  if (param.dtype != DType::F32)
    throw ModelError(path + " ('" + param.name + "') must be f32");
  for (const Json &dim : getArray(value, "shape", path)) {
    std::optional<int64_t> size = jsonInteger(dim);
    if (!size || *size < 0)
      throw ModelError(path + ".shape must hold non-negative integers");
    param.shape.push_back(*size);
  }
  std::string init = getString(value, "init", path);
  std::optional<InitKind> kind = parseInitKind(init);
  if (!kind)
    throw ModelError(path + ".init '" + init +
                     "' is not one of "
                     "xavier_uniform, zeros, ones, normal");
  param.init = *kind;
  if (param.init == InitKind::XavierUniform && param.shape.size() < 2)
    throw ModelError(path + " ('" + param.name +
                     "'): xavier_uniform needs a rank >= 2 shape");
  if (jsonMember(value, "init_std")) {
    double std = getNumber(value, "init_std", path, std::nullopt);
    if (param.init != InitKind::Normal || !(std > 0.0) || !std::isfinite(std))
      throw ModelError(path + ".init_std must be a positive number, with "
                              "init normal");
    param.initStd = std;
  }
  param.offset = getInteger(value, "offset", path);
  std::optional<int64_t> bytes =
      checkedByteSize(param.shape, int64_t(dtypeSize(param.dtype)));
  if (!bytes)
    throw ModelError(path + ".shape is too large");
  param.byteSize = *bytes;
  param.numElements = *bytes / int64_t(dtypeSize(param.dtype));
  if (param.offset % int64_t(dtypeSize(param.dtype)) != 0 ||
      param.offset > arenaBytes || param.byteSize > arenaBytes - param.offset)
    throw ModelError(path + " ('" + param.name + "') at offset " +
                     std::to_string(param.offset) + " with " +
                     std::to_string(param.byteSize) +
                     " bytes does not fit the parameter arena of " +
                     std::to_string(arenaBytes) + " bytes");
  const char *stateKeys[] = {"grad_offset", "exp_avg_offset",
                             "exp_avg_sq_offset"};
  int64_t *stateOffsets[] = {&param.gradOffset, &param.expAvgOffset,
                             &param.expAvgSqOffset};
  int present = 0;
  for (int i = 0; i < 3; ++i) {
    if (!jsonMember(value, stateKeys[i]))
      continue;
    ++present;
    int64_t offset = getInteger(value, stateKeys[i], path);
    if (offset % int64_t(dtypeSize(param.dtype)) != 0 || offset > arenaBytes ||
        param.byteSize > arenaBytes - offset)
      throw ModelError(path + "." + stateKeys[i] + " ('" + param.name +
                       "') at offset " + std::to_string(offset) + " with " +
                       std::to_string(param.byteSize) +
                       " bytes does not fit the parameter arena of " +
                       std::to_string(arenaBytes) + " bytes");
    *stateOffsets[i] = offset;
  }
  if (present != 0 && present != 3)
    throw ModelError(path + " ('" + param.name +
                     "') must have all of grad_offset, exp_avg_offset and "
                     "exp_avg_sq_offset or none");
  if (jsonMember(value, "bf16_offset")) {
    int64_t offset = getInteger(value, "bf16_offset", path);
    const int64_t copyBytes = param.byteSize / 2;
    if (offset % 2 != 0 || offset < 0 ||
        offset > arenaBytes || copyBytes > arenaBytes - offset)
      throw ModelError(path + ".bf16_offset ('" + param.name +
                       "') at offset " + std::to_string(offset) + " with " +
                       std::to_string(copyBytes) +
                       " bytes does not fit the parameter arena of " +
                       std::to_string(arenaBytes) + " bytes");
    param.bf16Offset = offset;
  }
  return param;
}

/// One region of the parameter arena, for the overlap check.
struct ArenaRegion {
  int64_t offset, bytes;
  std::string what;
};

/// Parameters, gradients and moments never share bytes.
void checkNoOverlap(const std::vector<ParamInfo> &params) {
  std::vector<ArenaRegion> regions;
  for (const ParamInfo &param : params) {
    if (param.byteSize == 0)
      continue;
    regions.push_back({param.offset, param.byteSize,
                       "parameter '" + param.name + "'"});
    if (param.bf16Offset >= 0)
      regions.push_back({param.bf16Offset, param.byteSize / 2,
                         "the bf16 copy of '" + param.name + "'"});
    if (!param.hasTrainingState())
      continue;
    regions.push_back({param.gradOffset, param.byteSize,
                       "the gradient of '" + param.name + "'"});
    regions.push_back({param.expAvgOffset, param.byteSize,
                       "exp_avg of '" + param.name + "'"});
    regions.push_back({param.expAvgSqOffset, param.byteSize,
                       "exp_avg_sq of '" + param.name + "'"});
  }
  std::stable_sort(regions.begin(), regions.end(),
                   [](const ArenaRegion &a, const ArenaRegion &b) {
                     return a.offset < b.offset;
                   });
  for (size_t i = 1; i < regions.size(); ++i)
    if (regions[i - 1].offset + regions[i - 1].bytes > regions[i].offset) {
      // Keep the message of version 1 for two parameters.
      if (regions[i - 1].what.rfind("parameter ", 0) == 0 &&
          regions[i].what.rfind("parameter ", 0) == 0)
        throw ModelError("parameters " + regions[i - 1].what.substr(10) +
                         " and " + regions[i].what.substr(10) +
                         " overlap in the parameter arena");
      throw ModelError(regions[i - 1].what + " and " + regions[i].what +
                       " overlap in the parameter arena");
    }
}

/// Every entry input and output must have a byte size that fits int64 at
/// the bounds of its dims: the compiler plans the arenas at the bounds, so
/// if these overflow, the planned offsets did too and running the entry
/// would write outside its arena.
void checkEntrySizesAtBounds(const ModelInfo &info) {
  for (const EntryInfo &entry : info.entries)
    for (const auto *sigs : {&entry.inputs, &entry.outputs})
      for (const TensorSig &sig : *sigs) {
        int64_t bytes = int64_t(dtypeSize(sig.dtype));
        bool overflows = false;
        std::string bounds, keys;
        for (const DimRef &ref : sig.shape) {
          int64_t size = ref.size;
          if (ref.isSymbolic()) {
            const DimInfo &dim = info.dims[size_t(ref.dim)];
            size = dim.bound;
            bounds += (bounds.empty() ? "" : ", ") + dim.name +
                      " <= " + std::to_string(dim.bound);
            std::string key = info.configKeyForBound(dim);
            if (!key.empty() && keys.find(key) == std::string::npos)
              keys += (keys.empty() ? "" : ", ") + ("txc -D " + key + "=N");
          }
          overflows = overflows || __builtin_mul_overflow(bytes, size, &bytes);
        }
        if (!overflows)
          continue;
        throw ModelError(
            "entry '" + entry.name + "' " +
            (sigs == &entry.inputs ? "input" : "output") + " '" +
            info.formatSignature(sig) + "' needs more than " +
            std::to_string(INT64_MAX) + " bytes at the bounds of its dims (" +
            bounds +
            "), so the compiled arena sizes and offsets overflowed; "
            "recompile with smaller bounds" +
            (keys.empty() ? std::string() : " (" + keys + ")"));
      }
}

/// The entry roles and input roles a model kind may use (ModelAbi.h).
struct KindRoles {
  std::vector<std::string_view> entries, inputs;
};

KindRoles rolesOfKind(ModelKind kind) {
  switch (kind) {
  case ModelKind::None:
    return {{}, {}};
  case ModelKind::Seq2Seq:
    return {{"train", "train_grad", "encode", "decode", "decode_init",
             "decode_step"},
            {"source", "target_in", "target_out", "memory", "cache"}};
  case ModelKind::LanguageModel:
    return {{"train", "train_grad", "logits", "lm_step"},
            {"tokens", "targets", "cache", "cache_ids"}};
  case ModelKind::Classifier:
    return {{"train", "train_grad", "classify"},
            {"tokens", "segments", "label"}};
  }
  return {};
}

std::string joinRoles(const std::vector<std::string_view> &roles) {
  std::string text;
  for (std::string_view role : roles)
    text += (text.empty() ? "" : ", ") + std::string(role);
  return text.empty() ? "none" : text;
}

/// Reads an optional "role" member: absent is "", anything else must be one
/// of `allowed`.
std::string getRole(const Json &object, const std::string &path,
                    const std::vector<std::string_view> &allowed,
                    ModelKind kind) {
  std::string role = getString(object, "role", path, /*required=*/false);
  if (!role.empty() &&
      std::find(allowed.begin(), allowed.end(), role) == allowed.end())
    throw ModelError(path + ".role '" + role + "' is not a role of a " +
                     modelKindName(kind) + " model (" + joinRoles(allowed) +
                     ")");
  return role;
}

/// Roles of an entry's inputs and outputs; no role twice in one entry's
/// inputs except "cache" (one per cached tensor).
void parseSignatureRoles(const Json &entry, const std::string &path,
                         ModelKind kind, EntryInfo &info) {
  std::vector<std::string_view> inputRoles = rolesOfKind(kind).inputs;
  std::set<std::string> seen;
  const Json &inputs = getArray(entry, "inputs", path);
  for (size_t i = 0; i < inputs.size(); ++i) {
    TensorSig &sig = info.inputs[i];
    sig.role = getRole(inputs[i], at(path + ".inputs", i), inputRoles, kind);
    if (!sig.role.empty() && sig.role != "cache" &&
        !seen.insert(sig.role).second)
      throw ModelError(path + " ('" + info.name +
                       "') has two inputs with role '" + sig.role + "'");
  }
  std::vector<std::string_view> outputRoles;
  if (kind != ModelKind::None)
    outputRoles = {"cache"};
  const Json &outputs = getArray(entry, "outputs", path);
  for (size_t i = 0; i < outputs.size(); ++i)
    info.outputs[i].role =
        getRole(outputs[i], at(path + ".outputs", i), outputRoles, kind);
}

std::optional<EntryKind> parseEntryKind(std::string_view name) {
  if (name == "forward")
    return EntryKind::Forward;
  if (name == "train_step")
    return EntryKind::TrainStep;
  if (name == "train_grad")
    return EntryKind::TrainGrad;
  return std::nullopt;
}

OptimizerInfo parseOptimizer(const Json &value) {
  const std::string path = "metadata.optimizer";
  if (!value.is_object())
    throw ModelError(path + " must be an object");
  OptimizerInfo optimizer;
  optimizer.name = getString(value, "name", path);
  if (optimizer.name != "adam")
    throw ModelError(path + ".name '" + optimizer.name +
                     "' is not a known optimizer (adam)");
  optimizer.beta1 = getNumber(value, "beta1", path, 0.9);
  optimizer.beta2 = getNumber(value, "beta2", path, 0.999);
  optimizer.eps = getNumber(value, "eps", path, 1e-8);
  optimizer.weightDecay = getNumber(value, "weight_decay", path, 0.0);
  optimizer.clip = getNumber(value, "clip", path, 0.0);
  if (!(optimizer.beta1 >= 0 && optimizer.beta1 < 1 && optimizer.beta2 >= 0 &&
        optimizer.beta2 < 1))
    throw ModelError(path + ": beta1 and beta2 must lie in [0, 1)");
  const Json &lr = member(value, "lr", path);
  const std::string lrPath = path + ".lr";
  if (!lr.is_object())
    throw ModelError(lrPath + " must be an object");
  std::string schedule = getString(lr, "schedule", lrPath);
  if (schedule == "noam") {
    optimizer.lr.kind = LearningRateSchedule::Kind::Noam;
    optimizer.lr.dModel = getNumber(lr, "d_model", lrPath, std::nullopt);
    optimizer.lr.warmup = getNumber(lr, "warmup", lrPath, std::nullopt);
    optimizer.lr.factor = getNumber(lr, "factor", lrPath, 1.0);
    if (!(optimizer.lr.dModel > 0) || !(optimizer.lr.warmup > 0))
      throw ModelError(lrPath + ": d_model and warmup must be positive");
  } else if (schedule == "constant") {
    optimizer.lr.kind = LearningRateSchedule::Kind::Constant;
    optimizer.lr.value = getNumber(lr, "value", lrPath, std::nullopt);
  } else {
    throw ModelError(lrPath + ".schedule '" + schedule +
                     "' is not one of noam, constant");
  }
  return optimizer;
}

/// Metadata "float_configs": the config items that are floats (JSON
/// writes `eps = 1.0` as 1).
std::set<std::string> floatConfigs(const Json &root) {
  std::set<std::string> names;
  if (const Json *floats = jsonMember(root, "float_configs"))
    if (floats->is_array())
      for (const Json &name : *floats)
        if (name.is_string())
          names.insert(jsonString(name));
  return names;
}

/// Writes `value[key]` as a float when it is a number.
void markFloat(Json &value, const char *key) {
  if (value.is_object() && value.contains(key) && value[key].is_number())
    value[key] = value[key].get<double>();
}

} // namespace

void markMetadataFloats(Json &root) {
  if (!root.is_object())
    return;
  if (root.contains("config"))
    for (const std::string &name : floatConfigs(root))
      markFloat(root["config"], name.c_str());
  if (root.contains("optimizer")) {
    Json &optimizer = root["optimizer"];
    for (const char *key : {"beta1", "beta2", "eps", "weight_decay", "clip"})
      markFloat(optimizer, key);
    if (optimizer.is_object() && optimizer.contains("lr"))
      for (const char *key : {"value", "factor"})
        markFloat(optimizer["lr"], key);
  }
  if (root.contains("params") && root["params"].is_array())
    for (Json &param : root["params"])
      markFloat(param, "init_std");
}

ModelInfo ModelInfo::parse(std::string_view json) {
  Json root;
  try {
    root = parseJson(json);
  } catch (const JsonError &error) {
    throw ModelError(std::string("invalid JSON: ") + error.what());
  }
  if (!root.is_object())
    throw ModelError("the metadata must be a JSON object");
  ModelInfo info;
  info.metadataJson = std::string(json);
  const std::string top = "metadata";
  info.version = getInteger(root, "version", top);
  if (info.version != 1 && info.version != 2)
    throw ModelError("unsupported metadata version " +
                     std::to_string(info.version) +
                     " (this driver reads 1 and 2)");
  info.model = getString(root, "model", top);
  info.source = getString(root, "source", top, /*required=*/false);
  info.compileFlags = getString(root, "compile_flags", top, false);
  std::string precision = getString(root, "precision", top, false);
  if (!precision.empty()) {
    if (precision != "fp32" && precision != "bf16")
      throw ModelError("metadata.precision '" + precision +
                       "' is not one of fp32, bf16");
    info.precision = precision;
  }
  std::string target = getString(root, "target", top, false);
  if (!target.empty()) {
    if (target != "cpu" && target != "cuda")
      throw ModelError("metadata.target '" + target +
                       "' is not one of cpu, cuda");
    info.target = target;
  }
  info.inferenceFingerprint =
      getString(root, "inference_fingerprint", top, false);
  if (!info.inferenceFingerprint.empty() &&
      (info.inferenceFingerprint.size() != 16 ||
       info.inferenceFingerprint.find_first_not_of("0123456789abcdef") !=
           std::string::npos))
    throw ModelError("metadata.inference_fingerprint '" +
                     info.inferenceFingerprint +
                     "' is not 16 lowercase hex digits");
  if (jsonMember(root, "size_configs"))
    for (const Json &name : getArray(root, "size_configs", top)) {
      if (!name.is_string())
        throw ModelError(top + ".size_configs must hold strings");
      info.sizeConfigs.push_back(name.get<std::string>());
    }
  if (jsonMember(root, "cpu_features"))
    for (const Json &name : getArray(root, "cpu_features", top)) {
      if (!name.is_string())
        throw ModelError(top + ".cpu_features must hold strings");
      info.cpuFeatures.push_back(name.get<std::string>());
    }
  if (const Json *config = jsonMember(root, "config")) {
    if (!config->is_object())
      throw ModelError("metadata.config must be an object");
    const std::set<std::string> floats = floatConfigs(root);
    for (const auto &[key, value] : config->items())
      info.config.push_back({key,
                             toJson(floats.count(key) && value.is_number()
                                        ? Json(value.get<double>())
                                        : value),
                             value.is_number()
                                 ? std::optional<double>(value.get<double>())
                                 : std::nullopt});
  }

  if (const Json *aliases = jsonMember(root, "config_aliases")) {
    if (!aliases->is_object())
      throw ModelError("metadata.config_aliases must be an object");
    for (const auto &[key, value] : aliases->items()) {
      if (!value.is_string())
        throw ModelError("metadata.config_aliases." + key +
                         " must be a string");
      info.configAliases[key] = value.get<std::string>();
    }
  }

  std::string kindName = getString(root, "kind", top, /*required=*/false);
  if (!kindName.empty()) {
    std::optional<ModelKind> kind = parseModelKindName(kindName);
    if (!kind)
      throw ModelError("metadata.kind '" + kindName +
                       "' is not one of none, seq2seq, language_model, "
                       "classifier");
    info.kind = *kind;
  }
  info.noKvCache = getString(root, "no_kv_cache", top, /*required=*/false);
  if (const Json *inferred = jsonMember(root, "kind_inferred")) {
    if (!inferred->is_boolean())
      throw ModelError("metadata.kind_inferred must be true or false");
    info.kindInferred = inferred->get<bool>();
  }

  std::set<std::string> names;
  const Json &dims = getArray(root, "dims", top);
  for (size_t i = 0; i < dims.size(); ++i) {
    std::string path = at("dims", i);
    if (!dims[i].is_object())
      throw ModelError(path + " must be an object");
    DimInfo dim{getString(dims[i], "name", path),
                getInteger(dims[i], "bound", path, 1), std::nullopt};
    if (jsonMember(dims[i], "config"))
      dim.config = getString(dims[i], "config", path);
    if (!names.insert(dim.name).second)
      throw ModelError("two dims are named '" + dim.name + "'");
    info.dims.push_back(dim);
  }

  info.paramArenaBytes = getInteger(root, "param_arena_bytes", top);
  names.clear();
  const Json &params = getArray(root, "params", top);
  for (size_t i = 0; i < params.size(); ++i) {
    info.params.push_back(
        parseParam(params[i], at("params", i), info.paramArenaBytes));
    if (!names.insert(info.params.back().name).second)
      throw ModelError("two parameters are named '" + info.params.back().name +
                       "'");
  }
  checkNoOverlap(info.params);
  bool anyState = std::any_of(info.params.begin(), info.params.end(),
                              [](auto &p) { return p.hasTrainingState(); });
  if (anyState && info.version < 2)
    throw ModelError("gradient and moment offsets need metadata version 2");
  if (anyState && !info.hasTrainingState())
    throw ModelError("some parameters have gradient and moment offsets and "
                     "others do not");
  if (const Json *optimizer = jsonMember(root, "optimizer")) {
    if (info.version < 2)
      throw ModelError("metadata.optimizer needs metadata version 2");
    info.optimizer = parseOptimizer(*optimizer);
  }

  names.clear();
  const Json &entries = getArray(root, "entries", top);
  for (size_t i = 0; i < entries.size(); ++i) {
    std::string path = at("entries", i);
    if (!entries[i].is_object())
      throw ModelError(path + " must be an object");
    EntryInfo entry;
    entry.name = getString(entries[i], "name", path);
    if (info.version >= 2) {
      std::string kind = getString(entries[i], "kind", path);
      std::optional<EntryKind> parsed = parseEntryKind(kind);
      if (!parsed)
        throw ModelError(path + ".kind '" + kind +
                         "' is not one of forward, train_step, train_grad");
      entry.kind = *parsed;
      if (entry.kind != EntryKind::Forward && !info.hasTrainingState())
        throw ModelError(path + " ('" + entry.name + "') is a " + kind +
                         " entry but the parameters have no gradient and "
                         "moment offsets");
      if (entry.kind == EntryKind::TrainStep && !info.optimizer)
        throw ModelError(path + " ('" + entry.name +
                         "') is a train_step entry but the metadata has no "
                         "optimizer");
    }
    entry.arenaBytes = getInteger(entries[i], "arena_bytes", path);
    entry.tensorBytes = jsonMember(entries[i], "tensor_bytes")
                            ? getInteger(entries[i], "tensor_bytes", path)
                            : 0;
    entry.inputs = parseSignatures(entries[i], "inputs", path, info.dims);
    entry.outputs = parseSignatures(entries[i], "outputs", path, info.dims);
    entry.role =
        getRole(entries[i], path, rolesOfKind(info.kind).entries, info.kind);
    parseSignatureRoles(entries[i], path, info.kind, entry);
    if (const Json *loss = jsonMember(entries[i], "loss")) {
      const std::string lossPath = path + ".loss";
      if (!loss->is_object())
        throw ModelError(lossPath + " must be an object");
      std::string form = getString(*loss, "form", lossPath);
      entry.lossFormKnown = true;
      if (form == "cross_entropy") {
        std::string targets = getString(*loss, "targets", lossPath);
        for (size_t k = 0; k < entry.inputs.size(); ++k)
          if (entry.inputs[k].name == targets)
            entry.lossTargets = int(k);
        if (entry.lossTargets < 0)
          throw ModelError(lossPath + ".targets names no input ('" + targets +
                           "')");
        entry.lossIgnoreIndex = getInteger(*loss, "ignore_index", lossPath,
                                           std::numeric_limits<int64_t>::min());
      } else if (form != "other") {
        throw ModelError(lossPath +
                         ".form must be \"cross_entropy\" or "
                         "\"other\", not \"" +
                         form + "\"");
      }
    }
    if (!names.insert(entry.name).second)
      throw ModelError("two entries are named '" + entry.name + "'");
    if (!entry.role.empty())
      if (const EntryInfo *other = info.findEntryByRole(entry.role))
        throw ModelError("entries '" + other->name + "' and '" + entry.name +
                         "' both have role '" + entry.role + "'");
    info.entries.push_back(std::move(entry));
  }
  checkEntrySizesAtBounds(info);
  return info;
}

const EntryInfo *ModelInfo::findEntry(std::string_view name) const {
  for (const EntryInfo &entry : entries)
    if (entry.name == name)
      return &entry;
  return nullptr;
}

const EntryInfo *ModelInfo::findEntryOfKind(EntryKind kind) const {
  for (const EntryInfo &entry : entries)
    if (entry.kind == kind)
      return &entry;
  return nullptr;
}

const EntryInfo *ModelInfo::findEntryByRole(std::string_view role) const {
  if (role.empty())
    return nullptr;
  for (const EntryInfo &entry : entries)
    if (entry.role == role)
      return &entry;
  return nullptr;
}

const TensorSig *EntryInfo::findInputByRole(std::string_view role) const {
  int index = findInputIndexByRole(role);
  return index < 0 ? nullptr : &inputs[size_t(index)];
}

int EntryInfo::findInputIndexByRole(std::string_view role) const {
  if (role.empty())
    return -1;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].role == role)
      return int(i);
  return -1;
}

const char *modelKindName(ModelKind kind) {
  switch (kind) {
  case ModelKind::None:
    return "none";
  case ModelKind::Seq2Seq:
    return "seq2seq";
  case ModelKind::LanguageModel:
    return "language_model";
  case ModelKind::Classifier:
    return "classifier";
  }
  return "?";
}

std::optional<ModelKind> parseModelKindName(std::string_view name) {
  for (ModelKind kind : {ModelKind::None, ModelKind::Seq2Seq,
                         ModelKind::LanguageModel, ModelKind::Classifier})
    if (name == modelKindName(kind))
      return kind;
  return std::nullopt;
}

const char *entryKindName(EntryKind kind) {
  switch (kind) {
  case EntryKind::Forward:
    return "forward";
  case EntryKind::TrainStep:
    return "train_step";
  case EntryKind::TrainGrad:
    return "train_grad";
  }
  return "?";
}

bool ModelInfo::hasTrainingState() const {
  return !params.empty() &&
         std::all_of(params.begin(), params.end(),
                     [](const ParamInfo &p) { return p.hasTrainingState(); });
}

std::string ModelInfo::compileFlagsWith(const std::string &defines) const {
  std::vector<std::pair<std::string, std::string>> values;
  std::istringstream changed(defines);
  for (std::string word; changed >> word;) {
    if (word != "-D" || !(changed >> word))
      continue;
    const std::string::size_type eq = word.find('=');
    if (eq != std::string::npos)
      values.push_back({word.substr(0, eq), word.substr(eq + 1)});
  }
  std::vector<bool> used(values.size(), false);
  std::string out;
  std::istringstream own(compileFlags);
  for (std::string word; own >> word;) {
    if (word == "-D" && own >> word) {
      const std::string key = word.substr(0, word.find('='));
      for (size_t i = 0; i < values.size(); ++i)
        if (values[i].first == key) {
          word = key + "=" + values[i].second;
          used[i] = true;
        }
      out += " -D " + word;
      continue;
    }
    out += " " + word;
  }
  for (size_t i = 0; i < values.size(); ++i)
    if (!used[i])
      out += " -D " + values[i].first + "=" + values[i].second;
  return out;
}

std::string ModelInfo::configRoot(const std::string &key) const {
  std::string root = key;
  // At most one step per alias: a cycle (no txc writes one) ends the walk.
  for (size_t steps = 0; steps < configAliases.size(); ++steps) {
    auto next = configAliases.find(root);
    if (next == configAliases.end())
      break;
    root = next->second;
  }
  return root;
}

std::string ModelInfo::configKeyForBound(const DimInfo &dim) const {
  // What txc recorded: the config item the bound names, if any.
  if (dim.config)
    return *dim.config;
  // Metadata from before txc recorded it: a config item of the same value.
  std::vector<std::string> candidates;
  for (const ConfigValue &value : config)
    if (value.number && *value.number == double(dim.bound))
      candidates.push_back(value.key);
  if (candidates.size() == 1)
    return candidates[0];
  // Several keys share the value (batch = max_len = 16): prefer the one the
  // dim's role suggests.
  const char *hint = dim.name == "B" ? "batch" : "len";
  std::string found;
  for (const std::string &key : candidates)
    if (key.find(hint) != std::string::npos) {
      if (!found.empty())
        return "";
      found = key;
    }
  return found;
}

const ParamInfo *ModelInfo::findParam(std::string_view name) const {
  for (const ParamInfo &param : params)
    if (param.name == name)
      return &param;
  return nullptr;
}

std::optional<double> ModelInfo::configNumber(std::string_view key) const {
  for (const ConfigValue &value : config)
    if (value.key == key && value.number)
      return value.number;
  return std::nullopt;
}

std::optional<int64_t> ModelInfo::configCount(std::string_view key) const {
  std::optional<double> value = configNumber(key);
  if (!value || std::isnan(*value))
    return std::nullopt;
  constexpr double kLargest = 9007199254740992.0; // 2^53
  return int64_t(std::clamp(std::floor(*value), 0.0, kLargest));
}

int64_t ModelInfo::totalParamElements() const {
  int64_t total = 0;
  for (const ParamInfo &param : params)
    total += param.numElements;
  return total;
}

std::string ModelInfo::formatSignatureShape(const TensorSig &sig) const {
  std::string text = "[";
  for (size_t i = 0; i < sig.shape.size(); ++i) {
    if (i)
      text += ", ";
    const DimRef &ref = sig.shape[i];
    text += ref.isSymbolic() ? dims[size_t(ref.dim)].name
                             : std::to_string(ref.size);
  }
  return text + "]";
}

std::string ModelInfo::formatSignature(const TensorSig &sig) const {
  return sig.name + ": " + dtypeName(sig.dtype) + formatSignatureShape(sig);
}

} // namespace txrt::driver
