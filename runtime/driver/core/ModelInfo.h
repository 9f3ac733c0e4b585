//===- ModelInfo.h - the compiled model's metadata, parsed ------*- C++ -*-===//
//
// The typed view of txc_model_json (see ModelAbi.h): config, symbolic dims
// with bounds, parameters with their arena offsets and initializers, and the
// entries with their input/output signatures and arena sizes. Parsing
// validates everything the driver later relies on (known dtypes and
// initializers, dim names, parameters inside the arena and not overlapping,
// entry inputs and outputs whose byte size at the dims' bounds fits int64),
// so a malformed metadata string is a ModelError, never a crash.
//
// Versions 1 and 2 are read. Version 2 adds training (ModelAbi.h): an entry
// kind, per-parameter gradient and Adam moment offsets (validated like the
// parameters: inside the arena, no two regions overlapping) and the
// optimizer. A version 1 entry is a forward entry.
//
// Roles (ModelAbi.h) say what kind of model it is and what each entry and
// entry input means; the driver dispatches on them, never on names.
// Metadata without them (older models) reads as kind None with empty roles.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_MODELINFO_H
#define TXRT_DRIVER_MODELINFO_H

#include "core/Init.h"
#include "core/Optimizer.h"
#include "core/Tensor.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace txrt::driver {

/// A symbolic size with its upper bound.
struct DimInfo {
  std::string name;
  int64_t bound = 0;
  /// Metadata dims[i].config: the config item the bound is ("" when the
  /// bound is a literal or an expression); absent in metadata written
  /// before txc recorded it.
  std::optional<std::string> config;
};

/// One dimension of an entry signature: a constant, or model dim `dim`.
struct DimRef {
  int64_t size = 0; ///< the constant (when dim < 0)
  int dim = -1;     ///< index into ModelInfo::dims, or -1
  bool isSymbolic() const { return dim >= 0; }
};

/// The ids an i32 input may hold: [begin, end) or one of `also` (an
/// ignore_index), as the ops that read it need (metadata "ids").
struct IdRange {
  int64_t begin = 0, end = 0;
  std::vector<int64_t> also;
  /// What the ids index: "the 20 rows of the embedding 'emb.weight' at
  /// model.tx:3:7".
  std::string what;
  /// The ignore_index of a cross-entropy reading the ids (metadata
  /// "ignored"; absent in older executables).
  std::optional<int64_t> ignored;
  /// Whether a cross-entropy reads the ids as its targets (metadata
  /// "scored"; absent in older executables).
  bool scored = false;
  /// The parameters whose rows the ids pick (metadata "tables": an
  /// embedding's table, `wte[ids]`; absent in older executables).
  std::vector<std::string> tables;
  bool accepts(int64_t id) const {
    return (id >= begin && id < end) ||
           std::find(also.begin(), also.end(), id) != also.end();
  }
};

/// Ids bounded by a dim's value at the call (metadata "dim_ids"): an index
/// along an axis of size T, [-T, T), or a cross-entropy's classes over a
/// dim C, [0, C), or one of `also`.
struct DimIdRange {
  DimRef size;
  bool negative = false;
  std::vector<int64_t> also;
  std::string what;
};

/// An input or output of an entry.
struct TensorSig {
  std::string name;
  DType dtype = DType::F32;
  std::vector<DimRef> shape;
  /// i32 inputs that index something (absent: any value is valid).
  std::optional<IdRange> ids;
  /// ... and bounds that depend on a dim's value (each must accept an id).
  std::vector<DimIdRange> dimIds;
  /// What the input means ("tokens", "target_in", "cache", ...; see
  /// ModelAbi.h), or "" (outputs: "cache" or "").
  std::string role;
  /// A cache input the entry updates in place (metadata
  /// "writes_last_rows"): it writes this many rows (the new positions) at the
  /// end of axis 1, so axis 1 must hold at least that many.
  std::optional<DimRef> writesLastRows;
  /// The size the spec writes for `axis` (i32[8, T]: 8 for axis 0), or 1
  /// where the axis is a dim: what padIdsTo (data/Batching.h) grows a
  /// batch's ids to.
  int64_t padTo(size_t axis) const {
    return axis < shape.size() && !shape[axis].isSymbolic() ? shape[axis].size
                                                            : 1;
  }
};

/// A parameter and where it lives in the parameter arena.
struct ParamInfo {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  InitKind init = InitKind::Zeros;
  double initStd = 1.0; ///< the normal initializer's standard deviation
  int64_t offset = 0;   ///< bytes from the start of the arena
  int64_t numElements = 0;
  int64_t byteSize = 0;
  /// Version 2: where the gradient and Adam's moments live (same dtype and
  /// shape as the parameter); -1 when the model has no training state.
  int64_t gradOffset = -1, expAvgOffset = -1, expAvgSqOffset = -1;
  /// Where the bf16 copy that bf16 linears read lives (txc
  /// --precision=bf16; byteSize / 2 bytes); -1 for none.
  int64_t bf16Offset = -1;
  bool hasTrainingState() const { return gradOffset >= 0; }
};

/// What an entry does (metadata "kind"; version 1 entries are Forward).
enum class EntryKind {
  Forward,   ///< inputs -> outputs, parameters untouched
  TrainStep, ///< forward, backward and the optimizer update; outputs the loss
  TrainGrad, ///< forward and backward; gradients left in the arena
};

/// "forward", "train_step", "train_grad".
const char *entryKindName(EntryKind kind);

