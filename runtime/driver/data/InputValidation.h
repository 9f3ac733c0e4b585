//===- InputValidation.h - inputs against a signature -----------*- C++ -*-===//
//
// Before an entry runs, its inputs are checked against the signature and the
// runtime value of every model dim is derived from them:
//
//  - rank: each input has the rank of its signature;
//  - static dims equal the signature's constants;
//  - a symbolic dim takes the same value in every input that uses it (and in
//    --dim NAME=N when given), with 1 <= value <= bound;
//  - ids: an i32 input whose signature has an id range (what the compiled
//    program indexes with it: embedding rows, cross-entropy classes and its
//    ignore_index) holds only ids in it; other i32 inputs take any value.
//  - caches: an input the entry updates in place as a KV cache
//    ("writes_last_rows", decode_step's and lm_step's self-attention caches)
//    holds at least as many positions (dim 1) as there are new ones (T):
//    they are written at its last rows.
//
// Dims used by neither inputs nor outputs get the value 1; a dim only an
// output uses must come from --dim. Errors are InputErrors naming the input,
// the file, the dim and both values.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_INPUTVALIDATION_H
#define TXRT_DRIVER_INPUTVALIDATION_H

#include "data/InputFiles.h"
#include "core/ModelInfo.h"
#include "core/Tensor.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace txrt::driver {

/// `--dim NAME=N` values.
using DimOverrides = std::vector<std::pair<std::string, int64_t>>;

/// The config key bounding the ids of an i32 input with `role`, "" for none
/// (what the data commands build vocabularies for; `run` checks ids by
/// checkIds): src_vocab for "source", tgt_vocab for "target_in" and
/// "target_out" (when the config has them), else vocab.
std::string vocabKeyFor(const ModelInfo &model, std::string_view role);

/// The ids a vocabulary for `role` ("source", "target_in", "tokens") may
/// use: the smallest id range txc recorded (metadata "ids": an embedding's
/// rows, a cross-entropy's classes) over the entry inputs of that role (for
/// "target_in" also "target_out"; for "tokens" also "targets"), with the
/// config item of that value named like a vocabulary (`vocab`, `n_vocab`)
/// when there is one; vocabKeyFor's item where
/// the metadata has no ranges; nullopt for neither. (The config item named
/// like a vocabulary alone was taken before: a spec with `n_vocab`, or
/// whose output has fewer classes than `vocab`, failed in a kernel at the
/// first step.)
struct VocabularyLimit {
  int64_t limit = 0;
  std::string key;  ///< a config item of that value ("": none)
  std::string what; ///< the range's description ("": from the config)
};
std::optional<VocabularyLimit> vocabularyLimit(const ModelInfo &model,
                                               std::string_view role);

/// A parameter whose rows both the source ids and the target ids (the
/// decoder's, or the loss's classes) pick: an embedding shared by encoder
/// and decoder, or by the encoder and the output projection (metadata
/// "tables"), or "" when
/// none: such a model needs one vocabulary for both sides, or a row would be
/// one word in the source and another in the target.
std::string sharedSourceTargetTable(const ModelInfo &model);

/// Checks one input's shape against its signature alone: its rank, its
/// static dims, and each symbolic dim within [1, bound] (bindDims checks
/// the dims' agreement across inputs). Called on an .npy file's header,
/// before its data is read: a shape past the bounds was read in full
/// first (a 19 GB file ran out of memory instead of naming the bound).
void checkInputShape(const ModelInfo &model, const TensorSig &sig,
                     const Shape &shape, const InputSource &source);

/// Checks ranks, static and symbolic dims of `inputs` (one per entry input,
/// in order, already converted to the declared dtypes) and the caches' rows
/// against the new positions, and returns the value of every model dim, in
/// the order of ModelInfo::dims.
std::vector<int64_t> bindDims(const ModelInfo &model, const EntryInfo &entry,
                              const std::vector<Tensor> &inputs,
                              const std::vector<InputSource> &sources,
                              const DimOverrides &overrides = {});

/// Checks that every id of `input` is one its signature's id range accepts
/// (nothing to check without a range), and each of its dim-bounded ranges
/// under the dims' values `dims` (bindDims).
void checkIds(const TensorSig &sig, const Tensor &input,
              const InputSource &source, const std::vector<int64_t> &dims = {});

/// The concrete shape of an output under the bound dims.
Shape concreteShape(const TensorSig &sig, const std::vector<int64_t> &dims);

} // namespace txrt::driver

#endif // TXRT_DRIVER_INPUTVALIDATION_H
