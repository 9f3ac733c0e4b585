//===- InputValidation.cpp - check inputs against an entry's signature ----===//
//
// Dim binding walks the inputs in order, remembering which input (or --dim)
// first fixed each symbolic dim so a conflict names both sides.
//
//===----------------------------------------------------------------------===//
#include "data/InputValidation.h"
#include "core/Error.h"

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

void checkIds(const TensorSig &sig, const Tensor &input,
              const InputSource &source) {
  if (input.dtype != DType::I32 || !sig.ids)
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
    throw InputError(source.describe() + ": id " + std::to_string(ids[i]) +
                     " at " + formatShape(index) + " is outside [" +
                     std::to_string(range.begin) + ", " +
                     std::to_string(range.end) + "), " + range.what +
                     (also.empty() ? "" : " (also allowed: " + also + ")"));
  }
}

std::vector<int64_t> bindDims(const ModelInfo &model, const EntryInfo &entry,
                              const std::vector<Tensor> &inputs,
                              const std::vector<InputSource> &sources,
                              const DimOverrides &overrides) {
  const size_t numDims = model.dims.size();
  std::vector<int64_t> values(numDims, 0);
  // Who fixed each dim, as in "... but input 'src' ('f') has B=3"
  // or "... but --dim B=3".
  std::vector<std::string> boundBy(numDims);

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
    boundBy[d] = "--dim";
  }

  for (size_t i = 0; i < entry.inputs.size(); ++i) {
    const TensorSig &sig = entry.inputs[i];
    const Shape &shape = inputs[i].shape;
    const std::string where = sources[i].describe();
    const std::string expected = model.formatSignatureShape(sig);
    if (shape.size() != sig.shape.size())
      throw InputError(where + ": expected rank " +
                       std::to_string(sig.shape.size()) + " " + expected +
                       " but the file has rank " +
                       std::to_string(shape.size()) + " " + formatShape(shape));
    for (size_t axis = 0; axis < shape.size(); ++axis) {
      const DimRef &ref = sig.shape[axis];
      const std::string axisText = "dim " + std::to_string(axis);
      if (!ref.isSymbolic()) {
        if (shape[axis] != ref.size)
          throw InputError(where + ": " + axisText + " is " +
                           std::to_string(shape[axis]) +
                           " but the model expects " +
                           std::to_string(ref.size) + " (shape " + expected +
                           ", the file has " + formatShape(shape) + ")");
        continue;
      }
      const size_t d = size_t(ref.dim);
      const DimInfo &dim = model.dims[d];
      const std::string dimText = axisText + " (" + dim.name + ")";
      if (shape[axis] < 1)
        throw InputError(where + ": " + dimText + " is " +
                         std::to_string(shape[axis]) +
                         " but dims must be at least 1");
      if (shape[axis] > dim.bound)
        throw InputError(where + ": " + dimText + " is " +
                         std::to_string(shape[axis]) + ", over its bound " +
                         std::to_string(dim.bound));
      if (values[d] == 0) {
        values[d] = shape[axis];
        boundBy[d] = sources[i].describe() + " has";
      } else if (values[d] != shape[axis]) {
        throw InputError(where + ": " + dimText + " is " +
                         std::to_string(shape[axis]) + " but " + boundBy[d] +
                         " " + dim.name + "=" + std::to_string(values[d]));
      }
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
  return values;
}

Shape concreteShape(const TensorSig &sig, const std::vector<int64_t> &dims) {
  Shape shape;
  for (const DimRef &ref : sig.shape)
    shape.push_back(ref.isSymbolic() ? dims[size_t(ref.dim)] : ref.size);
  return shape;
}

} // namespace txrt::driver