/// A compiled entry point.
struct EntryInfo {
  std::string name;
  EntryKind kind = EntryKind::Forward;
  /// What the entry is for in its model kind ("train", "encode", "decode",
  /// "logits", "classify", "decode_init", "decode_step", "lm_step",
  /// "train_grad"), or "" (only `run` calls it).
  std::string role;
  int64_t arenaBytes = 0;  ///< the planned activation arena
  int64_t tensorBytes = 0; ///< all its tensors without planning
  std::vector<TensorSig> inputs, outputs;
  /// A train entry's loss (metadata "loss"): one cross-entropy of input
  /// `lossTargets`' ids, the mean over the positions whose target is not
  /// `lossIgnoreIndex` (lossTargets >= 0), or another form (-1; also an
  /// older executable's, which records none: lossFormKnown false).
  bool lossFormKnown = false;
  int lossTargets = -1;
  int64_t lossIgnoreIndex = -100;

  /// The first input with `role`, or nullptr.
  const TensorSig *findInputByRole(std::string_view role) const;
  /// The index of the first input with `role` in `inputs`, or -1.
  int findInputIndexByRole(std::string_view role) const;
};

/// What kind of model the spec declares (metadata "kind").
enum class ModelKind {
  None,          ///< no kind: only run, info and bench apply
  Seq2Seq,       ///< encoder-decoder: train, encode, decode
  LanguageModel, ///< decoder-only: train, logits (lm_step with a KV cache)
  Classifier,    ///< sequence classifier: train, classify
};

/// "none", "seq2seq", "language_model", "classifier".
const char *modelKindName(ModelKind kind);
std::optional<ModelKind> parseModelKindName(std::string_view name);

/// A config value: its JSON text as the metadata wrote it, and its value
/// when it is a number.
struct ConfigValue {
  std::string key;
  std::string json;
  std::optional<double> number;
};

struct ModelInfo {
  int64_t version = 0;
  std::string model, source, compileFlags;
  /// The metadata JSON this was parsed from.
  std::string metadataJson;
  /// "fp32" or "bf16" (txc --precision; docs/precision.md).
  std::string precision = "fp32";
  /// "cpu" or "cuda" (txc --target; absent in the metadata: cpu).
  std::string target = "cpu";
  std::vector<ConfigValue> config; ///< in the metadata's order
  /// Config items written as another's name (metadata "config_aliases").
  std::map<std::string, std::string> configAliases;
  /// txc's hash of what the entries that do not train compute
  /// (tx-inference-fingerprint; 16 hex digits), "" in older metadata: a
  /// checkpoint with the same one computes the same there whatever its
  /// config says.
  std::string inferenceFingerprint;
  /// Metadata "size_configs": config items that size entry inputs (a batch
  /// or a length written as a constant); empty in older metadata.
  std::vector<std::string> sizeConfigs;
  /// The x86 extensions txc compiled the native code for (LLVM's names;
  /// empty in older metadata): each must be on this CPU before any work.
  std::vector<std::string> cpuFeatures;
  std::vector<DimInfo> dims;
  int64_t paramArenaBytes = 0;
  std::vector<ParamInfo> params;
  std::vector<EntryInfo> entries;
  /// Version 2 models that can train.
  std::optional<OptimizerInfo> optimizer;
  ModelKind kind = ModelKind::None;
  /// Why txc derived no decode_step / lm_step (metadata "no_kv_cache"):
  /// decoding re-runs the prefix. Empty when derived, or in older metadata.
  std::string noKvCache;
  /// The spec declared no `kind`; txc inferred it (and the roles) from the
  /// legacy input names (src, tgt_in, tgt_out, tgt, memory).
  bool kindInferred = false;

  /// Parses and validates the metadata; throws ModelError.
  static ModelInfo parse(std::string_view json);

  const EntryInfo *findEntry(std::string_view name) const;
  /// The first entry of `kind`, or nullptr.
  const EntryInfo *findEntryOfKind(EntryKind kind) const;
  /// The entry with `role` (roles are unique), or nullptr; "" finds none.
  const EntryInfo *findEntryByRole(std::string_view role) const;
  const ParamInfo *findParam(std::string_view name) const;
  /// A numeric config value, or nullopt when absent or not a number.
  std::optional<double> configNumber(std::string_view key) const;
  /// A config value that is a whole number, clamped to [0, 2^53] (a
  /// vocabulary size or an id: never converted from an out-of-range double).
  std::optional<int64_t> configCount(std::string_view key) const;
  /// The config key a dim's bound is ("max_len" for `S <= max_len`), as
  /// txc recorded it (metadata dims[i].config; "" for a literal bound or an
  /// expression); for metadata without it, the config key of the same value,
  /// or "" when none or several have it.
  std::string configKeyForBound(const DimInfo &dim) const;
  /// The config item `key` is another name for, through every alias
  /// (`src_vocab = vocab`: "vocab"); `key` itself when it is no alias.
  std::string configRoot(const std::string &key) const;
  /// The txc flags that build this model with the `-D key=value` of
  /// `defines` (" -D a=1 -D b=2"): compileFlags with those values in place
  /// of its own and the others added (" -D d=16 -D a=1 ..."). Advice of
  /// the defines alone built the spec's defaults for every value this
  /// executable was compiled with.
  std::string compileFlagsWith(const std::string &defines) const;
  /// Whether every parameter has a gradient and Adam moments.
  bool hasTrainingState() const;
  /// The total number of parameter elements.
  int64_t totalParamElements() const;

  /// "[B, S, 512]".
  std::string formatSignatureShape(const TensorSig &sig) const;
  /// "src: i32[B, S]".
  std::string formatSignature(const TensorSig &sig) const;
};

} // namespace txrt::driver

#endif // TXRT_DRIVER_MODELINFO_H
