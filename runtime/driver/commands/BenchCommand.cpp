//===- BenchCommand.cpp - `PROGRAM bench`: time training and decoding -----===//
#include "commands/BenchCommand.h"
#include "cli/OutputPaths.h"
#include "commands/TranslateCommand.h"
#include "core/Error.h"
#include "core/Init.h"
#include "core/Memory.h"
#include "core/ModelRunner.h"
#include "data/Batching.h"
#include "data/InputValidation.h"
#include "data/ParallelText.h"
#include "data/Tokenizer.h"
#include "decoding/Decoding.h"
#include "formats/FileIO.h"
#include "formats/Npy.h"
#include "loop/Checkpoint.h"
#include "loop/Ema.h"
#include "loop/Profile.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <sys/resource.h>

namespace txrt::driver {

double peakResidentMiB() {
  struct rusage usage {};
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return 0;
  return double(usage.ru_maxrss) / 1024.0; // KiB on Linux
}

namespace {

/// `mib` rounded to the 0.1 MB the bench prints.
double roundedMiB(double mib) { return std::round(mib * 10.0) / 10.0; }

std::string formatMiB(double mib) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", mib);
  return text;
}

/// The memory no run can do without: the parameters and, when the bench
/// trains (`training`), their gradients and Adam's two moments (a
/// --decode-only run printed a floor above its own peak). The total is the
/// sum of the parts as printed, so the line adds up (0.7 + 0.7 + 1.3 was
/// printed "= 2.6 MB"); it is within 0.15 MB of the exact sum.
std::string memoryFloorText(const ModelInfo &model, bool training) {
  double params = 0, state = 0;
  for (const ParamInfo &param : model.params) {
    params += double(param.byteSize);
    if (param.hasTrainingState() && training)
      state += double(param.byteSize);
  }
  const double mib = 1.0 / (1024.0 * 1024.0);
  const double paramsMiB = roundedMiB(params * mib);
  std::string text = "floor: parameters " + formatMiB(paramsMiB) + " MB";
  if (state > 0) {
    const double gradientsMiB = roundedMiB(state * mib);
    const double momentsMiB = roundedMiB(2 * state * mib);
    text += " + gradients " + formatMiB(gradientsMiB) + " + Adam moments " +
            formatMiB(momentsMiB) + " = " +
            formatMiB(paramsMiB + gradientsMiB + momentsMiB) + " MB";
  }
  return text;
}

/// `text` without white space around it, in lower case: libgomp reads its
/// variables so.
std::string trimmedLower(const std::string &text) {
  auto space = [](char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0;
  };
  size_t first = 0, last = text.size();
  while (first < last && space(text[first]))
    ++first;
  while (last > first && space(text[last - 1]))
    --last;
  std::string word = text.substr(first, last - first);
  for (char &c : word)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  return word;
}

/// Whether libgomp takes `policy` as an OMP_WAIT_POLICY: "active" or
/// "passive" (libgomp's parse_wait_policy); it ignores any other value.
bool libgompTakesWaitPolicy(const std::string &policy) {
  const std::string word = trimmedLower(policy);
  return word == "active" || word == "passive";
}

/// Whether libgomp takes `count` as a GOMP_SPINCOUNT: "infinite",
/// "infinity", or a decimal number with an optional k, m, g or t, white
/// space allowed before the suffix (libgomp's parse_spincount); it ignores
/// any other value, with its own warning.
bool libgompTakesSpinCount(const std::string &count) {
  const std::string word = trimmedLower(count);
  if (word == "infinite" || word == "infinity")
    return true;
  size_t end = 0;
  while (end < word.size() &&
         std::isdigit(static_cast<unsigned char>(word[end])))
    ++end;
  if (end == 0)
    return false;
  while (end < word.size() &&
         std::isspace(static_cast<unsigned char>(word[end])))
    ++end;
  if (end < word.size() && std::strchr("kmgt", word[end]) != nullptr)
    ++end;
  return end == word.size();
}

/// How libgomp's idle threads wait in this process (txrt's default is set
/// before libgomp starts: txrt_apply_default_wait_policy). An
/// OMP_WAIT_POLICY libgomp ignores was echoed as if in effect.
std::string waitPolicyText() {
  std::string ignored;
  if (const char *policy = std::getenv("OMP_WAIT_POLICY")) {
    if (libgompTakesWaitPolicy(policy))
      return std::string("OMP_WAIT_POLICY=") + policy;
    ignored = std::string(" (OMP_WAIT_POLICY=") + policy +
              " is ignored: libgomp takes active or passive)";
  }
  if (const char *spins = std::getenv("GOMP_SPINCOUNT")) {
    if (libgompTakesSpinCount(spins))
      return std::string("GOMP_SPINCOUNT=") + spins + ignored;
    ignored += std::string(" (GOMP_SPINCOUNT='") + spins +
               "' is ignored: libgomp takes a number, with k, M, G or T, or "
               "infinite)";
  }
  return "libgomp's default (spin 300000, then sleep)" + ignored;
}

using Clock = std::chrono::steady_clock;

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

int64_t sizeOption(const std::optional<int64_t> &requested,
                   const LengthBound &bound, const char *option) {
  if (!requested)
    return bound.bound;
  if (*requested > bound.bound)
    throw InputError(std::string(option) + " " + std::to_string(*requested) +
                     " is larger than " + bound.describe());
  return *requested;
}

/// Random word ids in [kNumSpecialTokens, vocab) but the pad id (vocab:
/// the ids the model takes for `role`), `rows` x `length`.
std::vector<TokenIds> randomIds(const ModelInfo &model, const char *role,
                                int64_t rows, int64_t length, int32_t pad,
                                uint64_t key) {
  std::optional<VocabularyLimit> limit = vocabularyLimit(model, role);
  int64_t vocab = limit ? limit->limit : 64;
  // A pad id past the specials ([PAD] last, say) is one id fewer to draw.
  const bool padAmongWords = pad >= kNumSpecialTokens && pad < vocab;
  uint64_t span = uint64_t(std::max<int64_t>(
      vocab - kNumSpecialTokens - (padAmongWords ? 1 : 0), 1));
  std::vector<TokenIds> ids(static_cast<size_t>(rows));
  uint64_t draw = 0;
  for (TokenIds &row : ids)
    for (int64_t i = 0; i < length; ++i) {
      int64_t id = kNumSpecialTokens + int64_t(uniformBelow(key, draw++, span));
      if (padAmongWords && id >= pad)
        ++id;
      row.push_back(int32_t(std::min<int64_t>(id, vocab - 1)));
    }
  return ids;
}

/// Where decoding starts: the [SOS] of the tokenizer inside --load's
/// checkpoint (`loaded`), else the one a vocabulary train builds has at the
/// config's pad id (a pad id past the specials puts [SOS] where pad 3
/// does).
int32_t startId(const std::optional<Tokenizer> &loaded, int32_t pad) {
  if (loaded)
    return loaded->target.sosId();
  return Vocabulary::build({}, 1, std::clamp(pad, 0, kNumSpecialTokens - 1))
      .sosId();
}

/// --sources F.npy: int32 [B, S] source ids in [0, vocab), each row
/// right-padded with the pad id (dropped here); no row all padding.
std::vector<TokenIds> readSources(const std::string &path,
                                  const ModelInfo &model, int32_t pad) {
  Tensor ids = readNpy(path);
  const std::string what = "--sources '" + path + "'";
  if (ids.dtype != DType::I32 || ids.shape.size() != 2)
    throw InputError(what + ": expected int32 ids of shape [B, S], got " +
                     dtypeName(ids.dtype) + " of rank " +
                     std::to_string(ids.shape.size()));
  const int64_t rows = ids.shape[0], length = ids.shape[1];
  if (rows < 1 || length < 1)
    throw InputError(what + ": holds no ids (shape [" + std::to_string(rows) +
                     ", " + std::to_string(length) + "])");
  std::optional<VocabularyLimit> limit = vocabularyLimit(model, "source");
  const int64_t vocab = limit ? limit->limit : INT32_MAX;
  std::vector<TokenIds> sources(static_cast<size_t>(rows));
  const int32_t *data = ids.as<int32_t>();
  for (int64_t row = 0; row < rows; ++row) {
    TokenIds &source = sources[size_t(row)];
    for (int64_t i = 0; i < length; ++i) {
      int32_t id = data[row * length + i];
      if (id < 0 || id >= vocab)
        throw InputError(what + ": id " + std::to_string(id) + " at [" +
                         std::to_string(row) + ", " + std::to_string(i) +
                         "] is outside [0, " + std::to_string(vocab) +
                         "), the source vocabulary");
      source.push_back(id);
    }
    while (!source.empty() && source.back() == pad)
      source.pop_back();
    if (source.empty())
      throw InputError(what + ": row " + std::to_string(row) +
                       " is all padding");
  }
  return sources;
}

/// The greedy tokens as int32 [rows, length] (pad after a row's end).
Tensor tokenTensor(const std::vector<TokenIds> &rows, int64_t length,
                   int32_t pad) {
  Tensor tokens(DType::I32, {int64_t(rows.size()), length});
  int32_t *data = tokens.as<int32_t>();
  for (size_t row = 0; row < rows.size(); ++row)
    for (int64_t i = 0; i < length; ++i)
      data[int64_t(row) * length + i] =
          i < int64_t(rows[row].size()) ? rows[row][size_t(i)] : pad;
  return tokens;
}

/// saturating a * b and a + b, for size estimates.
uint64_t timesSaturated(uint64_t a, uint64_t b) {
  uint64_t product;
  return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}
uint64_t plusSaturated(uint64_t a, uint64_t b) {
  uint64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

/// The bytes bench holds besides the arenas: the synthetic ids (as vectors
/// and padded tensors) and every input and output of the entries it runs,
/// at the bench's sizes (other dims at their bounds).
uint64_t benchDataBytes(const ModelInfo &model,
                        const std::vector<const EntryInfo *> &entries,
                        const EntryInfo &srcEntry, const EntryInfo &tgtEntry,
                        int64_t batch, int64_t srcLen, int64_t tgtLen) {
  std::vector<int64_t> dims;
  for (const DimInfo &dim : model.dims)
    dims.push_back(dim.bound);
  auto bind = [&](const EntryInfo &entry, const char *role, size_t axis,
                  int64_t value) {
    for (const TensorSig &sig : entry.inputs)
      if (sig.role == role && sig.shape.size() > axis &&
          sig.shape[axis].isSymbolic())
        dims[size_t(sig.shape[axis].dim)] = value;
  };
  bind(srcEntry, "source", 0, batch);
  bind(srcEntry, "source", 1, srcLen);
  bind(tgtEntry, "target_in", 1, tgtLen);
  // The id vectors: sources, targets and two copies of the targets, plus
  // a vector header per row.
  uint64_t perRow =
      plusSaturated(uint64_t(srcLen), timesSaturated(3, uint64_t(tgtLen)));
  uint64_t total = timesSaturated(
      uint64_t(batch), plusSaturated(timesSaturated(perRow, 4), 4 * 24));
  for (const EntryInfo *entry : entries)
    for (const auto *sigs : {&entry->inputs, &entry->outputs})
      for (const TensorSig &sig : *sigs) {
        uint64_t bytes = dtypeSize(sig.dtype);
        for (int64_t size : concreteShape(sig, dims))
          bytes = timesSaturated(bytes, uint64_t(size));
        total = plusSaturated(total, bytes);
      }
  return total;
}

/// "language model": a kind's name as a message says it.
std::string kindWords(ModelKind kind) {
  std::string words = modelKindName(kind);
  std::replace(words.begin(), words.end(), '_', ' ');
  return words;
}

} // namespace

int benchCommand(const ModelInfo &model, const txc_entry_fn *entryTable,
                 const BenchOptions &options, std::ostream &out,
                 std::ostream &err) {
  if (model.kind != ModelKind::Seq2Seq)
    throw InputError("bench times the train step and decoding of seq2seq "
                     "models; '" +
                     model.model + "' is " +
                     (model.kind == ModelKind::None
                          ? std::string("a model without a kind")
                          : "a " + kindWords(model.kind)) +
                     ": time an entry with `run ENTRY --repeat N` (a "
                     "train_step entry takes N updates), or a language model "
                     "with scripts/bench-lm.sh");
  {
    std::vector<NamedPath> inputs, outputs;
    if (options.loadPath)
      inputs.push_back({*options.loadPath, "--load"});
    if (options.sourcesPath)
      inputs.push_back({*options.sourcesPath, "--sources"});
    if (options.decodeOutPath)
      outputs.push_back(
          {*options.decodeOutPath, "--decode-out", NamedPath::Format::Npy});
    if (options.beamOutPath)
      outputs.push_back(
          {*options.beamOutPath, "--beam-out", NamedPath::Format::Npy});
    if (options.profile.tracePath)
      outputs.push_back({*options.profile.tracePath, "--profile-trace",
                         NamedPath::Format::Json});
    checkOutputPaths(outputs, inputs);
    checkWritableDirectories(outputs);
  }
  ModelRunner runner(model, entryTable, options.threads);
  const EntryInfo *train = model.findEntryByRole("train");
  if (train && (train->kind != EntryKind::TrainStep || options.decodeOnly))
    train = nullptr;
  std::optional<Tokenizer> loadedTokenizer;
  if (options.loadPath) {
    SafetensorsReader file(*options.loadPath);
    runner.params().write().load(file);
    // A train step runs on them too, when there is one and not
    // --decode-only: then training values of the config count (the
    // warning); else only what the inference entries compute (the note).
    noteConfigChanges(file, model, err,
                      train ? WeightsUse::TrainingEntry : WeightsUse::Inference);
    // Said, as `run` of a training entry says it: --decode-out's tokens
    // are the raw weights', where translate would decode the average.
    if (hasAveragedWeights(file, model))
      err << "note: the raw weights of '" << file.path()
          << "' (bench runs them; it also holds their average, --ema, "
             "which translate and eval use)\n";
    loadedTokenizer = checkpointTokenizer(file);
  } else
    runner.params().write().initialize(0);
  const EntryInfo *encode = model.findEntryByRole("encode");
  const EntryInfo *decode = model.findEntryByRole("decode");
  if ((options.decodeOnly || options.beam > 0) && !(encode && decode))
    throw InputError(std::string(options.decodeOnly ? "--decode-only" : "--beam") +
                     ": model '" + model.model +
                     "' has no encode and decode entries to decode with");
  if (!train && !(encode && decode))
    throw InputError("model '" + model.model +
                     "' has neither a train_step entry nor encode and decode "
                     "entries to benchmark");
  SequenceBounds bounds = train ? sequenceBounds(model, *train, *train)
                                : sequenceBounds(model, *encode, *decode);
  const int32_t pad = modelPadId(model);
  std::vector<TokenIds> sources;
  std::optional<int64_t> givenBatch = options.batch,
                         givenSourceLength = options.sourceLength;
  if (options.sourcesPath) {
    sources = readSources(*options.sourcesPath, model, pad);
    givenBatch = int64_t(sources.size());
    givenSourceLength = 0;
    for (const TokenIds &source : sources)
      givenSourceLength =
          std::max<int64_t>(*givenSourceLength, int64_t(source.size()));
  }
  const char *batchFlag = options.sourcesPath ? "--sources' rows" : "--batch";
  const char *lengthFlag =
      options.sourcesPath ? "--sources' longest row" : "--src-len";
  const int64_t batch = sizeOption(givenBatch, bounds.batch, batchFlag);
  if (options.beam > bounds.batch.bound)
    throw InputError("--beam " + std::to_string(options.beam) +
                     " is larger than " + bounds.batch.describe() +
                     " (the hypotheses are the rows of one batch)");
  const int64_t srcLen =
      sizeOption(givenSourceLength, bounds.source, lengthFlag);
  const int64_t tgtLen =
      sizeOption(options.targetLength, bounds.target, "--tgt-len");

  // Memory first: the arenas, then a check that the synthetic data and the
  // entries' inputs and outputs fit, and only then is anything built.
  std::vector<const EntryInfo *> used;
  if (train)
    used.push_back(train);
  if (encode && decode) {
    used.push_back(encode);
    used.push_back(decode);
    if (CachedDecoder::available(model))
      for (const char *role : {"decode_init", "decode_step"})
        if (const EntryInfo *entry = model.findEntryByRole(role))
          used.push_back(entry);
  }
  for (const EntryInfo *entry : used)
    runner.reserveArena(*entry);
  checkAvailableMemory(
      benchDataBytes(model, used, train ? *train : *encode,
                     train ? *train : *decode, batch, srcLen, tgtLen),
      "bench's synthetic batches and the entries' inputs and outputs "
      "(batch " +
          std::to_string(batch) + ", source length " + std::to_string(srcLen) +
          ", target length " + std::to_string(tgtLen) +
          "; --batch, --src-len and --tgt-len make them smaller)");

  uint64_t key = initStreamKey(options.seed, "bench");
  if (!options.sourcesPath)
    sources = randomIds(model, "source", batch, srcLen, pad, key);
  std::vector<TokenIds> targets =
      randomIds(model, "target_in", batch, tgtLen, pad, key ^ 1);
  char line[200];
  std::snprintf(line, sizeof(line),
                "bench '%s': batch %lld, source length %lld, target length "
                "%lld, %d thread%s\n",
                model.model.c_str(), static_cast<long long>(batch),
                static_cast<long long>(srcLen), static_cast<long long>(tgtLen),
                txrt_context_num_threads(runner.context()),
                txrt_context_num_threads(runner.context()) == 1 ? "" : "s");
  out << line;
  out << "idle threads " << waitPolicyText() << "\n";

  if (train) {
    Batch data;
    data.src = padSequences(sources, pad);
    std::vector<TokenIds> in, outIds;
    for (const TokenIds &target : targets) {
      // Word ids only ([SOS] / [EOS] would not change the time).
      in.push_back(TokenIds(target.begin(), target.end()));
      outIds.push_back(TokenIds(target.begin(), target.end()));
    }
    data.tgtIn = padSequences(in, pad);
    data.tgtOut = padSequences(outIds, pad);
    std::vector<const Tensor *> inputs;
    for (const TensorSig &sig : train->inputs)
      inputs.push_back(sig.role == "source"      ? &data.src
                       : sig.role == "target_in" ? &data.tgtIn
                                                 : &data.tgtOut);
    runner.setTrainState(1, options.seed);
    runner.call(*train, inputs); // warm-up
    // --profile: the timed steps are profiled (loop/Profile.h).
    std::optional<Profile> profile;
    if (options.profile.enabled) {
      profile.emplace(options.profile.sites);
      txrt_context_set_profiling(runner.context(), 1);
      runner.onCall = [&](const EntryInfo &called, int64_t startNs,
                          int64_t endNs) {
        profile->addEntryCall(called.name, startNs, endNs, runner.context());
      };
    }
    std::vector<double> times;
    for (int64_t step = 0; step < options.steps; ++step) {
      runner.setTrainState(step + 2, options.seed);
      auto start = Clock::now();
      runner.call(*train, inputs);
      times.push_back(millisecondsSince(start));
    }
    if (profile) {
      txrt_context_set_profiling(runner.context(), 0);
      runner.onCall = nullptr;
      profile->writeReport(out, model, options.profile);
      profile->writeTraceFile(out, options.profile);
    }
    std::sort(times.begin(), times.end());
    double median = times[times.size() / 2];
    std::snprintf(line, sizeof(line),
                  "train step   %.3f ms/step (median of %lld, min %.3f), "
                  "%.0f target tokens/s\n",
                  median, static_cast<long long>(times.size()), times.front(),
                  double(batch * tgtLen) / (median / 1000.0));
    out << line;
    out << "peak memory  " << formatMiB(peakResidentMiB())
        << " MB (resident) after the train steps\n";
  } else if (!options.decodeOnly) {
    err << "note: no train_step entry; timing decoding only\n";
  }

  if (encode && decode) {
    DecodeOptions decoding;
    decoding.sos = startId(loadedTokenizer, pad);
    decoding.eos = -1; // never stop early: time the full length
    decoding.pad = pad;
    decoding.maxLength = tgtLen;
    // Greedy decoding with the KV cache (when compiled) and by re-running
    // the prefix, interleaved, medians of 3.
    std::vector<std::pair<std::string, std::unique_ptr<NextTokenModel>>> ways;
    const bool cached = CachedDecoder::available(runner.model());
    if (cached)
      ways.emplace_back("KV cache", makeDecoder(runner, pad, true));
    if (!cached || !options.decodeOnly)
      ways.emplace_back("prefix re-run", makeDecoder(runner, pad, false));
    std::vector<std::vector<double>> times(ways.size());
    std::vector<TokenIds> tokens;
    // The first round warms up; on a device a second one too: the caches'
    // blocks grow in the first, so some positions' steps come at new
    // addresses in the second and are captured as graphs only in the third
    // (docs/cuda.md "CUDA graphs"). Three rounds are timed after them.
    const int warmups = runner.device() ? 2 : 1;
    for (int round = 0; round < warmups + 3; ++round)
      for (size_t w = 0; w < ways.size(); ++w) {
        auto start = Clock::now();
        std::vector<TokenIds> decoded =
            greedyDecode(*ways[w].second, sources, decoding);
        if (round >= warmups)
          times[w].push_back(millisecondsSince(start));
        else if (round == 0 && w == 0)
          tokens = std::move(decoded);
      }
    if (options.decodeOutPath)
      writeNpy(*options.decodeOutPath, tokenTensor(tokens, tgtLen, pad));
    double generated = double(batch * tgtLen);
    for (size_t w = 0; w < ways.size(); ++w) {
      std::sort(times[w].begin(), times[w].end());
      double total = times[w][times[w].size() / 2];
      std::snprintf(line, sizeof(line),
                    "greedy       %.3f ms/token (%.1f ms for %lld x %lld "
                    "tokens, %s), %.0f tokens/s\n",
                    total / generated, total, static_cast<long long>(batch),
                    static_cast<long long>(tgtLen), ways[w].first.c_str(),
                    generated / (total / 1000.0));
      out << line;
    }
    if (options.beam > 0) {
      // One sentence at a time, N hypotheses as the rows of one batch, the
      // first sentence once more to warm up; no early stop.
      decoding.beamSize = options.beam;
      std::unique_ptr<NextTokenModel> searcher =
          makeDecoder(runner, pad, CachedDecoder::available(runner.model()));
      beamDecode(*searcher, sources.front(), decoding);
      std::vector<TokenIds> best;
      auto start = Clock::now();
      for (const TokenIds &source : sources)
        best.push_back(beamDecode(*searcher, source, decoding));
      double total = millisecondsSince(start);
      std::snprintf(line, sizeof(line),
                    "beam %-7d %.3f ms/token (%.1f ms for %lld x %lld tokens, "
                    "%s), %.0f tokens/s\n",
                    options.beam, total / generated, total,
                    static_cast<long long>(batch),
                    static_cast<long long>(tgtLen),
                    CachedDecoder::available(runner.model()) ? "KV cache"
                                                             : "prefix re-run",
                    generated / (total / 1000.0));
      out << line;
      if (options.beamOutPath)
        writeNpy(*options.beamOutPath, tokenTensor(best, tgtLen, pad));
      // The same searches as `translate --beam` runs them: as many
      // sentences at a time as the batch bound has rows for.
      start = Clock::now();
      std::vector<TokenIds> batched =
          translateAll(*searcher, sources, bounds.batch.bound, decoding);
      total = millisecondsSince(start);
      size_t differ = 0;
      for (size_t i = 0; i < best.size(); ++i)
        differ += batched[i] != best[i];
      std::snprintf(line, sizeof(line),
                    "batched beam %d: %.3f ms/token (%.1f ms, %lld sentences "
                    "a batch), %.0f tokens/s, %s\n",
                    options.beam, total / generated, total,
                    // At most the sentences there are (--batch of them).
                    static_cast<long long>(std::min<int64_t>(
                        int64_t(sources.size()),
                        std::max<int64_t>(bounds.batch.bound / options.beam,
                                          1))),
                    generated / (total / 1000.0),
                    differ ? (std::to_string(differ) +
                              " sentence(s) differ from one at a time")
                                 .c_str()
                           : "the tokens of one at a time");
      out << line;
    }
  }
  if (runner.device()) // train and decoding steps both (docs/cuda.md)
    out << runner.graphStats().describe() << "\n";
  out << "peak memory  " << formatMiB(peakResidentMiB()) << " MB (resident; "
      << memoryFloorText(model, train != nullptr) << ")\n";
  return kExitOk;
}

} // namespace txrt::driver
