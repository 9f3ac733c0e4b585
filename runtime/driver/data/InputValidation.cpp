//===- InputValidation.cpp - check inputs against an entry's signature ----===//
//
// Dim binding walks the inputs in order, remembering which input (or --dim)
// first fixed each symbolic dim so a conflict names both sides.
//
//===----------------------------------------------------------------------===//
#include "data/InputValidation.h"
#include "core/Error.h"

#include <algorithm>
#include <set>

namespace txrt::driver {

std::string vocabKeyFor(const ModelInfo &model, std::string_view role) {
  auto has = [&](const char *key) {
    return model.configNumber(key).has_value();
  };
  if (role == "source" && has("src_vocab"))
    return "src_vocab";
  if ((role == "target_in" || role == "target_out") && has("tgt_vocab"))
    return "tgt_vocab";
  if (has("vocab"))
    return "vocab";
  return "";
}

std::optional<VocabularyLimit> vocabularyLimit(const ModelInfo &model,
                                               std::string_view role) {
  std::vector<std::string_view> roles;
  if (role == "source")
    roles = {"source"};
  else if (role == "target_in")
    roles = {"target_in", "target_out"};
  else
    roles = {"tokens", "targets"};
  std::optional<VocabularyLimit> found;
  for (const EntryInfo &entry : model.entries)
    for (const TensorSig &sig : entry.inputs) {
      if (!sig.ids || sig.ids->begin > 0 ||
          std::find(roles.begin(), roles.end(), sig.role) == roles.end())
        continue;
      if (!found || sig.ids->end < found->limit)
        found = VocabularyLimit{sig.ids->end, "", sig.ids->what};
    }
  std::string named = vocabKeyFor(model, role);
  if (!found) { // metadata without id ranges: the config item by name
    std::optional<int64_t> count =
        named.empty() ? std::nullopt : model.configCount(named);
    if (!count)
      return std::nullopt;
    return VocabularyLimit{*count, model.configRoot(named), ""};
  }
  // An item written as another's name (`src_vocab = vocab`) is raised
  // through that one: `-D src_vocab=N` leaves what `vocab` sizes as it is.
  if (!named.empty() && model.configCount(named) == found->limit) {
    found->key = model.configRoot(named);
    return found;
  }
  // Another item of that value names the vocabulary only if it is named
  // like one (`n_vocab`, `vocab_size`): `d = 8` beside 8 classes is not
  // what to raise.
  std::set<std::string> candidates;
  for (const ConfigValue &value : model.config)
    if (value.number && *value.number == double(found->limit) &&
        value.key.find("vocab") != std::string::npos)
      candidates.insert(model.configRoot(value.key));
  if (candidates.size() == 1)
    found->key = *candidates.begin();
  return found;
}

std::string sharedSourceTargetTable(const ModelInfo &model) {
  std::vector<std::string> source, target;
  for (const EntryInfo &entry : model.entries)
    for (const TensorSig &sig : entry.inputs) {
      if (!sig.ids)
        continue;
      // The target side: the decoder's ids and the loss's classes (an
      // output projection tied to the source embedding).
      std::vector<std::string> *side =
          sig.role == "source"                                  ? &source
          : sig.role == "target_in" || sig.role == "target_out" ? &target
                                                                : nullptr;
      if (side)
        side->insert(side->end(), sig.ids->tables.begin(),
                     sig.ids->tables.end());
    }
  for (const std::string &table : source)
    if (std::find(target.begin(), target.end(), table) != target.end())
      return table;
  return "";
}

void checkIds(const TensorSig &sig, const Tensor &input,
              const InputSource &source, const std::vector<int64_t> &dims) {
  if (input.dtype != DType::I32)
    return;
  // A bound that is a dim's value: checked as a range of its value now (an
  // id outside it failed inside the kernel, exit 1, not naming the input).
  for (const DimIdRange &bound : sig.dimIds) {
    const int64_t n = bound.size.isSymbolic()
                          ? (size_t(bound.size.dim) < dims.size()
                                 ? dims[size_t(bound.size.dim)]
                                 : -1)
                          : bound.size.size;
    if (n < 0)
      continue;
    TensorSig one = sig;
    one.ids = IdRange{bound.negative ? -n : 0, n, bound.also, bound.what, {}};
    one.dimIds.clear();
    checkIds(one, input, source);
  }
  if (!sig.ids)
    return;
  const IdRange &range = *sig.ids;
  const int32_t *ids = input.as<int32_t>();
  int64_t count = input.numElements();
  for (int64_t i = 0; i < count; ++i) {
    if (range.accepts(ids[i]))
      continue;
    Shape index(input.shape.size(), 0);
    int64_t flat = i;
    for (size_t d = input.shape.size(); d-- > 0;) {
      index[d] = flat % input.shape[d];
      flat /= input.shape[d];
    }
    std::string also;
    for (int64_t value : range.also)
      also += (also.empty() ? "" : ", ") + std::to_string(value);
    // An id the file does not hold: config pad, filling a short row.
    std::string padded;
    if (index.size() == 2 &&
        size_t(index[0]) < source.paddedRowLengths.size() &&
        index[1] >= source.paddedRowLengths[size_t(index[0])])
      padded = "; it is config 'pad', which fills the short rows of a text "
               "input (row " +
               std::to_string(index[0]) + " has " +
               std::to_string(source.paddedRowLengths[size_t(index[0])]) +
               " values): give every row all its values, or a .npy";
    throw InputError(
        source.describe() + ": id " + std::to_string(ids[i]) + " at " +
        formatShape(index) + " is outside [" + std::to_string(range.begin) +
        ", " + std::to_string(range.end) + "), " + range.what +
        (also.empty() ? "" : " (also allowed: " + also + ")") + padded);
  }
}

namespace {

/// A cache the entry writes in place takes the new positions at its last
/// rows: with fewer rows than new positions the write would start before its
/// buffer, so such inputs are refused, naming both sides.
void checkCacheWrites(const ModelInfo &model, const EntryInfo &entry,
                      const std::vector<Tensor> &inputs,
                      const std::vector<InputSource> &sources,
                      const std::vector<int64_t> &values) {
  for (size_t i = 0; i < entry.inputs.size(); ++i) {
    const std::optional<DimRef> &rows = entry.inputs[i].writesLastRows;
    if (!rows)
      continue;
    const int64_t held = inputs[i].shape[1];
    const int64_t written =
        rows->isSymbolic() ? values[size_t(rows->dim)] : rows->size;
    if (written <= held)
      continue;
    // Who has the new positions: the first input with that dim.
    std::string fresh = "the entry writes " + std::to_string(written) +
                        " new position(s)";
    if (rows->isSymbolic()) {
      const std::string &name = model.dims[size_t(rows->dim)].name;
      fresh = "--dim " + name + "=" + std::to_string(written) + " gives " +
              std::to_string(written) + " new position(s)";
      for (size_t j = 0; j < entry.inputs.size(); ++j) {
        const std::vector<DimRef> &shape = entry.inputs[j].shape;
        auto axis = std::find_if(shape.begin(), shape.end(), [&](auto &ref) {
          return ref.dim == rows->dim;
        });
        if (axis == shape.end())
          continue;
        fresh = sources[j].describe() + " has " + std::to_string(written) +
                " new position(s) (dim " +
                std::to_string(axis - shape.begin()) + ", " + name + ")";
        break;
      }
    }
    const DimRef &cacheAxis = entry.inputs[i].shape[1];
    throw InputError(
        fresh + " but the cache " + sources[i].describe() + " holds only " +
        std::to_string(held) + " (dim 1" +
        (cacheAxis.isSymbolic()
             ? ", " + model.dims[size_t(cacheAxis.dim)].name
             : std::string()) +
        "); entry '" + entry.name +
        "' writes the new positions at the cache's last rows, so the cache "
        "must hold every position so far, the new ones last");
  }
}

} // namespace

void checkInputShape(const ModelInfo &model, const TensorSig &sig,
                     const Shape &shape, const InputSource &source) {
  auto where = [&] { return source.describe(); };
  auto expected = [&] { return model.formatSignatureShape(sig); };
  if (shape.size() != sig.shape.size())
    throw InputError(where() + ": expected rank " +
                     std::to_string(sig.shape.size()) + " " + expected() +
                     " but the file has rank " + std::to_string(shape.size()) +
                     " " + formatShape(shape));
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    const DimRef &ref = sig.shape[axis];
    auto axisText = [&] { return "dim " + std::to_string(axis); };
    if (!ref.isSymbolic()) {
      if (shape[axis] != ref.size)
        throw InputError(
            where() + ": " + axisText() + " is " + std::to_string(shape[axis]) +
            " but the model expects " + std::to_string(ref.size) + " (shape " +
            expected() + ", the file has " + formatShape(shape) + ")");
      continue;
    }
    const DimInfo &dim = model.dims[size_t(ref.dim)];
    auto dimText = [&] { return axisText() + " (" + dim.name + ")"; };
    if (shape[axis] < 1)
      throw InputError(where() + ": " + dimText() + " is " +
                       std::to_string(shape[axis]) +
                       " but dims must be at least 1");
    if (shape[axis] > dim.bound) {
      // Ragged text rows: the first line over the bound (the others may
      // be short).
      std::string line;
      if (axis == 1 && shape.size() == 2 &&
          source.paddedRowLines.size() == source.paddedRowLengths.size())
        for (size_t r = 0; r < source.paddedRowLengths.size(); ++r)
          if (source.paddedRowLengths[r] > dim.bound) {
            line = " (line " + std::to_string(source.paddedRowLines[r]) +
                   " has " + std::to_string(source.paddedRowLengths[r]) +
                   " values)";
            break;
          }
      throw InputError(where() + ": " + dimText() + " is " +
                       std::to_string(shape[axis]) + ", over its bound " +
                       std::to_string(dim.bound) + line);
    }
  }
}

