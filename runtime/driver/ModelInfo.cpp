//===- ModelInfo.cpp - parse and validate the embedded model metadata -----===//
//
// Field accessors that turn every missing or mistyped member into a
// ModelError naming its path ("entries[1].inputs[0].shape"), then the
// cross-checks: dims referenced by name exist, parameters fit the arena
// without overlapping, names are unique.
//
//===----------------------------------------------------------------------===//
#include "ModelInfo.h"
#include "Error.h"

#include <algorithm>
#include <set>

namespace txrt::driver {

namespace {

const JsonValue &member(const JsonValue &object, const char *key,
                        const std::string &path) {
  const JsonValue *value = object.find(key);
  if (!value)
    throw ModelError(path + " has no member '" + key + "'");
  return *value;
}

std::string getString(const JsonValue &object, const char *key,
                      const std::string &path, bool required = true) {
  const JsonValue *value = object.find(key);
  if (!value && !required)
    return "";
  if (!value || !value->isString())
    throw ModelError(path + "." + key + " must be a string");
  return value->asString();
}

int64_t getInteger(const JsonValue &object, const char *key,
                   const std::string &path, int64_t minimum = 0) {
  const JsonValue &value = member(object, key, path);
  if (!value.isInteger() || value.asInteger() < minimum)
    throw ModelError(path + "." + key +
                     " must be an integer >= " + std::to_string(minimum));
  return value.asInteger();
}

const JsonArray &getArray(const JsonValue &object, const char *key,
                          const std::string &path) {
  const JsonValue &value = member(object, key, path);
  if (!value.isArray())
    throw ModelError(path + "." + key + " must be an array");
  return value.asArray();
}

DType getDType(const JsonValue &object, const std::string &path) {
  std::string name = getString(object, "dtype", path);
  std::optional<DType> dtype = parseDTypeName(name);
  if (!dtype)
    throw ModelError(path + ".dtype '" + name + "' is not a known dtype");
  return *dtype;
}

std::string at(const std::string &path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

TensorSig parseSignature(const JsonValue &value, const std::string &path,
                         const std::vector<DimInfo> &dims) {
  if (!value.isObject())
    throw ModelError(path + " must be an object");
  TensorSig sig;
  sig.name = getString(value, "name", path);
  sig.dtype = getDType(value, path);
  if (sig.dtype != DType::F32 && sig.dtype != DType::I32 &&
      sig.dtype != DType::Bool)
    throw ModelError(path + ".dtype must be f32, i32 or bool");
  const JsonArray &shape = getArray(value, "shape", path);
  for (size_t i = 0; i < shape.size(); ++i) {
    DimRef ref;
    if (shape[i].isInteger() && shape[i].asInteger() >= 0) {
      ref.size = shape[i].asInteger();
    } else if (shape[i].isString()) {
      auto found = std::find_if(dims.begin(), dims.end(), [&](const auto &d) {
        return d.name == shape[i].asString();
      });
      if (found == dims.end())
        throw ModelError(at(path + ".shape", i) + " names an unknown dim '" +
                         shape[i].asString() + "'");
      ref.dim = int(found - dims.begin());
    } else {
      throw ModelError(at(path + ".shape", i) +
                       " must be a non-negative integer or a dim name");
    }
    sig.shape.push_back(ref);
  }
  return sig;
}

std::vector<TensorSig> parseSignatures(const JsonValue &entry, const char *key,
                                       const std::string &path,
                                       const std::vector<DimInfo> &dims) {
  std::vector<TensorSig> sigs;
  std::set<std::string> names;
  const JsonArray &list = getArray(entry, key, path);
  for (size_t i = 0; i < list.size(); ++i) {
    sigs.push_back(parseSignature(list[i], at(path + "." + key, i), dims));
    if (!names.insert(sigs.back().name).second)
      throw ModelError(path + " has two " + key + " named '" +
                       sigs.back().name + "'");
  }
  return sigs;
}

ParamInfo parseParam(const JsonValue &value, const std::string &path,
                     int64_t arenaBytes) {
  if (!value.isObject())
    throw ModelError(path + " must be an object");
  ParamInfo param;
  param.name = getString(value, "name", path);
  param.dtype = getDType(value, path);
  if (param.dtype != DType::F32)
    throw ModelError(path + " ('" + param.name + "') must be f32");
  for (const JsonValue &dim : getArray(value, "shape", path)) {
    if (!dim.isInteger() || dim.asInteger() < 0)
      throw ModelError(path + ".shape must hold non-negative integers");
    param.shape.push_back(dim.asInteger());
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
  return param;
}

void checkNoOverlap(const std::vector<ParamInfo> &params) {
  std::vector<const ParamInfo *> sorted;
  for (const ParamInfo &param : params)
    if (param.byteSize > 0)
      sorted.push_back(&param);
  std::sort(sorted.begin(), sorted.end(),
            [](auto *a, auto *b) { return a->offset < b->offset; });
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i - 1]->offset + sorted[i - 1]->byteSize > sorted[i]->offset)
      throw ModelError("parameters '" + sorted[i - 1]->name + "' and '" +
                       sorted[i]->name + "' overlap in the parameter arena");
}

} // namespace

ModelInfo ModelInfo::parse(std::string_view json) {
  JsonValue root;
  try {
    root = parseJson(json);
  } catch (const JsonError &error) {
    throw ModelError(std::string("invalid JSON: ") + error.what());
  }
  if (!root.isObject())
    throw ModelError("the metadata must be a JSON object");
  ModelInfo info;
  const std::string top = "metadata";
  info.version = getInteger(root, "version", top);
  if (info.version != 1)
    throw ModelError("unsupported metadata version " +
                     std::to_string(info.version) + " (this driver reads 1)");
  info.model = getString(root, "model", top);
  info.source = getString(root, "source", top, /*required=*/false);
  info.compileFlags = getString(root, "compile_flags", top, false);
  if (const JsonValue *config = root.find("config")) {
    if (!config->isObject())
      throw ModelError("metadata.config must be an object");
    info.config = config->asObject();
  }

  std::set<std::string> names;
  const JsonArray &dims = getArray(root, "dims", top);
  for (size_t i = 0; i < dims.size(); ++i) {
    std::string path = at("dims", i);
    if (!dims[i].isObject())
      throw ModelError(path + " must be an object");
    DimInfo dim{getString(dims[i], "name", path),
                getInteger(dims[i], "bound", path, 1)};
    if (!names.insert(dim.name).second)
      throw ModelError("two dims are named '" + dim.name + "'");
    info.dims.push_back(dim);
  }

  info.paramArenaBytes = getInteger(root, "param_arena_bytes", top);
  names.clear();
  const JsonArray &params = getArray(root, "params", top);
  for (size_t i = 0; i < params.size(); ++i) {
    info.params.push_back(
        parseParam(params[i], at("params", i), info.paramArenaBytes));
    if (!names.insert(info.params.back().name).second)
      throw ModelError("two parameters are named '" + info.params.back().name +
                       "'");
  }
  checkNoOverlap(info.params);

  names.clear();
  const JsonArray &entries = getArray(root, "entries", top);
  for (size_t i = 0; i < entries.size(); ++i) {
    std::string path = at("entries", i);
    if (!entries[i].isObject())
      throw ModelError(path + " must be an object");
    EntryInfo entry;
    entry.name = getString(entries[i], "name", path);
    entry.arenaBytes = getInteger(entries[i], "arena_bytes", path);
    entry.tensorBytes = entries[i].find("tensor_bytes")
                            ? getInteger(entries[i], "tensor_bytes", path)
                            : 0;
    entry.inputs = parseSignatures(entries[i], "inputs", path, info.dims);
    entry.outputs = parseSignatures(entries[i], "outputs", path, info.dims);
    if (!names.insert(entry.name).second)
      throw ModelError("two entries are named '" + entry.name + "'");
    info.entries.push_back(std::move(entry));
  }
  return info;
}

const EntryInfo *ModelInfo::findEntry(std::string_view name) const {
  for (const EntryInfo &entry : entries)
    if (entry.name == name)
      return &entry;
  return nullptr;
}

const ParamInfo *ModelInfo::findParam(std::string_view name) const {
  for (const ParamInfo &param : params)
    if (param.name == name)
      return &param;
  return nullptr;
}

std::optional<double> ModelInfo::configNumber(std::string_view key) const {
  for (const auto &[name, value] : config)
    if (name == key && value.isNumber())
      return value.asNumber();
  return std::nullopt;
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