std::vector<int64_t> bindDims(const ModelInfo &model, const EntryInfo &entry,
                              const std::vector<Tensor> &inputs,
                              const std::vector<InputSource> &sources,
                              const DimOverrides &overrides) {
  const size_t numDims = model.dims.size();
  std::vector<int64_t> values(numDims, 0);
  // Who fixed each dim, as in "... but input 'src' ('f') has B=3" or
  // "... but --dim B=3": the input's index, kByDimFlag, or kUnbound. The
  // messages are only built when one is thrown (an entry call of a decoded
  // token comes here, and should not pay for them).
  constexpr size_t kUnbound = size_t(-1), kByDimFlag = size_t(-2);
  std::vector<size_t> boundBy(numDims, kUnbound);
  auto boundByText = [&](size_t d) {
    return boundBy[d] == kByDimFlag ? std::string("--dim")
                                    : sources[boundBy[d]].describe() + " has";
  };

  for (const auto &[name, value] : overrides) {
    size_t d = 0;
    while (d < numDims && model.dims[d].name != name)
      ++d;
    if (d == numDims)
      throw InputError("--dim " + name + "=" + std::to_string(value) +
                       ": the model has no dim '" + name + "'");
    if (value < 1 || value > model.dims[d].bound)
      throw InputError("--dim " + name + "=" + std::to_string(value) +
                       " is outside [1, " +
                       std::to_string(model.dims[d].bound) + "]");
    values[d] = value;
    boundBy[d] = kByDimFlag;
  }

  for (size_t i = 0; i < entry.inputs.size(); ++i) {
    const TensorSig &sig = entry.inputs[i];
    const Shape &shape = inputs[i].shape;
    auto where = [&] { return sources[i].describe(); };
    auto expected = [&] { return model.formatSignatureShape(sig); };
    checkInputShape(model, sig, shape, sources[i]);
    for (size_t axis = 0; axis < shape.size(); ++axis) {
      const DimRef &ref = sig.shape[axis];
      auto axisText = [&] { return "dim " + std::to_string(axis); };
      if (!ref.isSymbolic())
        continue;
      const size_t d = size_t(ref.dim);
      const DimInfo &dim = model.dims[d];
      auto dimText = [&] { return axisText() + " (" + dim.name + ")"; };
      if (values[d] == 0) {
        values[d] = shape[axis];
        boundBy[d] = i;
      } else if (values[d] != shape[axis] && boundBy[d] == i) {
        // One dim twice in one input ([B, B]): name its first axis, not
        // the input again as if another one disagreed.
        size_t first = 0;
        while (first < axis && !(sig.shape[first].isSymbolic() &&
                                 size_t(sig.shape[first].dim) == d))
          ++first;
        throw InputError(where() + ": " + dimText() + " is " +
                         std::to_string(shape[axis]) + " but its dim " +
                         std::to_string(first) + " is " + dim.name + "=" +
                         std::to_string(values[d]) + " (shape " + expected() +
                         ", the file has " + formatShape(shape) + ")");
      } else if (values[d] != shape[axis]) {
        throw InputError(where() + ": " + dimText() + " is " +
                         std::to_string(shape[axis]) + " but " +
                         boundByText(d) + " " + dim.name + "=" +
                         std::to_string(values[d]));
      }
    }
  }

  // A --dim of a dim the entry does not use would be ignored silently.
  if (!overrides.empty()) {
    std::vector<bool> used(numDims, false);
    for (const std::vector<TensorSig> *sigs : {&entry.inputs, &entry.outputs})
      for (const TensorSig &sig : *sigs)
        for (const DimRef &ref : sig.shape)
          if (ref.isSymbolic())
            used[size_t(ref.dim)] = true;
    for (const auto &[name, value] : overrides)
      for (size_t d = 0; d < numDims; ++d)
        if (model.dims[d].name == name && !used[d]) {
          std::string names;
          for (size_t u = 0; u < numDims; ++u)
            if (used[u])
              names += (names.empty() ? "" : ", ") + model.dims[u].name;
          throw InputError("--dim " + name + "=" + std::to_string(value) +
                           ": entry '" + entry.name + "' does not use dim '" +
                           name + "'" +
                           (names.empty() ? std::string(" (it uses no dim)")
                                          : " (it uses " + names + ")"));
        }
  }

  for (const TensorSig &sig : entry.outputs)
    for (const DimRef &ref : sig.shape)
      if (ref.isSymbolic() && values[size_t(ref.dim)] == 0) {
        const std::string &name = model.dims[size_t(ref.dim)].name;
        throw InputError("output '" + sig.name + "' of entry '" + entry.name +
                         "' uses dim " + name +
                         " that no input determines; pass --dim " + name +
                         "=N");
      }
  for (int64_t &value : values)
    if (value == 0)
      value = 1; // a dim this entry does not use
  checkCacheWrites(model, entry, inputs, sources, values);
  return values;
}

Shape concreteShape(const TensorSig &sig, const std::vector<int64_t> &dims) {
  Shape shape;
  for (const DimRef &ref : sig.shape)
    shape.push_back(ref.isSymbolic() ? dims[size_t(ref.dim)] : ref.size);
  return shape;
}

} // namespace txrt::driver
