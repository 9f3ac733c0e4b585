//===- TrainCommand.cpp - `PROGRAM train`: one training loop for every kind ===//
//
// The data of the model's kind (TrainingData.h: parallel text, plain text or
// labeled text) becomes a BatchSource that fills the train entry's inputs by
// role; checkpoints, --resume, progress, the loss curve and the divergence
// watch are the same for every kind. Everything the user can get wrong
// (options, data, vocabulary sizes, lengths, labels, the checkpoint to
// resume, the destination directories) is checked before the first step.
//
//===----------------------------------------------------------------------===//
#include "commands/TrainCommand.h"
#include "cli/OutputPaths.h"
#include "commands/TrainingData.h"
#include "commands/TranslateCommand.h"
#include "core/Error.h"
#include "core/Init.h"
#include "core/Memory.h"
#include "core/ModelRunner.h"
#include "core/Optimizer.h"
#include "data/SentencePiece.h"
#include "distributed/DataParallel.h"
#include "formats/FileIO.h"
#include "loop/Checkpoint.h"
#include "loop/Divergence.h"
#include "loop/Ema.h"
#include "loop/LossCurve.h"
#include "loop/Progress.h"
#include "loop/StopRequest.h"
#include "loop/UnigramWatch.h"
#include "loop/Validation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>

namespace txrt::driver {

namespace {

const EntryInfo &trainEntry(const ModelInfo &model) {
  requireKind(model, "train");
  const EntryInfo *entry = model.findEntryByRole("train");
  if (!entry || entry->kind != EntryKind::TrainStep)
    throw InputError(
        "model '" + model.model +
        "' cannot train: it has no train_step entry with role 'train' "
        "(compile a spec with a `train` entry and an `optimizer` into "
        "metadata version 2; this one is version " +
        std::to_string(model.version) + ")");
  if (entry->outputs.empty() || entry->outputs[0].dtype != DType::F32 ||
      !entry->outputs[0].shape.empty())
    throw ModelError("train_step entry '" + entry->name +
                     "' must output the loss as f32[] first");
  return *entry;
}

/// The rows of `ranks` batches of a model whose batch is a constant of the
/// spec; InputError naming `what` (--batch N, or a resumed checkpoint's
/// batch) when `requested` is another number.
int64_t constantBatchRows(const std::optional<int64_t> &requested,
                          const LengthBound &bound, int ranks,
                          const std::string &what,
                          int64_t resumedUpdateFreq = 0) {
  const int64_t rows = bound.bound * ranks;
  if (requested && *requested != rows) {
    std::string how = " or leave it out (--update-freq K makes an update of "
                      "K batches)";
    if (resumedUpdateFreq > 0) {
      // The same updates in batches of `rows` where they divide: a 2-rank
      // run resumed on one process.
      how = " to resume with it";
      if (*requested % rows == 0)
        how = " --update-freq " +
              std::to_string(*requested / rows * resumedUpdateFreq) +
              " to continue it with the same " +
              std::to_string(*requested * resumedUpdateFreq) +
              " examples an update (--batch " + std::to_string(rows) +
              " alone makes its updates smaller)";
    }
    throw InputError(what + ": the model's batch is " + bound.describe() +
                     (ranks > 1 ? ", " + std::to_string(rows) + " rows over " +
                                      std::to_string(ranks) + " ranks"
                                : std::string()) +
                     "; give --batch " + std::to_string(rows) + how);
  }
  return rows;
}

/// The batch size: --batch (checked against the B bound: each of `ranks`
/// takes its share) or the bound. A constant batch (i32[8, T]) is that many
/// rows on each rank, exactly.
int64_t batchSize(const std::optional<int64_t> &requested,
                  const LengthBound &bound, int ranks = 1) {
  if (bound.constant)
    return constantBatchRows(
        requested, bound, ranks,
        "--batch " + (requested ? std::to_string(*requested) : std::string()));
  if (!requested)
    return bound.bound;
  if ((*requested + ranks - 1) / ranks > bound.bound)
    throw InputError(
        "--batch " + std::to_string(*requested) +
        (ranks > 1 ? " over " + std::to_string(ranks) + " ranks (" +
                         std::to_string((*requested + ranks - 1) / ranks) +
                         " rows on a rank)"
                   : std::string()) +
        " is larger than " + bound.describe() +
        (ranks > 1 ? "; at most " + std::to_string(bound.bound * ranks) +
                         " over " + std::to_string(ranks) + " ranks"
                   : std::string()));
  return *requested;
}

/// The options that cut the data as the checkpoint's run did, on `ranks`
/// ranks: its update is R x K pieces (R ranks, --update-freq K) of --batch
/// / R rows or --max-tokens / R tokens each, so R' ranks take the same
/// pieces at --update-freq R K / R' and R' / R times the batch or budget
/// (a 2-rank --max-tokens 120 checkpoint on one process: --max-tokens 60
/// --update-freq 2; the checkpoint's own options were advised, which cut
/// otherwise there). Where R' does not divide them, the checkpoint's own
/// options (a --max-tokens run's on its ranks).
std::string checkpointCut(const TrainingPosition &saved, int64_t ranks) {
  const int64_t savedRanks = std::max<int64_t>(saved.ranks, 1);
  const int64_t pieces = savedRanks * saved.updateFreq;
  const int64_t amount = saved.maxTokens ? saved.maxTokens : saved.batchSize;
  const char *flag = saved.maxTokens ? "--max-tokens " : "--batch ";
  if (pieces % ranks == 0 && amount % savedRanks == 0)
    return std::string(flag) + std::to_string(amount / savedRanks * ranks) +
           " --update-freq " + std::to_string(pieces / ranks);
  // A batch is the update's rows whatever the ranks: the same options take
  // the same updates (in other pieces); a token budget is the rank's.
  if (!saved.maxTokens)
    return std::string(flag) + std::to_string(amount) + " --update-freq " +
           std::to_string(saved.updateFreq);
  return std::string(flag) + std::to_string(amount) + " --update-freq " +
         std::to_string(saved.updateFreq) + " (on " +
         std::to_string(savedRanks) +
         (savedRanks == 1 ? " process, as the checkpoint's run)"
                          : " ranks, as the checkpoint's run)");
}

/// A resumed run's batch size without --batch: the checkpoint's, which the
/// model's B bound may no longer take (recompiled with a smaller one).
int64_t resumedBatchSize(int64_t saved, int64_t savedUpdateFreq,
                         const LengthBound &bound, int ranks) {
  if (bound.constant)
    return constantBatchRows(saved, bound, ranks,
                             "the checkpoint's batch size " +
                                 std::to_string(saved) +
                                 ", which a resumed run keeps",
                             std::max<int64_t>(savedUpdateFreq, 1));
  if ((saved + ranks - 1) / ranks <= bound.bound)
    return saved;
  // The same updates in smaller batches: --batch saved/k --update-freq
  // k x the saved one, for the least k that fits.
  std::string same;
  for (int64_t k = 2; k <= saved; ++k)
    if (saved % k == 0 && (saved / k + ranks - 1) / ranks <= bound.bound) {
      same = "; --batch " + std::to_string(saved / k) + " --update-freq " +
             std::to_string(k * savedUpdateFreq) +
             " continues it with the same " +
             std::to_string(saved * savedUpdateFreq) + " examples an update";
      break;
    }
  throw InputError("the checkpoint's batch size " + std::to_string(saved) +
                   (ranks > 1 ? " over " + std::to_string(ranks) + " ranks"
                              : std::string()) +
                   ", which a resumed run keeps, is larger than " +
                   bound.describe() + "; give --batch N (at most " +
                   std::to_string(bound.bound * ranks) +
                   ") to resume with a smaller batch" + same);
}

/// A checkpoint's header holds the tokenizer and the labels, and readers
/// refuse headers over kMaxSafetensorsHeaderBytes: a vocabulary too large
/// to store (a blob without blanks is one word) is refused before the
/// first step, not at the first save.
void checkStorable(const ModelInfo &model, const Tokenizer &tokenizer,
                   const LabelSet *labels) {
  size_t bytes = tokenizer.toJson().size() +
                 (labels ? labels->toJson().size() : size_t(0));
  // The tensors' entries and checksums: well under this per tensor.
  size_t rest = 65536 + 4 * 256 * model.params.size();
  if (bytes + rest <= kMaxSafetensorsHeaderBytes)
    return;
  size_t longest = 0;
  for (const Vocabulary *side : {&tokenizer.source, &tokenizer.target})
    for (const std::string &word : side->words())
      longest = std::max(longest, word.size());
  throw InputError(
      "the vocabulary cannot be stored in a checkpoint: its JSON is " +
      std::to_string(bytes) + " bytes (the longest " +
      (tokenizer.subwords ? "piece " : "word ") + std::to_string(longest) +
      " bytes), and a safetensors header holds at most " +
      std::to_string(kMaxSafetensorsHeaderBytes) +
      "; words are what lies between blanks, so a long run of text without "
      "blanks is one word: split or remove such lines, or raise --min-freq");
}

/// Notes where a resumed run's options differ from the checkpoint's.
void noteDifferences(const TrainingPosition &saved, const TrainOptions &options,
                     int64_t batch, int64_t maxTokens, int64_t updateFreq,
                     int64_t ranks, int64_t threads, const TrainingData &data,
                     const ModelInfo &model, std::ostream &err) {
  const std::string &precision = model.precision;
  auto note = [&](const std::string &what) {
    err << "note: " << what
        << " differs from the checkpoint's; the run will not match an "
           "uninterrupted one\n";
  };
  // A checkpoint `run` started records no data, batches or run to match
  // (its batch is run's rows): only another precision is said.
  if (saved.dataPath.empty()) {
    if (!saved.precision.empty() && saved.precision != precision)
      note("txc --precision=" + precision);
    return;
  }
  // An update takes K batches (K = --update-freq) of --batch examples, or of
  // --max-tokens tokens with rows capped by `batch`, each cut into the
  // ranks' pieces: the same per-update amounts cut otherwise (--batch 8
  // --update-freq 2 on one process, --batch 16 on 2 ranks) take the same
  // examples in the same order, only summed in other pieces.
  bool sameUpdates =
      (maxTokens == 0) == (saved.maxTokens == 0) &&
      maxTokens * updateFreq == saved.maxTokens * saved.updateFreq &&
      batch * updateFreq == saved.batchSize * saved.updateFreq;
  auto split = [](int64_t maxTokens, int64_t batch, int64_t updateFreq) {
    return (maxTokens ? "--max-tokens " + std::to_string(maxTokens)
                      : "--batch " + std::to_string(batch)) +
           " --update-freq " + std::to_string(updateFreq);
  };
  // Each rank runs K pieces an update: R x K pieces in all. As many
  // pieces (2 ranks, and --update-freq 2 on one process) are pieces of the
  // same rows; another number of ranks alone changed them without a note.
  const bool anyRanks = ranks > 1 || saved.ranks > 1;
  auto onRanks = [&](int64_t count) {
    if (!anyRanks)
      return std::string();
    return count == 1 ? std::string(" on 1 process")
                      : " on " + std::to_string(count) + " ranks";
  };
  if (sameUpdates && (updateFreq != saved.updateFreq ||
                      maxTokens != saved.maxTokens || ranks != saved.ranks)) {
    const bool samePieces =
        ranks * updateFreq == saved.ranks * saved.updateFreq;
    err << "note: " << split(maxTokens, batch, updateFreq) << onRanks(ranks)
        << " takes the checkpoint's updates ("
        << split(saved.maxTokens, saved.batchSize, saved.updateFreq)
        << onRanks(saved.ranks)
        << (maxTokens ? ""
                      : ", " + std::to_string(batch * updateFreq) + " examples")
        << ") "
        << (samePieces
                ? "in as many pieces of the same rows: the same examples in "
                  "the same order, an uninterrupted run's bit for bit where "
                  "the pieces are summed in the same order (2 ranks and "
                  "--update-freq 2 on one process are), else within rounding\n"
                : "in other pieces: the same examples in the same order, "
                  "summed in another order (an uninterrupted run's within "
                  "rounding)\n");
  } else {
    if (maxTokens != saved.maxTokens)
      note(maxTokens
               ? "--max-tokens " + std::to_string(maxTokens)
               : "--batch " + std::to_string(batch) + " (not --max-tokens)");
    else if (batch != saved.batchSize)
      // With --max-tokens the rows a batch may hold are the B bound's.
      note(maxTokens ? "the rows a --max-tokens batch may hold (" +
                           std::to_string(batch) + ", the B bound; it was " +
                           std::to_string(saved.batchSize) + ")"
                     : "--batch " + std::to_string(batch));
    if (updateFreq != saved.updateFreq)
      note("--update-freq " + std::to_string(updateFreq));
  }
  if (options.seed && *options.seed != saved.seed)
    note("--seed " + std::to_string(*options.seed));
  // The kernels split their sums by thread: the default (every core)
  // differs from machine to machine.
  if (saved.threads > 0 && threads > 0 && threads != saved.threads)
    err << "note: " << threads << " thread" << (threads == 1 ? "" : "s")
        << " (the checkpoint was trained with " << saved.threads
        << "): the kernels sum in other pieces, so the run starts within "
           "rounding of an uninterrupted one and drifts from it as training "
           "amplifies those differences (other validation numbers after a "
           "few dozen steps), not bit for bit; --threads "
        << saved.threads << " for that\n";
  if (data.hash != saved.dataHash)
    note("the content of " + data.flag + " '" + data.path + "'");
  if (saved.block && data.block != saved.block)
    note("--block " + std::to_string(data.block));
  if (!saved.precision.empty() && saved.precision != precision)
    note("txc --precision=" + precision);
  // A model compiled otherwise (txc -D, an edited config or optimizer):
  // the checks of the tensors pass when the shapes do.
  bool configNoted = false, boundsNoted = false;
  if (!saved.config.empty()) {
    // Config items that are dim bounds (`dim B <= batch`) limit the sizes
    // a step may take: said apart from the ones that change the model.
    const auto [changes, bounds, flags, keys] =
        describeConfigChanges(saved.config, model, saved.sizeConfigs);
    if (!changes.empty())
      note("the model's config (" + changes + ")");
    if (!bounds.empty())
      err << "note: the model was compiled with other bounds or sizes (" << bounds
          << "): a bound limits the sizes a step may take\n";
    configNoted = !changes.empty();
    boundsNoted = !bounds.empty();
  }
  // Noted apart from the config even where its values come from the
  // config (both notes then name the change): a config change (dropout)
  // hid an edited optimizer (clip, weight_decay) before.
  if (!saved.optimizer.empty() && model.optimizer &&
      saved.optimizer != describeOptimizer(*model.optimizer))
    note("the optimizer " + describeOptimizer(*model.optimizer));
  // The same config, tensors and precision, and txc compiled the entries
  // that do not train to another program: an edited spec (relu -> gelu),
  // --no-fuse, or another txc.
  if (!configNoted && !boundsNoted && !saved.inferenceFingerprint.empty() &&
      !model.inferenceFingerprint.empty() &&
      saved.inferenceFingerprint != model.inferenceFingerprint &&
      (saved.precision.empty() || saved.precision == precision))
    note("the model's program (" + describeProgramChange() + ")");
}

/// A resumed run keeps the checkpoint's tokenizer (its ids are the rows of
/// the embeddings): the tokenizer options given with --resume must describe
/// it, else they would be ignored without a word. A --tokenizer FILE is
/// compared by loadModelTokenizer.
void checkResumedTokenizerOptions(const TrainOptions &options,
                                  const Tokenizer &saved,
                                  const std::string &checkpoint) {
  std::optional<SentencePieceOptions::Algorithm> algorithm;
  if (saved.subwords)
    algorithm = saved.subwords->algorithm();
  std::string kind =
      !saved.subwords
          ? "word-level vocabularies (--min-freq " +
                std::to_string(saved.minFreq) + ")"
          : "a SentencePiece model (" +
                std::string(!algorithm ? ""
                            : *algorithm == SentencePieceOptions::Algorithm::Bpe
                                ? "bpe, "
                                : "unigram, ") +
                std::to_string(saved.source.size()) + " pieces)";
  auto refuse = [&](const std::string &given) {
    throw InputError(given + " does not match '" + checkpoint + "': it holds " +
                     kind +
                     ", which a resumed run keeps (the checkpoint's weights "
                     "are trained on its ids); leave out " +
                     given.substr(0, given.find(' ')) +
                     ", or train a new run without --resume");
  };
  if (options.tokenizer == "spm" && !saved.subwords)
    refuse("--tokenizer spm");
  if (options.tokenizerGiven && options.tokenizer == "word" && saved.subwords)
    refuse("--tokenizer word");
  if (options.vocabSize && saved.subwords &&
      *options.vocabSize != saved.source.size())
    refuse("--vocab-size " + std::to_string(*options.vocabSize));
  if (options.spmType && algorithm &&
      (*options.spmType == "bpe") !=
          (*algorithm == SentencePieceOptions::Algorithm::Bpe))
    refuse("--spm-type " + *options.spmType);
  if (options.minFreq && (saved.subwords || *options.minFreq != saved.minFreq))
    refuse("--min-freq " + std::to_string(*options.minFreq));
}

/// Whether `path` is a regular file with something in it.
bool holdsBytes(const std::string &path) {
  std::error_code error;
  return std::filesystem::is_regular_file(path, error) &&
         std::filesystem::file_size(path, error) > 0 && !error;
}

/// The loss curves a resumed checkpoint's rows may be in: its own
/// (CKPT.loss.csv), then, for a --keep-last step file D.step-N.safetensors
/// (which has none), its run's D.loss.csv.
std::vector<std::string> resumedCurvePaths(const std::string &resume) {
  std::vector<std::string> paths = {
      checkpointSibling(resume, kLossCurveSuffix)};
  const std::string extension = ".safetensors";
  size_t step = resume.rfind(".step-");
  if (step != std::string::npos && resume.size() > extension.size() &&
      resume.compare(resume.size() - extension.size(), extension.size(),
                     extension) == 0) {
    std::string digits =
        resume.substr(step + 6, resume.size() - extension.size() - step - 6);
    if (!digits.empty() &&
        digits.find_first_not_of("0123456789") == std::string::npos)
      paths.push_back(checkpointSibling(resume.substr(0, step) + extension,
                                        kLossCurveSuffix));
  }
  return paths;
}

/// The rows a resumed run's loss curve starts from, and (`through`, `hash`)
/// when they are what the checkpoint saw in `logPath` itself. The
/// checkpoint fingerprints the rows its curve held
/// (TrainingPosition::curveThrough):
/// - the run's own curve file (an explicit --log, or the resumed
///   checkpoint's CKPT.loss.csv resumed in place) must hold them (another
///   run's curve written there since, or a cut or edited file, was
///   continued as this run's): InputError otherwise;
/// - a new --log, or the default curve of another --save, starts from the
///   resumed checkpoint's CKPT.loss.csv when it holds them, else the
///   curve starts again at the resumed step (a stale file there is not
///   read);
/// - an older checkpoint (no record): `logPath`'s rows, as before.
std::vector<LossPoint>
resumedCurve(const std::string &logPath, const TrainingPosition &position,
             const TrainOptions &options, std::ostream &err,
             std::optional<int64_t> &through, uint64_t &hash) {
  std::error_code error;
  auto rowsOf = [&](const std::string &path) {
    return std::filesystem::exists(path, error)
               ? std::optional(parseLossCsv(readWholeFile(path)))
               : std::nullopt;
  };
  // `rows` without those past `last`.
  auto rowsThrough = [](std::vector<LossPoint> rows, int64_t last) {
    rows.erase(std::remove_if(
                   rows.begin(), rows.end(),
                   [&](const LossPoint &point) { return point.step > last; }),
               rows.end());
    return rows;
  };
  if (!position.curveThrough) {
    std::optional<std::vector<LossPoint>> rows = rowsOf(logPath);
    return rows ? rowsThrough(std::move(*rows), position.step)
                : std::vector<LossPoint>{};
  }
  // Rows past the ones the checkpoint saw are no row of its run (a write
  // that failed left none there): another run's.
  auto upToTheSeen = [&](std::vector<LossPoint> rows) {
    return rowsThrough(std::move(rows), *position.curveThrough);
  };
  // Until its first write, the new file holds none of the run's rows.
  auto nothingSeenYet = [&] {
    through = 0;
    hash = lossCurveFingerprint({});
  };
  auto holdsTheSeenRows = [&](const std::vector<LossPoint> &rows) {
    return lossCurveFingerprint(upToTheSeen(rows)) == position.curveHash;
  };
  // The checkpoint is ahead of its curve: `run TRAIN_STEP --load C --save C`
  // trained those steps (run keeps no curve), or a write of the curve
  // failed before the checkpoint was saved (the note named only that).
  auto noteGap = [&] {
    if (*position.curveThrough < position.step)
      err << "note: the loss curve has no rows for steps "
          << *position.curveThrough + 1 << ".." << position.step
          << " (trained by `run`, which keeps no curve, or a write of it "
             "failed before the checkpoint was saved)\n";
  };
  const std::string resumedCurvePath =
      checkpointSibling(*options.resumePath, kLossCurveSuffix);
  const bool inPlace = sameFile(logPath, resumedCurvePath);
  const std::string what =
      options.logPath ? "--log" : "the loss curve of --save";
  // The default curve of another --save (no --log) is checked as a --log
  // is when a file is there already: another run's curve there was
  // replaced by the resumed one's, unasked (--overwrite replaces it).
  const bool occupied = !options.overwrite && holdsBytes(logPath);
  if (options.logPath || inPlace || occupied) {
    if (std::optional<std::vector<LossPoint>> rows = rowsOf(logPath)) {
      if (holdsTheSeenRows(*rows)) {
        through = position.curveThrough;
        hash = position.curveHash;
        noteGap();
        return upToTheSeen(std::move(*rows));
      }
      // The checkpoint's own curve file (beside it) with rows after its
      // seen ones only: a curve this checkpoint's run started again (its
      // rows were elsewhere) and whose save then failed. It starts again
      // once more (the identical retry was refused).
      const bool restartedHere =
          inPlace && !options.logPath &&
          std::all_of(rows->begin(), rows->end(), [&](const LossPoint &row) {
            return row.step > *position.curveThrough;
          });
      if (!restartedHere) {
        // What another --log would hold: the checkpoint's own curve copied
        // (the message said it would start at step N + 1, and it held the
        // copied rows 1..N).
        std::optional<std::vector<LossPoint>> own = rowsOf(resumedCurvePath);
        const std::string another =
            own && holdsTheSeenRows(*own)
                ? "it then starts with the checkpoint's curve, steps 1.." +
                      std::to_string(*position.curveThrough) + " of '" +
                      resumedCurvePath + "'"
                : "the curve then starts at step " +
                      std::to_string(position.step + 1);
        throw InputError(
            what + " '" + logPath + "' does not hold the loss curve of " +
            "--resume '" + *options.resumePath + "': its rows through step " +
            std::to_string(*position.curveThrough) +
            " are not the ones the checkpoint saw (another run's curve, one "
            "cut or edited, or the run's curve went to another --log since: "
            "give that one); give another --log (" +
            another + ") or move the file away");
      }
    }
  }
  nothingSeenYet();
  // A curve file of its own to start: from the resumed checkpoint's curve,
  // else from the one at --log when it holds the seen rows (--overwrite
  // from a --keep-last step file of the same --save, whose curve is the
  // save's: it started again unless --log named that very file).
  if (!inPlace) {
    // A --keep-last step file (D.step-N.safetensors) has no curve of its
    // own: its run's is D's (resumed into another --save, the curve
    // started again though D.loss.csv held its rows).
    std::vector<std::string> own = resumedCurvePaths(*options.resumePath);
    own.push_back(logPath);
    for (const std::string &path : own)
      if (std::optional<std::vector<LossPoint>> rows = rowsOf(path);
          rows && holdsTheSeenRows(*rows)) {
        // The file this run writes holds them already.
        if (sameFile(path, logPath)) {
          through = position.curveThrough;
          hash = position.curveHash;
        }
        noteGap();
        return upToTheSeen(std::move(*rows));
      }
  }
  if (*position.curveThrough > 0)
    err << "note: the loss curve of --resume '" << *options.resumePath
        << "' is not in '" << resumedCurvePath << "'; " << what << " '"
        << logPath << "' starts again at step " << position.step + 1 << "\n";
  return {};
}

/// A new run's curve over another run's (or any other file) replaced it
/// unasked, as --save over a checkpoint does not: an explicit --log, or the
/// default CKPT.loss.csv of a --save that is no checkpoint yet. A resumed
/// run continues its own curve there (resumedCurve checks whose it is).
/// The plot beside it: a plot of a curve is replaced with the curve, a
/// figure of the user's by that name is not.
void checkCurveFiles(const TrainOptions &options, const std::string &log) {
  const std::string what =
      options.logPath ? "--log" : "the loss curve of --save";
  if (!options.resumePath && !options.overwrite && holdsBytes(log)) {
    std::vector<LossPoint> rows = parseLossCsv(readWholeFile(log));
    if (rows.empty())
      throw InputError(what + " '" + log +
                       "' is a file already (not a loss curve): writing "
                       "this run's curve would replace it. --overwrite "
                       "replaces it, or --log to another file");
    throw InputError(
        what + " '" + log + "' holds a loss curve already (" +
        std::to_string(rows.size()) + " rows, steps " +
        std::to_string(rows.front().step) + ".." +
        std::to_string(rows.back().step) +
        ") and this run starts anew: writing its curve would replace it. "
        "--resume the checkpoint whose curve it is continues it, "
        "--overwrite replaces it, or --log to another file");
  }
  const std::string plot = svgPathFor(log);
  if (!options.overwrite && holdsBytes(plot) && !isLossPlot(plot))
    throw InputError("the plot of " + what + " '" + plot +
                     "' is a file already that is no loss plot txc wrote: "
                     "writing the plot would replace it. --overwrite "
                     "replaces it, or --log to another file");
}

/// --save's (and --keep-best's) claims and checks: `locks` gains the files
/// the run holds to its end; throws InputError when a save would replace
/// another run's checkpoint.
void lockAndCheckSaveTargets(const TrainOptions &options,
                             std::vector<std::unique_ptr<WriterLock>> &locks) {
  // Two runs started with one --save (two terminals, a script run twice)
  // would each replace the other's saves, --overwrite or not; also a run
  // whose --save is this one's --keep-best file.
  locks.push_back(std::make_unique<WriterLock>(*options.savePath, "--save"));
  if (options.keepBest)
    locks.push_back(std::make_unique<WriterLock>(
        checkpointSibling(*options.savePath, kBestCheckpointSuffix),
        "the --keep-best checkpoint of --save"));
  // --save C and --save C.safetensors write the same tokenizer copies, loss
  // curve and best checkpoint (checkpointSibling): a run of one replaced
  // the other's, at once or later, without a word.
  const std::string &save = *options.savePath;
  const std::string stem = checkpointSibling(save, "");
  const std::string twin = stem != save ? stem : save + ".safetensors";
  // (A symlink there, to anything or nowhere, is no checkpoint another run
  // saves to by that name: not locked.)
  std::error_code twinError;
  if (!std::filesystem::is_symlink(twin, twinError))
    locks.push_back(std::make_unique<WriterLock>(
        twin, "the twin of --save '" + save +
                  "' (the same tokenizer copy and loss curve):"));
  // Unless the run resumes the twin, or a checkpoint with the twin's
  // tokenizer (the run saved under both names: its copies are the same).
  auto sameTokenizer = [&](const SafetensorsReader &other) {
    if (!options.resumePath)
      return false;
    try {
      SafetensorsReader resumed(*options.resumePath);
      std::optional<Tokenizer> mine = checkpointTokenizer(resumed),
                               theirs = checkpointTokenizer(other);
      return mine && theirs && mine->toJson() == theirs->toJson();
    } catch (const DriverError &) {
      return false; // the resume says what is wrong with it
    }
  };
  if (!(options.resumePath && sameFile(*options.resumePath, twin)))
    if (auto existing = existingTrainingCheckpoint(twin);
        existing && !sameTokenizer(*existing))
      throw InputError(
          "--save '" + save + "' writes its tokenizer copy and loss curve ('" +
          checkpointSibling(save, kTokenizerSuffix) + "', ...) where the " +
          "training checkpoint '" + twin + "' (" +
          describeTrainingCheckpoint(*existing) +
          ") has its own: saving would replace them. Give --save another "
          "name (or --resume '" +
          twin + "' with --save '" + twin + "')");
  if (options.keepLast) {
    // A file of the step files' name that is no checkpoint (a symlink is
    // removed, never its target) is the user's, and --overwrite or the
    // pruning of the oldest would remove it: refused, --overwrite or not
    // (it was called "a step checkpoint of another run").
    for (const auto &stepFile : stepCheckpoints(*options.savePath))
      if (const std::string &file = stepFile.second;
          !std::filesystem::is_symlink(file) && !looksLikeSafetensors(file))
        throw InputError(
            "'" + file +
            "' has the name of a --keep-last step checkpoint of --save, but "
            "is no checkpoint: --keep-last would remove it with this run's "
            "older step files. Move it away, or --save to another file");
  }
  // A new run's --save (or --keep-best) over another run's checkpoint
  // would lose that run (its steps, moments and tokenizer) unasked.
  if (options.overwrite ||
      (options.resumePath && sameFile(*options.resumePath, *options.savePath)))
    return;
  const std::string &path = *options.savePath;
  const std::string how = options.resumePath ? "resumes another"
                          : options.initFromPath
                              ? "starts from --init-from's weights"
                              : "starts anew";
  if (auto existing = existingTrainingCheckpoint(path))
    throw InputError("--save '" + path +
                     "' is a training checkpoint already (" +
                     describeTrainingCheckpoint(*existing) + ") and this run " +
                     how + ": saving would replace it. --resume '" + path +
                     "' continues it, --overwrite replaces it, or --save to "
                     "another file");
  if (options.keepBest) {
    const std::string best = checkpointSibling(path, kBestCheckpointSuffix);
    if (auto existing = existingTrainingCheckpoint(best))
      throw InputError("the --keep-best checkpoint '" + best +
                       "' of --save is another run's best already (" +
                       describeTrainingCheckpoint(*existing) +
                       ") and this run " + how +
                       ": its first validation would replace it. --overwrite "
                       "replaces it, or --save to another file");
  }
  // --keep-last's step files of another run: this run's would replace some
  // and sit beside the others, and an average of "the last K" mixed the
  // two runs. With --overwrite the first save removes them.
  if (options.keepLast)
    if (auto steps = stepCheckpoints(path); !steps.empty())
      throw InputError("'" + steps.front().second +
                       "' is a step checkpoint of another run (" +
                       std::to_string(steps.size()) +
                       " beside --save) and this run " + how +
                       ": --keep-last would replace some and keep the "
                       "others among this run's. --overwrite removes them at "
                       "the first save, or --save to another file");
}

/// Whether the run's tokenizer is (or may be) SentencePiece, whose model
/// the run copies beside --save: `--tokenizer spm`, an spm --tokenizer
/// file, a resumed checkpoint with one; true where that cannot be read
/// (its own error comes when it is loaded).
bool mayWriteSentencePiece(const TrainOptions &options) {
  if (options.tokenizer == "spm")
    return true;
  try {
    if (options.resumePath) {
      std::optional<Tokenizer> resumed =
          checkpointTokenizer(SafetensorsReader(*options.resumePath));
      return !resumed || resumed->subwords != nullptr;
    }
    if (options.tokenizer != "word")
      return Tokenizer::load(options.tokenizer).subwords != nullptr;
  } catch (const std::exception &) {
    return true;
  }
  return false;
}

/// Every file train writes, checked against each other and the inputs;
/// returns the run's claims on --save and --keep-best's file (none without
/// --save): held to the end, they keep a second run from saving over this
/// one's checkpoints.
std::vector<std::unique_ptr<WriterLock>>
checkTrainOutputs(const ModelInfo &model, const TrainOptions &options,
                  const std::optional<std::string> &logPath) {
  // A --resume that is not there, first: the outputs' checks named --save
  // as "a checkpoint already" of a run resuming another (`--resume c
  // --save c.safetensors`, the extension forgotten).
  for (const std::optional<std::string> &input :
       {options.resumePath, options.initFromPath}) {
    std::error_code error;
    if (input && !std::filesystem::exists(*input, error) && !error.value()) {
      const std::string flag =
          input == options.resumePath ? "--resume" : "--init-from";
      const std::string withExtension = *input + ".safetensors";
      throw InputError(flag + " '" + *input + "' does not exist" +
                       (std::filesystem::is_regular_file(withExtension, error)
                            ? " (did you mean '" + withExtension + "'?)"
                            : std::string()));
    }
  }
  std::vector<NamedPath> outputs;
  std::vector<NamedPath> inputs = {options.textPath.empty()
                                       ? NamedPath{options.dataPath, "--data"}
                                       : NamedPath{options.textPath, "--text"}};
  if (options.resumePath)
    inputs.push_back({*options.resumePath, "--resume"});
  if (options.tokenizer != "word" && options.tokenizer != "spm")
    inputs.push_back({options.tokenizer, "--tokenizer"});
  if (options.initFromPath)
    inputs.push_back({*options.initFromPath, "--init-from"});
  if (options.savePath) {
    outputs.push_back(
        {*options.savePath, "--save", NamedPath::Format::Safetensors});
    outputs.push_back({checkpointSibling(*options.savePath, kTokenizerSuffix),
                       "the tokenizer copy of --save",
                       NamedPath::Format::Json});
    // Only where the tokenizer is SentencePiece: a word-level run (a new
    // one, a resumed one, one given a --tokenizer JSON) refused a user's
    // file by that name, and listed it among the outputs of foreign links.
    if (mayWriteSentencePiece(options))
      outputs.push_back(
          {checkpointSibling(*options.savePath, kSentencePieceSuffix),
           "the SentencePiece model of --save",
           NamedPath::Format::SentencePiece});
    for (const char *suffix : {kSourceTokenizerSuffix, kTargetTokenizerSuffix})
      outputs.push_back({checkpointSibling(*options.savePath, suffix),
                         "the Hugging Face tokenizer of --save",
                         NamedPath::Format::Json});
    if (model.kind == ModelKind::Classifier)
      outputs.push_back({checkpointSibling(*options.savePath, kLabelsSuffix),
                         "the label file of --save", NamedPath::Format::Json});
    if (options.keepBest)
      outputs.push_back(
          {checkpointSibling(*options.savePath, kBestCheckpointSuffix),
           "the --keep-best checkpoint of --save",
           NamedPath::Format::Safetensors});
  }
  if (options.validPath)
    inputs.push_back({*options.validPath, "--valid"});
  // --log x.svg wrote the CSV into x.svg and the plot into x.svg.svg.
  if (options.logPath) {
    const std::string &log = *options.logPath;
    if (endsWith(log, ".svg"))
      throw InputError("--log '" + log +
                       "' names an SVG: --log takes the CSV's name, and the "
                       "plot goes beside it (.csv -> .svg); give '" +
                       log.substr(0, log.size() - 4) + ".csv'");
  }
  if (logPath) {
    std::string what = options.logPath ? "--log" : "the loss curve of --save";
    outputs.push_back({*logPath, what});
    outputs.push_back({svgPathFor(*logPath), "the plot of " + what});
  }
  // --resume C --save C continues in place: C is read before it is written.
  checkOutputPaths(outputs, inputs, {{"--save", "--resume"}});
  checkWritableDirectories(outputs);
  std::vector<std::unique_ptr<WriterLock>> locks;
  // Two runs writing one curve (two --log, or a --log that is another
  // run's CKPT.loss.csv) replaced each other's.
  if (logPath)
    locks.push_back(std::make_unique<WriterLock>(
        *logPath, options.logPath ? "--log" : "the loss curve of --save"));
  if (options.savePath)
    lockAndCheckSaveTargets(options, locks);
  // After --save's and --keep-best's checks, whose refusals say more.
  if (logPath)
    checkCurveFiles(options, *logPath);
  return locks;
}

/// The --ema average: a resumed checkpoint's (its decay unless --ema
/// gives one), else a new one from the current weights; null without. On
/// a device it lives there too (Ema.h).
std::unique_ptr<WeightAverage>
startWeightAverage(const ModelInfo &model, ParameterHome &params,
                   const TrainOptions &options,
                   const SafetensorsReader *resumed, std::ostream &err) {
  std::optional<double> decay = options.ema;
  if (resumed) {
    std::optional<double> saved = checkpointDecay(*resumed);
    // A whole average without its decay (an edited file): resumed without
    // --ema it was dropped from the next checkpoint without a word, while
    // translate, eval and generate used it.
    if (!saved && !decay && hasAveragedWeights(*resumed, model))
      throw InputError(
          "'" + resumed->path() + "' holds a weight average (" + kEmaPrefix +
          "* tensors) but no '" + kEmaDecayKey +
          "' in its __metadata__: the file was edited or damaged. Give --ema "
          "DECAY to continue the average, or remove its " +
          kEmaPrefix + "* tensors to train without one");
    if (!decay)
      decay = saved;
    else if (saved && *saved != *decay) {
      // (Ten digits printed 0.3 and 0.30000000000000004 alike.)
      err << "note: --ema " << formatDecay(*decay) << " differs from the "
          << "checkpoint's " << formatDecay(*saved)
          << "; the run will not match an uninterrupted one\n";
    }
  }
  if (!decay)
    return nullptr;
  auto average = std::make_unique<WeightAverage>(model, params.read(), *decay,
                                                 params.device());
  if (resumed && !average->load(*resumed))
    err << "note: '" << resumed->path()
        << "' has no weight average; --ema starts from its weights\n";
  return average;
}

/// Whether `path` holds the best checkpoint the resumed run's `resumed`
/// records: a training checkpoint of that validation step with the same
/// best (step, scores, --valid file, --best-by), whose tensors match their
/// checksums (a damaged one was reported as the kept best and copied to
/// another --save's name; a note on `err` says why it is not taken).
bool holdsRecordedBest(const std::string &path,
                       const SafetensorsReader &resumed, std::ostream &err) {
  std::unique_ptr<SafetensorsReader> file = existingTrainingCheckpoint(path);
  const std::string *bestStep = resumed.metadataValue("best_step");
  if (!file || !bestStep)
    return false;
  const std::string *step = file->metadataValue("step");
  if (!step || *step != *bestStep)
    return false;
  for (const char *key : {"best_step", "best_by", "best_loss", "best_accuracy",
                          "best_bleu", "valid_fnv1a64"}) {
    const std::string *mine = file->metadataValue(key);
    const std::string *theirs = resumed.metadataValue(key);
    if (!mine || !theirs || *mine != *theirs)
      return false;
  }
  try {
    file->verifyChecksums();
  } catch (const InputError &error) {
    err << "note: not taken as the best checkpoint: " << error.what() << "\n";
    return false;
  }
  return true;
}

/// The step of the training checkpoint at `path` when it is past `step`
/// (a best kept after the checkpoint being resumed), else none.
std::optional<int64_t> laterBestStep(const std::string &path, int64_t step) {
  std::unique_ptr<SafetensorsReader> file = existingTrainingCheckpoint(path);
  std::optional<int64_t> saved = file ? recordedStep(*file) : std::nullopt;
  return saved && *saved > step ? saved : std::nullopt;
}

/// Batches pad the targets with the config pad id ([PAD]); a cross-entropy
/// whose ignore_index is another id counts every padded position in the
/// loss, and never learns the token its ignore_index is (a spec with
/// `pad_id = 1` and no `pad` ignored [UNK]). Said before training; txc
/// records the ignore_index in the metadata ("ids" "ignored").
void warnUnignoredPadding(const ModelInfo &model, const EntryInfo &entry,
                          const Tokenizer &tokenizer, std::ostream &err) {
  const int32_t pad = modelPadId(model);
  for (const TensorSig &sig : entry.inputs) {
    if ((sig.role != "target_out" && sig.role != "targets") || !sig.ids ||
        !sig.ids->ignored || *sig.ids->ignored == pad)
      continue;
    const int64_t ignored = *sig.ids->ignored;
    const Vocabulary &target = tokenizer.target;
    std::string token;
    if (ignored >= 0 && ignored < target.size())
      token = "; and id " + std::to_string(ignored) + ", which it ignores, is " +
              "the tokenizer's '" + target.word(int32_t(ignored)) +
              "': never learned";
    err << "warning: input '" << sig.name << "' is padded with id " << pad
        << " ([PAD], config pad) but the loss ignores id " << ignored
        << " (ignore_index of " << sig.ids->what
        << "): padded positions count in the loss" << token
        << "; write ignore_index = pad in the spec"
        << (ignored >= 0 && ignored < kNumSpecialTokens
                ? " (or set config pad = " + std::to_string(ignored) + ")"
                : std::string())
        << "\n";
  }
}

std::string formatSeconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f s", seconds);
  return text;
}

} // namespace

namespace {

int trainOnThisRank(const ModelInfo &model, const txc_entry_fn *entryTable,
                    const TrainOptions &options, std::ostream &out,
                    std::ostream &err, bool interactive,
                    Communicator &ranks) {
  // Files beside a private --save are as private (else the --resume's).
  std::optional<NewFilesPrivateLike> privateLike;
  if (options.savePath)
    privateLike.emplace(options.resumePath &&
                                !std::filesystem::exists(*options.savePath)
                            ? *options.resumePath
                            : *options.savePath);
  const EntryInfo &entry = trainEntry(model);
  const OptimizerInfo &optimizer = *model.optimizer;
  // Only a seq2seq model's validation translates: language models and
  // classifiers are judged by loss unless --best-by accuracy.
  const BestBy bestBy =
      options.bestBy ? *parseBestBy(*options.bestBy)
      : model.kind == ModelKind::Seq2Seq ? BestBy::Bleu
                                         : BestBy::Loss;
  if (options.validPath && model.kind != ModelKind::Seq2Seq &&
      bestBy == BestBy::Bleu)
    throw InputError(
        "--best-by bleu does not apply to " +
        std::string(model.kind == ModelKind::Classifier
                        ? "a classifier (its validation scores the --valid "
                          "labels' loss, accuracy and macro-F1, no "
                          "translations)"
                        : "a language model (its validation scores the "
                          "--valid text's loss and perplexity, no "
                          "translations)") +
        "; give --best-by loss or accuracy, or leave it out");
  std::optional<std::string> logPath = options.logPath;
  if (!logPath && options.savePath)
    logPath = checkpointSibling(*options.savePath, kLossCurveSuffix);
  std::vector<std::unique_ptr<WriterLock>> saveLocks =
      checkTrainOutputs(model, options, logPath);
  // A best checkpoint of an earlier run beside --save that this run will
  // not replace (no --keep-best): `eval --load C.best` would score the
  // old model.
  if (options.savePath && !options.keepBest && ranks.rank() == 0) {
    std::string best = checkpointSibling(*options.savePath,
                                         kBestCheckpointSuffix);
    bool continued = options.resumePath &&
                     sameFile(*options.resumePath, *options.savePath);
    if (!continued)
      if (auto existing = existingTrainingCheckpoint(best)) {
        const std::string *step = existing->metadataValue("step");
        err << "note: '" << best << "' is an earlier run's best checkpoint"
            << (step ? " (step " + *step + ")" : std::string())
            << "; this run keeps no best (no --keep-best) and leaves it as "
               "it is\n";
      }
  }
  // From here a SIGINT / SIGTERM stops after the first update (or the
  // current one) and saves; --stop-time counts from the first update.
  StopRequest stop(options.stopSeconds, options.stopTimeText,
                   /*catchSignals=*/true, ranks.parallel());

  // The resumed checkpoint fixes the tokenizer, the labels and the defaults.
  std::unique_ptr<SafetensorsReader> resumed;
  TrainDataOptions dataOptions;
  dataOptions.dataPath = options.dataPath;
  dataOptions.textPath = options.textPath;
  dataOptions.block = options.block;
  dataOptions.tokenizerKind = options.tokenizer;
  dataOptions.vocabSize = options.vocabSize;
  dataOptions.spmBpe = options.spmType == "bpe";
  if (options.resumePath) {
    resumed = std::make_unique<SafetensorsReader>(*options.resumePath);
    requireTrainingCheckpoint(*resumed);
    std::optional<std::string> tokenizerFile;
    if (options.tokenizer != "word" && options.tokenizer != "spm")
      tokenizerFile = options.tokenizer;
    dataOptions.tokenizer =
        loadModelTokenizer(model, *resumed, tokenizerFile, err);
    dataOptions.tokenizerOrigin =
        "the vocabulary of --resume '" + *options.resumePath + "'";
    dataOptions.tokenizerDataHash = recordedDataHash(*resumed);
    checkResumedTokenizerOptions(options, *dataOptions.tokenizer,
                                 *options.resumePath);
    if (model.kind == ModelKind::Classifier) {
      dataOptions.labels = loadModelLabels(model, *resumed);
      dataOptions.labelsOrigin = {
          "the labels of --resume '" + *options.resumePath + "'",
          "a resumed run keeps its labels (its output rows are their ids); "
          "to train other labels, start from its weights: --init-from an "
          "`export` of it with --tokenizer '" +
              checkpointSibling(*options.resumePath, kTokenizerSuffix) + "'"};
    }
    // A language model's text is cut into the checkpoint's blocks unless
    // --block says otherwise (the blocks are the examples batches draw).
    if (!dataOptions.block && recordedBlock(*resumed))
      dataOptions.block = recordedBlock(*resumed);
  }
  // --init-from a checkpoint that holds its tokenizer: its embedding and
  // output rows are that vocabulary's ids, so it is kept (a vocabulary
  // built anew from --data put other words on those rows, silently: a
  // fine-tuning run started from scrambled embeddings).
  // Opened once: its tokenizer here, its weights for the first step (and
  // any replay).
  std::unique_ptr<SafetensorsReader> initFrom;
  if (options.initFromPath)
    initFrom = std::make_unique<SafetensorsReader>(*options.initFromPath);
  std::optional<Tokenizer> initFromTokenizer;
  if (initFrom) {
    // Before the note that keeps its tokenizer: a file whose tensors do
    // not fit is refused first (another model's named as such).
    checkParametersFit(*initFrom, model);
    initFromTokenizer = checkpointTokenizer(*initFrom);
  }
  // A language model started from another's weights trains the blocks
  // those were trained on unless --block says otherwise: their positions
  // past the block never trained (eval and generate keep to it too).
  if (initFrom && !dataOptions.block && recordedBlock(*initFrom) &&
      model.kind == ModelKind::LanguageModel) {
    LengthBound length =
        inputBound(model, entry, inputWithRole(entry, "tokens"), 1);
    if (!length.constant && recordedBlock(*initFrom) < length.bound)
      dataOptions.block = recordedBlock(*initFrom);
    if (dataOptions.block)
      err << "note: blocks of " << *dataOptions.block
          << " tokens, as --init-from '" << *options.initFromPath
          << "' was trained (--block N for others)\n";
  }
  if (initFromTokenizer && !options.tokenizerGiven) {
    const std::string &path = *options.initFromPath;
    dataOptions.tokenizer = loadModelTokenizer(model, *initFrom, {}, err);
    dataOptions.tokenizerOrigin =
        "the vocabulary of --init-from '" + path + "'";
    dataOptions.tokenizerDataHash = recordedDataHash(*initFrom);
    if (model.kind == ModelKind::Classifier) {
      dataOptions.labels = loadModelLabels(model, *initFrom);
      dataOptions.labelsOrigin = {
          "the labels inside --init-from '" + path +
              "', kept with its tokenizer",
          "--init-from keeps a checkpoint's tokenizer and labels (its output "
          "rows are their ids); to train other labels, --init-from an "
          "`export` of it (weights only) with --tokenizer '" +
              checkpointSibling(path, kTokenizerSuffix) + "'"};
    }
    // --min-freq builds no vocabulary here: it was accepted, ignored and
    // recorded in the checkpoint beside the tokenizer's own.
    if (options.minFreq && (dataOptions.tokenizer->subwords ||
                            *options.minFreq != dataOptions.tokenizer->minFreq))
      throw InputError(
          "--min-freq " + std::to_string(*options.minFreq) +
          " does not apply: the tokenizer inside --init-from '" + path + "' (" +
          (dataOptions.tokenizer->subwords
               ? std::string("SentencePiece")
               : "words, min-freq " +
                     std::to_string(dataOptions.tokenizer->minFreq)) +
          ") is kept; --tokenizer word --min-freq N builds a new one from "
          "the data");
    err << "note: the tokenizer inside --init-from '" << path
        << "' is kept (its embedding rows are that vocabulary's ids); "
           "--tokenizer word or spm builds a new one from the data\n";
  }
  int64_t minFreq = options.minFreq.value_or(
      dataOptions.tokenizer ? dataOptions.tokenizer->minFreq : 1);
  dataOptions.minFreq = minFreq;
  TrainingData data = loadTrainingData(model, entry, dataOptions);
  for (const std::string &warning : data.warnings)
    err << "warning: " << warning << "\n";
  warnUnignoredPadding(model, entry, data.tokenizer, err);
  const Tokenizer &tokenizer = data.tokenizer;
  // A PyTorch state_dict (or an export) has no tokenizer: its embedding
  // rows go to the words of the vocabulary built from the data, by that
  // vocabulary's order, without a word of it (a fine-tuned LM's rows
  // belonged to other words).
  if (initFrom && !initFromTokenizer && !options.tokenizerGiven)
    err << "note: --init-from '" << *options.initFromPath
        << "' holds no tokenizer: its embedding rows are taken for the ids of "
           "the vocabulary built from the data; give --tokenizer FILE for the "
           "vocabulary the weights were trained with\n";
  if (initFromTokenizer && options.tokenizerGiven &&
      !initFromTokenizer->differenceFrom(tokenizer).empty())
    err << "warning: --init-from '" << *options.initFromPath
        << "' holds its own tokenizer, and --tokenizer built another one: "
           "the embedding and output rows keep their places, so each new id "
           "starts from the row of another word\n";
  if (options.savePath)
    checkStorable(model, tokenizer, data.labels ? &*data.labels : nullptr);
  if (ranks.parallel()) {
    // What differs, where it can be said: the model, the flags, the config
    // (an edited spec with the same flags printed two hashes).
    std::string config;
    for (const ConfigValue &value : model.config)
      config += (config.empty() ? "" : ", ") + value.key + " = " + value.json;
    requireSameAsRankZero(
        ranks, fingerprintOfProgram(model),
        "the executable's model ('" + model.model + "', precision " +
            model.precision +
            "; its config, optimizer and entries as txc "
            "--emit=metadata prints them)",
        "model '" + model.model + "', " +
            (model.compileFlags.empty()
                 ? std::string("compiled without txc flags")
                 : "compiled with " + model.compileFlags) +
            ", config " + config);
  }
  requireSameAsRankZero(ranks, data.hash,
                        (options.textPath.empty() ? "--data '" : "--text '") +
                            data.path + "'");
  if (ranks.parallel())
    requireSameAsRankZero(
        ranks, fnv1a64(tokenizer.toJson()),
        "the vocabulary (--min-freq " + std::to_string(minFreq) +
            ", --tokenizer " + options.tokenizer + ")",
        // What may differ with the same flags above: the SentencePiece
        // options and the sizes they gave (it printed two hashes).
        "--vocab-size " +
            (options.vocabSize ? std::to_string(*options.vocabSize)
                               : std::string("unset")) +
            ", --spm-type " + options.spmType.value_or("unset") + ", " +
            std::to_string(tokenizer.source.size()) + " / " +
            std::to_string(tokenizer.target.size()) + " ids");
  // The gradients' allreduce buckets and their overlap (libtxrt reads
  // them, and refuses a value it cannot read when the context is made):
  // ranks that cut the buckets otherwise called mismatched collectives and
  // crashed inside MPI, with no error of ours.
  if (ranks.parallel())
    for (const char *name : {"TXRT_BUCKET_MB", "TXRT_ALLREDUCE_OVERLAP"}) {
      const char *value = std::getenv(name);
      if (value && !*value)
        value = nullptr; // empty is unset
      requireSameAsRankZero(
          ranks, fnv1a64(value ? std::string("=") + value : std::string()),
          std::string(name) +
              " (the gradient buckets' layout; give it to every rank alike, "
              "mpirun -x " +
              name + "=...)",
          value ? std::string(name) + "=" + value
                : std::string(name) + " unset (the default)");
    }

  ModelRunner runner(model, entryTable, options.threads);
  runner.reserveArena(entry); // too large for the machine: fail before work
  // The stop signals reach this thread only, on its own signal stack.
  StopRequest::shieldWorkerThreads(
      runner.device() ? 0 : txrt_context_num_threads(runner.context()));
  TrainingPosition position;
  int64_t batch = 0;
  // --max-tokens: the B bound caps the rows of a token batch.
  int64_t maxTokens = options.maxTokens.value_or(0);
  // --update-freq: the checkpoint's unless given, like the batch.
  int64_t updateFreq = options.updateFreq.value_or(1);
  std::vector<LossPoint> curve;
  // What the curve's file holds, recorded in each checkpoint
  // (TrainingPosition::curveThrough): its rows through this step have this
  // fingerprint; nothing before the file is first written.
  std::optional<int64_t> curveThrough;
  uint64_t curveHash = 0;
  if (logPath && !options.resumePath) {
    curveThrough = 0; // the file holds none of this run's rows yet
    curveHash = lossCurveFingerprint({});
  }
  // A fresh start: --init SEED, or the weights of --init-from (opened
  // above, checked like --load before anything runs).
  bool initialized = false; // the note of --init-from once, not on replays
  auto initialize = [&] {
    if (initFrom)
      initializeFromWeights(*initFrom, model, runner.params().write(),
                            options.noEma, initialized ? nullptr : &err);
    else
      runner.params().write().initialize(options.initSeed.value_or(0));
    initialized = true;
  };
  // The checkpoint's position as it recorded it (the run's own replaces it).
  std::optional<TrainingPosition> checkpointPosition;
  if (options.resumePath) {
    // Validate everything before the arena changes: loadCheckpoint does.
    position = loadCheckpoint(*resumed, model, runner.params().write());
    checkpointPosition = position;
    if (!options.batch && !options.maxTokens)
      maxTokens = position.maxTokens;
    updateFreq = options.updateFreq.value_or(position.updateFreq);
    batch = maxTokens ? data.batchBound.bound * ranks.size()
            : options.batch
                ? batchSize(options.batch, data.batchBound, ranks.size())
                : resumedBatchSize(position.batchSize, position.updateFreq,
                                   data.batchBound, ranks.size());
    err << "resuming '" << *options.resumePath << "' at step "
        << position.step << " (trained with update-freq "
        << position.updateFreq << " on " << position.ranks
        << (position.ranks == 1 ? " rank" : " ranks") << ")\n";
    if (position.rowTokenWindows && maxTokens)
      err << "note: '" << *options.resumePath
          << "' was trained by an older txc, whose --max-tokens batches were "
             "sorted by length in windows of 16 x the row bound: this one's "
             "windows hold 16 token budgets, so the resumed run takes other "
             "batches (the same data in another order) than that run would "
             "have\n";
    noteDifferences(
        position, options, batch, maxTokens, updateFreq, ranks.size(),
        runner.device() ? 0 : txrt_context_num_threads(runner.context()), data,
        model, err);
    position.seed = options.seed.value_or(position.seed);
    if (logPath)
      curve = resumedCurve(*logPath, position, options, err, curveThrough,
                           curveHash);
  } else {
    // --max-tokens: each rank's rows are capped by the B bound.
    batch = maxTokens ? data.batchBound.bound * ranks.size()
                      : batchSize(options.batch, data.batchBound, ranks.size());
    position.seed = options.seed.value_or(0);
    initialize();
  }
  if (maxTokens && data.batchBound.constant)
    throw InputError(
        "--max-tokens " + std::to_string(maxTokens) +
        (options.maxTokens ? std::string() : " (the resumed checkpoint's)") +
        ": batches by tokens vary in rows, and the model's "
        "batch is " +
        data.batchBound.describe() + "; train with --batch " +
        std::to_string(data.batchBound.bound * ranks.size()) + " instead");
  // Each rank takes a share of every batch (the last of an epoch may be
  // shorter: DataParallel.h gives an empty share a zero-weight row).
  if (!maxTokens && batch < ranks.size())
    throw InputError(
        "--batch " + std::to_string(batch) +
        (options.batch || !options.resumePath ? ""
                                              : " (the resumed checkpoint's)") +
        " has fewer examples than the " + std::to_string(ranks.size()) +
        " ranks: use a larger --batch (or fewer ranks)");
  position.batchSize = batch;
  position.maxTokens = maxTokens;
  position.updateFreq = updateFreq;
  position.ranks = ranks.size();
  position.minFreq = minFreq;
  position.dataPath = data.path;
  position.dataHash = data.hash;
  position.block = data.block;

  if (ranks.parallel())
    requireSameAsRankZero(
        ranks, fingerprintOfTrainingState(model, runner.params().read()),
        "the start of training (its parameters and moments)",
        options.resumePath ? "--resume '" + *options.resumePath + "'"
        : options.initFromPath
            ? "--init-from '" + *options.initFromPath + "'"
            : "--init " + std::to_string(options.initSeed.value_or(0)));

  // --ema (or the resumed checkpoint's average): from the weights now.
  std::unique_ptr<WeightAverage> average =
      startWeightAverage(model, runner.params(), options, resumed.get(), err);

  // --update-freq K: an update takes a batch K times larger (K x the rows,
  // or K x the tokens), cut into K pieces (DataParallel.h).
  std::unique_ptr<BatchSource> source = data.makeSource(
      batch * updateFreq, maxTokens * updateFreq, position.seed);
  const BatchPlan &plan = source->plan();
  // Where the resumed run goes on in the data. The checkpoint records the
  // epoch and batch of its next update; with the same cut the plan gives
  // exactly that. Another cut (another --batch, --max-tokens,
  // --update-freq or --seed) took that cut's batch of the next step, from
  // another epoch's position: examples came twice or never, with only "will
  // not match an uninterrupted run" said. Now the run goes on in the
  // checkpoint's epoch, at the new cut's batch that repeats and skips the
  // fewest of what the epoch trained so far (its start at an epoch's end:
  // nothing), and says what remains. An epoch cut otherwise in its middle
  // follows from no one cut: its checkpoints record which examples it
  // trained (`epoch_seen`), which the next change counts against.
  std::vector<char> epochSeenBefore; // (with position.cutChangedInEpoch)
  int64_t epochSeenFrom = 0;
  if (checkpointPosition && !checkpointPosition->dataPositionStep &&
      !checkpointPosition->rowTokenWindows &&
      checkpointPosition->dataHash == data.hash) {
    const TrainingPosition &saved = *checkpointPosition;
    const int64_t next = saved.step + 1;
    const int64_t savedRows = saved.batchSize * saved.updateFreq,
                  savedTokens = saved.maxTokens * saved.updateFreq;
    const bool sameCut = savedRows == batch * updateFreq &&
                         savedTokens == maxTokens * updateFreq &&
                         saved.seed == position.seed;
    const bool cutBefore = saved.cutChangedInEpoch &&
                           *saved.cutChangedInEpoch == saved.epoch &&
                           saved.epochSeen.size() == plan.examples();
    // The checkpoint's cut, aligned to where it records it stopped (its
    // own run may have resumed another cut): built only for another cut,
    // which alone needs what the epoch trained so far.
    std::optional<BatchPlan> before;
    std::vector<char> seen;
    std::string change;
    int64_t index = saved.batchInEpoch;
    if (!sameCut) {
      before = plan.rebatched(savedRows, savedTokens, saved.seed);
      before->setStepOffset(
          before->stepOfPosition(saved.epoch, saved.batchInEpoch) - next);
      seen = cutBefore ? saved.epochSeen
                       : examplesOfBatches(*before, saved.epoch, 0,
                                           saved.batchInEpoch);
      index = resumedBatchIndex(seen, saved.epoch, plan, "examples", change);
    } else if (cutBefore) {
      seen = saved.epochSeen;
    }
    source->setStepOffset(plan.stepOfPosition(saved.epoch, index) - next);
    if (cutBefore || (!sameCut && saved.batchInEpoch > 0)) {
      position.cutChangedInEpoch = saved.epoch;
      epochSeenBefore = std::move(seen);
      epochSeenFrom = index;
    }
    if (!change.empty()) {
      const int64_t epochEnd = saved.step +
                               before->batchesInEpoch(saved.epoch) -
                               saved.batchInEpoch;
      const auto [goesOnEpoch, goesOnIndex] = plan.positionOfStep(next);
      err << "warning: the resumed run cuts the data into other batches than "
             "the checkpoint's and goes on at batch "
          << goesOnIndex + 1 << " of epoch " << goesOnEpoch + 1
          << " in that cut: " << change;
      if (cutBefore)
        err << "; epoch " << saved.epoch + 1
            << " was cut otherwise before, so no options take each once: "
               "keep them through step "
            << epochEnd << " (the end of the epoch) to change nothing more\n";
      else
        err << "; to take each once, resume with "
            << checkpointCut(saved, int64_t(ranks.size())) << " --seed "
            << saved.seed << " through step " << epochEnd
            << " (the end of epoch " << saved.epoch + 1
            << "), and change them from there\n";
    }
  } else if (checkpointPosition && checkpointPosition->dataPath.empty()) {
    // A checkpoint `run` started (no data yet): the data starts at batch 1
    // of epoch 1 (it took step N's batch, and batches 1..N-1 never came).
    source->setStepOffset(plan.stepOfPosition(0, 0) -
                          (checkpointPosition->step + 1));
  }
  int64_t lastStep = 0;
  if (options.steps) {
    lastStep = *options.steps;
  } else if (!plan.stepsOfEpochs(options.epochs.value_or(1),
                                 kMaxTrainingCount, lastStep)) {
    throw InputError("--epochs " + std::to_string(*options.epochs) + " of " +
                     std::to_string(plan.batchesPerEpoch()) +
                     " batches is more than " +
                     std::to_string(kMaxTrainingCount) + " steps");
  }
  const int64_t firstStep = position.step + 1;
  // Ranks with other steps (or validations that may stop them: --ema
  // decides what is scored) would wait for each other's allreduces forever.
  const std::string stepsPlan =
      "steps " + std::to_string(firstStep) + ".." + std::to_string(lastStep) +
      ", batch " + std::to_string(batch) + ", max-tokens " +
      std::to_string(maxTokens) + ", update-freq " +
      std::to_string(updateFreq) + ", seed " + std::to_string(position.seed) +
      (data.block ? ", block " + std::to_string(data.block) : std::string()) +
      (average ? ", ema " + formatDecay(average->decay()) : std::string()) +
      (options.validPath
           ? ", valid-every " + std::to_string(options.validEvery) +
                 ", patience " + std::to_string(options.patience)
           : std::string());
  requireSameAsRankZero(ranks, fnv1a64(stepsPlan), "the training plan",
                        stepsPlan);
  if (ranks.parallel() && options.validPath)
    requireSameAsRankZero(ranks, fnv1a64(readWholeFile(*options.validPath)),
                          "--valid '" + *options.validPath + "'");

  // What a failed run leaves at --save, for its error message.
  int64_t lastSavedStep = -1;
  std::error_code existsError;
  const bool saveExisted =
      options.savePath &&
      std::filesystem::exists(*options.savePath, existsError);
  auto savedNote = [&]() -> std::string {
    if (!options.savePath)
      return "";
    if (lastSavedStep >= 0)
      return " ('" + *options.savePath + "' keeps its save of step " +
             std::to_string(lastSavedStep) + ")";
    if (saveExisted)
      return " ('" + *options.savePath + "' is left as it was)";
    return " (nothing was saved to '" + *options.savePath + "')";
  };

  // Where a replay (Divergence.h) restarts: the last save, else the start.
  std::unique_ptr<SafetensorsReader> lastSave;
  auto restore = [&] {
    if (lastSave || resumed)
      loadCheckpoint(lastSave ? *lastSave : *resumed, model,
                     runner.params().write());
    else
      initialize();
  };

  // --valid (below); its best so far goes into every checkpoint.
  std::unique_ptr<Validator> validator;
  // The step whose validation a stop signal abandoned: its checkpoint
  // says so, and a resume from it runs that validation first.
  std::optional<int64_t> abandonedAt;
  // `withCurve`: the loss curve's record (not in --keep-best's file, written
  // between two writes of the curve: a resumed run's would differ).
  auto writeCheckpoint = [&](const std::string &path, int64_t step,
                             bool withCurve = true) {
    TrainingPosition at = position;
    at.step = step;
    // The host's threads, on a device too (its checkpoints are the CPU's,
    // byte for byte); only a CPU resume notes another count.
    at.threads = txrt_context_num_threads(runner.context());
    auto [epoch, index] = plan.positionOfStep(step + 1);
    at.epoch = epoch;
    at.batchInEpoch = index;
    // An epoch cut otherwise in its middle: what it trained so far.
    at.epochSeen.clear();
    // (Up to 64 Mi examples: 16 MB of the header's 100 MB.)
    if (at.cutChangedInEpoch && *at.cutChangedInEpoch == epoch &&
        plan.examples() <= (size_t(64) << 20)) {
      at.epochSeen = examplesOfBatches(plan, epoch, epochSeenFrom, index);
      for (size_t i = 0; i < at.epochSeen.size(); ++i)
        at.epochSeen[i] |= i < epochSeenBefore.size() && epochSeenBefore[i];
    }
    at.dataPositionStep = std::nullopt;
    // A run without --valid keeps the resumed checkpoint's record (the
    // best so far, the validations since): it dropped it, and the next
    // --keep-best run took a worse score for the best and replaced the
    // better checkpoint's file.
    at.validation = validator ? validator->record() : position.validation;
    at.validationPending =
        abandonedAt && *abandonedAt == step ? abandonedAt : std::nullopt;
    at.curveThrough = withCurve ? curveThrough : std::nullopt;
    at.curveHash = withCurve ? curveHash : 0;
    saveCheckpoint(path, model, runner.params().read(), at, tokenizer,
                   average.get(), data.labels ? &*data.labels : nullptr);
  };
  // Writes the checkpoint at --save with `writeTheCheckpoint` and the copies
  // beside it (its tokenizer, the Hugging Face pair, the SentencePiece
  // model, the labels): the copies go to their temporaries first, the
  // checkpoint (which holds the tokenizer itself) is replaced next, and the
  // copies' names last: a disk that fills up leaves all of them as they
  // were (it left the old copies beside a new checkpoint), and an
  // interrupted save never pairs a new tokenizer with an old checkpoint.
  // The copies beside the checkpoint, by suffix: its tokenizer, the
  // Hugging Face pair or the SentencePiece model, the labels.
  auto checkpointCopies = [&] {
    std::vector<std::pair<const char *, std::string>> copies = {
        {kTokenizerSuffix, tokenizer.toJson()}};
    if (!tokenizer.subwords) {
      copies.push_back(
          {kSourceTokenizerSuffix, tokenizer.source.toHuggingFaceJson()});
      copies.push_back(
          {kTargetTokenizerSuffix, tokenizer.target.toHuggingFaceJson()});
    } else {
      copies.push_back({kSentencePieceSuffix, tokenizer.subwords->bytes()});
    }
    if (data.labels)
      copies.push_back({kLabelsSuffix, data.labels->toJson()});
    return copies;
  };
  auto saveWithCopies = [&](const std::function<void()> &writeTheCheckpoint) {
    std::vector<std::unique_ptr<AtomicFileWriter>> copies;
    for (const auto &[suffix, content] : checkpointCopies()) {
      copies.push_back(std::make_unique<AtomicFileWriter>(
          checkpointSibling(*options.savePath, suffix)));
      copies.back()->write(content);
    }
    for (auto &writer : copies)
      writer->sync();
    writeTheCheckpoint();
    for (auto &writer : copies)
      writer->commit();
  };
  // --keep-last over another run's step files (--overwrite, or a resume
  // of another file into --save): gone at the first save, so that the
  // latest K are this run's.
  bool clearStepFiles =
      options.keepLast && options.savePath &&
      !(options.resumePath && sameFile(*options.resumePath, *options.savePath));
  // A resume from a step file of --save itself (a roll back) continues that
  // run: its step files through the resumed one are this run's history and
  // stay (the resumed file was removed, with the older ones, unsaid).
  std::optional<int64_t> ownStepsThrough;
  if (clearStepFiles && options.resumePath)
    for (const auto &[its, path] : stepCheckpoints(*options.savePath))
      if (sameFile(path, *options.resumePath))
        ownStepsThrough = its;
  auto save = [&](int64_t step) {
    if (!options.savePath)
      return;
    saveWithCopies([&] {
      writeCheckpoint(*options.savePath, step);
      lastSavedStep = step;
      // Keeps this file (its inode) readable for a replay even after the
      // next save replaces the name.
      lastSave = std::make_unique<SafetensorsReader>(*options.savePath);
      // A replay restarts from this save now: the resumed file (replaced
      // by the first save when --save is --resume's) is let go, or its
      // space stayed held beside the new checkpoint and its temporary
      // (3x the checkpoint on disk; a tester's full disk at the second
      // save of a resumed run).
      resumed.reset();
    });
    // After the copies beside it are in place (a failure here left the
    // checkpoint without them).
    if (options.keepLast) {
      if (clearStepFiles) {
        std::vector<int64_t> removed;
        for (const auto &[its, path] : stepCheckpoints(*options.savePath)) {
          if (ownStepsThrough && its <= *ownStepsThrough)
            continue;
          std::error_code error;
          if (!std::filesystem::remove(path, error) && error)
            throw ResourceError("cannot remove '" + path +
                                "', another run's step checkpoint "
                                "(--keep-last --overwrite): " +
                                error.message());
          removed.push_back(its);
        }
        if (!removed.empty()) {
          std::sort(removed.begin(), removed.end());
          std::string steps;
          for (int64_t its : removed)
            steps += (steps.empty() ? "" : ", ") + std::to_string(its);
          err << "note: removed " << removed.size() << " step checkpoint"
              << (removed.size() == 1 ? "" : "s") << " of "
              << (ownStepsThrough ? "the run past the resumed step"
                                  : "another run")
              << " beside --save (--overwrite): step"
              << (removed.size() == 1 ? " " : "s ") << steps << "\n";
        }
        clearStepFiles = false;
      }
      keepStepCheckpoint(*options.savePath, step, options.keepLast);
    }
  };

  // --valid: scored every --valid-every steps (loop/Validation.h); the
  // best is kept as CKPT.best.safetensors with --keep-best.
  if (options.validPath)
    validator = std::make_unique<Validator>(
        model, runner, tokenizer, *options.validPath, batch, bestBy,
        data.labels ? &*data.labels : nullptr, data.block);
  // A stop signal abandons a validation in progress, so that the save is
  // not held back by it (ranks decide together: not under MPI).
  if (validator && !ranks.parallel())
    validator->setInterrupt([] { return StopRequest::caughtSignal() != 0; });
  std::optional<std::string> bestPath;
  if (options.keepBest)
    bestPath = checkpointSibling(*options.savePath, kBestCheckpointSuffix);
  // The resumed best continues only where it is comparable.
  if (const std::optional<ValidationRecord> &record = position.validation)
    if (validator && !validator->resumeFrom(*record)) {
      auto metric = [](BestBy by) {
        return by == BestBy::Bleu ? "BLEU" : bestByName(by);
      };
      err << "note: the checkpoint's best validation (step " << record->bestStep
          << ", by " << metric(record->by) << " on '" << record->validPath
          << "') is not comparable with --valid '" << *options.validPath
          << "' by " << metric(bestBy)
          << "; validation starts a new best";
      if (bestPath)
        err << " (the first finite validation replaces " << *bestPath << ")";
      err << "\n";
    }
  // A run that --patience stopped, resumed with the same patience, stops
  // there too (the uninterrupted run trained no further); it trained on and
  // said "P validations without improving" again after more of them.
  bool stoppedEarly = false;
  if (validator && options.patience && position.validation &&
      validator->sinceBest() >= options.patience && firstStep <= lastStep) {
    err << "note: the checkpoint's run stopped early at step " << position.step
        << ": " << validator->sinceBest()
        << (validator->sinceBest() == 1 ? " validation" : " validations")
        << " without improving on step " << validator->patienceBestStep()
        << " (--patience " << options.patience
        << "); nothing to train (a larger --patience trains on)\n";
    lastStep = firstStep - 1;
    stoppedEarly = true;
  }
  // A validation a stop abandoned can only run on the weights of its step:
  // a run without --valid that trains past it loses it, and a later run
  // with --valid counted one validation fewer for --patience (it stopped
  // 40 steps after the uninterrupted run), without a word.
  if (!validator && options.resumePath && position.validationPending &&
      *position.validationPending == position.step && firstStep <= lastStep)
    err << "note: the checkpoint's validation of step " << position.step
        << " was abandoned by a stop and is pending; this run has no --valid, "
           "so it trains past it and the validation is lost (the best and "
           "--patience then count one validation fewer than an uninterrupted "
           "run's): give the run's --valid options to run it first\n";
  // Every rank has read its data, options and checkpoint and checked them
  // against rank 0's before anything is written: rank 0's broadcasts of its
  // fingerprints return without waiting for the others, so with nothing to
  // train it copied --resume to --save while rank 1 was failing on its data
  // (its MPI_Abort ends rank 0 here instead).
  if (ranks.parallel())
    ranks.sum(1.0);
  // Whether `bestPath` holds validator->best(). A resumed best was kept
  // under the name of the run that scored it (CKPT.best.safetensors of
  // --resume's file), or not at all (that run had no --keep-best): it is
  // copied to this run's name, written from the resumed weights when they
  // are the best, or the end says it was not kept (it named a file that
  // did not exist).
  bool bestKept = false;
  if (bestPath && validator && resumed && position.validation &&
      validator->best().step > 0) {
    const int64_t bestStep = validator->best().step;
    std::string earlier =
        checkpointSibling(*options.resumePath, kBestCheckpointSuffix);
    if (holdsRecordedBest(*bestPath, *resumed, err)) {
      bestKept = true;
    } else if (earlier != *bestPath &&
               holdsRecordedBest(earlier, *resumed, err)) {
      copyCheckpointFile(earlier, *bestPath);
      bestKept = true;
      err << "note: copied the best checkpoint so far (validation step "
          << bestStep << ") from '" << earlier << "' to '" << *bestPath
          << "'\n";
    } else if (bestStep == position.step && !average) {
      writeCheckpoint(*bestPath, position.step, false);
      bestKept = true;
    } else if (std::optional<int64_t> later =
                   laterBestStep(earlier, position.step)) {
      // The same run kept a newer best and was stopped (killed) before
      // its next checkpoint: "had no --keep-best" blamed the wrong cause.
      err << "note: '" << earlier << "' holds the best of step " << *later
          << ", past this checkpoint's step " << position.step
          << " (the run stopped before it saved again); the best validation "
             "of this checkpoint (step "
          << bestStep << ") is no file, and '" << *bestPath
          << "' is written when a validation beats it\n";
    } else {
      err << "note: the best validation so far (step " << bestStep
          << ") was not kept as a checkpoint ('" << earlier
          << "' does not hold it: its run had no --keep-best, or the file "
             "was replaced); '"
          << *bestPath << "' is written when a validation beats it\n";
    }
  }
  double lastValidBleu = -1; // for the progress line
  /// Validates; whether --patience says to stop. A validation off the
  /// --valid-every schedule (the end of a run, or a stop, between scheduled
  /// ones) may find a new best but does not count towards --patience
  /// otherwise: a run resumed from there would not repeat it.
  bool warnedEmptyOutputs = false, warnedSameOutputs = false;
  // Of the validations' time, the --keep-best saves': said as saving.
  double bestSavingSeconds = 0;
  auto validate = [&](int64_t step) {
    const bool scheduled = step % options.validEvery == 0;
    // With --ema the average is scored (and so kept as the best).
    if (average)
      average->swap(runner.params().write());
    ValidationScore score;
    try {
      score = validator->run(step, scheduled);
    } catch (const Interrupted &) {
      // A stop signal during the validation (a scheduler's grace period
      // is short; BLEU decodes a whole file): the save comes first.
      if (average)
        average->swap(runner.params().write());
      err << "validation at step " << step
          << " abandoned: a stop signal arrived; the checkpoint is saved "
             "without its score (a resume runs it first)\n";
      abandonedAt = step;
      return false;
    }
    if (average)
      average->swap(runner.params().write());
    err << score.describe() << (validator->improved() ? " (best)" : "")
        << "\n";
    if (!score.decodeProblem.empty())
      // The problem names the pair ("valid.tsv:3: the model's logits ...").
      err << "warning: the validation at step " << step
          << " could not decode with "
          << (average ? "the --ema average of the weights" : "the weights")
          << ": " << score.decodeProblem
          << "; its BLEU is not computed (nan) and the run goes on\n";
    // The compared value, or the loss (weights that give NaN outputs on
    // the validation text score no best whatever --best-by compares).
    const bool judgedFinite = std::isfinite(validator->judged(score));
    if (!judgedFinite || !std::isfinite(score.loss))
      err << "warning: the validation "
          << (judgedFinite ? "loss" : validator->judgedName()) << " at step "
          << step << " is not finite ("
          << (std::isnan(judgedFinite ? score.loss : validator->judged(score))
                  ? "nan"
                  : "inf")
          << "): it is never the best, and never an improvement for "
             "--patience (the weights give non-finite outputs on "
          << options.validPath.value_or("the validation text") << "?)\n";
    if (score.hasBleu)
      lastValidBleu = score.bleu.bleu;
    if (!curve.empty() && curve.back().step == step) {
      curve.back().hasValidation = true;
      curve.back().hasBleu = score.hasBleu;
      curve.back().validLoss = score.loss;
      curve.back().validAccuracy = score.accuracy;
      curve.back().validBleu = score.hasBleu ? score.bleu.bleu : NAN;
    }
    // Once a run each (it repeated at every validation of a run whose
    // first outputs are empty, as the first ones often are).
    if (score.allEmpty && !warnedEmptyOutputs) {
      warnedEmptyOutputs = true;
      err << "warning: every validation output is empty (step " << step
          << "); the model predicts [EOS] first (check the learning-rate "
             "schedule (warmup) and train longer)\n";
    } else if (!score.allEmpty && score.allSame && !warnedSameOutputs) {
      warnedSameOutputs = true;
      err << "warning: every validation output is the same sentence (step "
          << step
          << "); the model ignores its input (check the learning-rate "
             "schedule (warmup))\n";
    }
    if (bestPath && validator->improved()) {
      // A failure says where the run stopped and what --save holds, as
      // the other saves' do (it said only the .best file's problem).
      try {
        const auto begin = std::chrono::steady_clock::now();
        writeCheckpoint(*bestPath, step, false);
        bestSavingSeconds += std::chrono::duration<double>(
                                 std::chrono::steady_clock::now() - begin)
                                 .count();
      } catch (const DriverError &error) {
        throw ResourceError(std::string(error.what()) +
                            "; training stopped at step " +
                            std::to_string(step) + savedNote());
      }
      bestKept = true;
    }
    if (options.patience && validator->sinceBest() >= options.patience) {
      err << "stopping early at step " << step << ": " << options.patience
          << (options.patience == 1 ? " validation" : " validations");
      if (validator->hasPatienceBest())
        err << " without improving on step " << validator->patienceBestStep();
      else
        err << " without a finite score";
      err << " (" << (bestBy == BestBy::Bleu ? "BLEU" : bestByName(bestBy))
          << ")\n";
      return true;
    }
    return false;
  };

  // The validation a stop abandoned at the resumed step runs first, as
  // the uninterrupted run ran it (its score, best, --keep-best file and
  // --patience stop); the checkpoint is then saved with it even when
  // there is nothing to train.
  bool ranPending = false;
  if (validator && resumed && position.validationPending &&
      *position.validationPending == position.step && !stoppedEarly) {
    err << "running the validation of step " << position.step
        << " that a stop abandoned\n";
    ranPending = true;
    if (validate(position.step)) {
      lastStep = firstStep - 1;
      stoppedEarly = true;
    } else if (abandonedAt && *abandonedAt == position.step) {
      // Abandoned again by a stop signal: the run stops here, the
      // checkpoint still pending (it trained a step on, validated that
      // and saved it, the validation lost: the resumed run stopped at
      // another step than the uninterrupted one).
      err << "stopping at step " << position.step
          << ": a stop signal arrived during that validation, which the "
             "next resume runs first\n";
      lastStep = firstStep - 1;
      stoppedEarly = true;
    }
  }

  err << "training '" << model.model << "' on " << data.summary << ", "
      << (maxTokens ? "at most " + std::to_string(maxTokens) +
                          " padded tokens and " + std::to_string(batch) +
                          " rows per batch"
                    : "batch " + std::to_string(batch))
      // The plan counts updates: K batches each under --update-freq K.
      << ", " << plan.batchesPerEpoch()
      << (updateFreq > 1 ? " update" : " batch")
      << (plan.batchesPerEpoch() == 1 ? "" : (updateFreq > 1 ? "s" : "es"))
      << (maxTokens ? " in epoch 1" : " per epoch")
      << (firstStep > lastStep
              ? ", no steps"
              : ", steps " + std::to_string(firstStep) + ".." +
                    std::to_string(lastStep))
      << ", " << describeOptimizer(optimizer);
  if (updateFreq > 1)
    err << ", update-freq " << updateFreq;
  if (ranks.parallel())
    err << ", " << ranks.size() << " ranks";
  err << "\n";
  if (options.verbose && !data.storage.empty())
    err << data.storage << "\n";
  if (firstStep > lastStep && !stoppedEarly)
    err << "note: the checkpoint is already at step " << position.step
        << "; nothing to train\n";

  /// One update: the batch of `step`, the train state, the entry.
  struct StepResult {
    double loss, seconds;
    int64_t epoch, targetTokens;
  };
  DataParallelUpdate update(runner, entry, updateFreq, ranks);
  // Pieces of a batch sum to exactly its loss only for one cross-entropy
  // (DataParallel.h): another loss (an extra term, a sum of two) trained
  // a near but other update, without a word.
  if (!update.plain() && entry.lossFormKnown && entry.lossTargets < 0 &&
      ranks.rank() == 0)
    err << "warning: the loss of entry '" << entry.name
        << "' is not one cross_entropy of an input"
        << " (it has other terms or another form): "
        << (updateFreq > 1 ? "with --update-freq " + std::to_string(updateFreq)
                           : std::string())
        << (updateFreq > 1 && ranks.size() > 1 ? " and " : "")
        << (ranks.size() > 1 ? (updateFreq > 1 ? "" : "with ") +
                                   std::to_string(ranks.size()) + " ranks"
                             : std::string())
        << " each piece of a batch is weighted by its target tokens, which "
           "gives "
           "an update near, not equal to, the update of the whole batch at "
           "once, and the loss shown and logged is the pieces' losses so "
           "weighted: the whole batch's for a mean over tokens, not for a "
           "sum (a sum over the batch shows about 1/"
        << updateFreq * ranks.size() << " of it)\n";
  auto runStep = [&](int64_t step) {
    int64_t epoch = plan.positionOfStep(step).first;
    auto stepStart = std::chrono::steady_clock::now();
    DataParallelUpdate::Result result =
        update.run(*source, step, position.seed);
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - stepStart)
                         .count();
    return StepResult{result.loss, seconds, epoch, result.targetTokens};
  };

  // The loss comes from before the update: what the update wrote
  // (parameters and moments) is checked before every save, at the end and
  // within a time budget after updates (Divergence.h).
  DivergenceWatch watch(
      [&]() -> const ParameterArena & { return runner.params().read(); },
      position.step,
      [&](int64_t step) { return runStep(step).loss; }, restore);
  TrainingProgress progress(err, interactive, firstStep, lastStep);
  if (model.kind == ModelKind::Classifier)
    progress.setRateUnit("examples", "ex");
  if (options.stopSeconds)
    progress.setTimeLimit(*options.stopSeconds);
  // The note on --save after a non-finite loss at `step`: when the last
  // save was of the step before, it holds the very parameters that loss
  // came from (finite, but already giving it).
  auto savedNoteAfterLoss = [&](int64_t step, double loss) {
    if (!options.savePath || std::isfinite(loss) || lastSavedStep != step - 1)
      return savedNote();
    return " ('" + *options.savePath + "' keeps its save of step " +
           std::to_string(lastSavedStep) +
           ", the parameters this loss was computed from: they are finite "
           "but already give it, so resume from an earlier copy, with a "
           "lower learning rate)";
  };
  // A write that fails after training began (a directory made read-only,
  // a full disk): a runtime failure (exit 1, where a destination refused
  // before step 1 is bad input, 2) that says where the run stopped and
  // what the last save still holds.
  auto writeOrStop = [&](int64_t step, const auto &write) {
    try {
      write();
    } catch (const DriverError &error) {
      progress.finish();
      std::string message = error.what();
      const std::string note = savedNote();
      // A failed checkpoint write already says the file is left as it was,
      // or that it was replaced (a directory that could not be synced).
      const bool said =
          message.find(note.substr(1)) != std::string::npos ||
          (options.savePath &&
           message.find("'" + *options.savePath + "' is left as it was") !=
               std::string::npos) ||
          message.find(kReplacedNotDurable) != std::string::npos;
      throw ResourceError(message + "; training stopped at step " +
                          std::to_string(step) + (said ? "" : note));
    }
  };

  // The curve before the checkpoint: a run that ends between the two
  // leaves rows past the checkpoint's step, which --resume drops, never a
  // checkpoint past the curve's last row (a gap in the resumed curve). A
  // curve that cannot be written (a file size limit: it grows with the
  // steps, the checkpoint does not) stops the run after the checkpoint is
  // saved: it stopped it before, losing the steps since the last save.
  // A new run's curve and plot that were not there before it: removed when
  // its first save fails, with nothing saved (they blocked the same
  // command's rerun as "a loss curve already", of no checkpoint).
  std::error_code probe;
  const bool curveIsNew =
      logPath && !options.resumePath &&
      !std::filesystem::exists(*logPath, probe) &&
      !std::filesystem::exists(svgPathFor(*logPath), probe);
  auto curveThenCheckpoint = [&](const std::function<void()> &saveTheSteps,
                                 bool writeCurve = true) {
    std::exception_ptr curveFailure;
    if (logPath && writeCurve) {
      try {
        writeLossCurve(*logPath, curve, model.model + " training loss");
        curveThrough = curve.empty() ? 0 : curve.back().step;
        curveHash = lossCurveFingerprint(curve);
      } catch (const DriverError &) {
        curveFailure = std::current_exception();
      }
    }
    try {
      saveTheSteps();
    } catch (...) {
      if (curveIsNew && lastSavedStep < 0) {
        std::filesystem::remove(*logPath, probe);
        std::filesystem::remove(svgPathFor(*logPath), probe);
      }
      throw;
    }
    if (curveFailure)
      std::rethrow_exception(curveFailure);
  };

  auto diverged = [&](const Divergence &divergence) {
    progress.finish();
    return KernelError(
        divergence.describe() + "; stopping without saving" +
        savedNoteAfterLoss(divergence.step, divergence.lossBefore));
  };
  // What to check names the warmup only where the schedule has one.
  const bool warmup = model.optimizer &&
                      model.optimizer->lr.kind ==
                          LearningRateSchedule::Kind::Noam;
  UnigramWatch unigram(data.targetEntropy, data.targetUnit,
                       warmup ? "check the learning-rate schedule (warmup)"
                              : "check the learning rate (too high or too "
                                "low), or train longer");
  // Stopped by --stop-time or a signal before its last step: the closing
  // lines say how to go on.
  bool interrupted = false;
  // A resumed run's window starts with its curve's last losses: the one
  // it continues, else (no --save or --log) the resumed checkpoint's own
  // when it holds the rows the checkpoint saw.
  std::vector<LossPoint> seenRows = curve;
  if (seenRows.empty() && options.resumePath && position.curveThrough)
    for (const std::string &own : resumedCurvePaths(*options.resumePath)) {
      std::error_code error;
      if (!std::filesystem::is_regular_file(own, error))
        continue;
      std::vector<LossPoint> rows = parseLossCsv(readWholeFile(own));
      rows.erase(std::remove_if(rows.begin(), rows.end(),
                                [&](const LossPoint &row) {
                                  return row.step > *position.curveThrough;
                                }),
                 rows.end());
      if (lossCurveFingerprint(rows) == position.curveHash) {
        seenRows = std::move(rows);
        break;
      }
    }
  for (size_t i = seenRows.size() > UnigramWatch::kWindow
                      ? seenRows.size() - UnigramWatch::kWindow
                      : 0;
       i < seenRows.size(); ++i)
    unigram.seen(seenRows[i].loss);
  // Ranks agree on a stop (each has its own clock and signals): one sum
  // per update.
  stop.startClock();
  // A rank with no reason of its own says which kind another rank had:
  // rank 0 (which prints) said "another rank stopped" when another's clock
  // passed the same --stop-time first. Each rank adds 1 for its clock and
  // 1024 for a signal.
  auto stopReason = [&]() -> std::optional<std::string> {
    std::optional<std::string> why = stop.reason();
    if (!ranks.parallel())
      return why;
    const std::optional<double> left = stop.secondsLeft();
    const bool timeUp = why && left && *left <= 0;
    const double sum = ranks.sum(!why ? 0.0 : timeUp ? 1.0 : 1024.0);
    if (sum == 0)
      return std::nullopt;
    if (why)
      return why;
    return std::fmod(sum, 1024.0) > 0
               ? std::string("another rank's --stop-time passed")
               : std::string("another rank stopped (a signal)");
  };
  auto start = std::chrono::steady_clock::now();
  double lastLoss = NAN;
  int64_t tokens = 0;
  // The time the loop spent saving and validating: the closing rate is
  // over the steps (with --every 100 it read 44372 tokens/s beside steps of
  // 1.3M), and the line says the rest.
  double savingSeconds = 0, validatingSeconds = 0;
  auto paused = [&](double &total, auto &&work) {
    const auto begin = std::chrono::steady_clock::now();
    struct Add {
      double &total;
      std::chrono::steady_clock::time_point begin;
      ~Add() {
        total += std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - begin)
                     .count();
      }
    } add{total, begin};
    return work();
  };
  // The curve, then the checkpoint of `step` (with --save; a diverged run
  // is not saved) before the run goes on.
  auto saveDuringTheRun = [&](int64_t step) {
    if (options.savePath)
      if (std::optional<Divergence> divergence = watch.check(step, lastLoss))
        throw diverged(*divergence);
    writeOrStop(step, [&] {
      curveThenCheckpoint([&] {
        if (options.savePath) {
          save(step);
          watch.savedAt(step);
        }
      });
    });
  };
  for (int64_t step = firstStep; step <= lastStep; ++step) {
    StepResult result = runStep(step);
    lastLoss = result.loss;
    if (!std::isfinite(lastLoss)) {
      // Often an earlier update made a parameter non-finite: name it.
      if (std::optional<Divergence> divergence = watch.check(step, lastLoss))
        throw diverged(*divergence);
      progress.finish();
      // NaN without printf's sign ("-nan"), and the epoch 1-based as the
      // progress lines count it.
      throw KernelError("the loss is " +
                        std::string(std::isnan(lastLoss) ? "nan"
                                    : lastLoss > 0       ? "inf"
                                                         : "-inf") +
                        " at step " + std::to_string(step) + " (epoch " +
                        std::to_string(result.epoch + 1) +
                        "); stopping without saving" +
                        savedNoteAfterLoss(step, lastLoss));
    }
    if (std::optional<Divergence> divergence =
            watch.afterStep(step, result.seconds, lastLoss))
      throw diverged(*divergence);
    if (average)
      average->update(runner.params());
    if (std::optional<std::string> warning = unigram.afterStep(step, lastLoss)) {
      progress.finish();
      err << "warning: " << *warning << "\n";
    }
    tokens += result.targetTokens;
    double tokensPerSecond =
        result.seconds > 0 ? double(result.targetTokens) / result.seconds : 0.0;
    double lr = learningRate(optimizer.lr, step);
    curve.push_back({step, lastLoss, lr, tokensPerSecond});
    if (!options.quiet) {
      progress.setEpoch(result.epoch + 1);
      progress.update(step, lastLoss, lr, tokensPerSecond);
    }
    // Validation first: a save of this step records its score, so a run
    // resumed from it continues the best as this one does.
    if (validator && (step % options.validEvery == 0 || step == lastStep)) {
      progress.finish(); // the validation lines start on their own line
      // Rank 0 decides for every rank: another's scores may differ in the
      // last bit (other --threads), or its --best-by may differ.
      bool stopEarly =
          paused(validatingSeconds, [&] { return validate(step); });
      if (ranks.parallel())
        stopEarly = ranks.fromRankZero(stopEarly ? 1 : 0) != 0;
      if (stopEarly) {
        lastStep = step;
        break;
      }
      progress.setValidationBleu(lastValidBleu);
    }
    if (options.every && step % options.every == 0 && step != lastStep)
      paused(savingSeconds, [&] { saveDuringTheRun(step); });
    // --stop-time or a signal: end here as if this were the last step.
    if (std::optional<std::string> why = stopReason(); why && step < lastStep) {
      interrupted = true;
      progress.finish();
      err << "stopping at step " << step << ": " << *why << "\n";
      // The closed pipe may be stderr's alone: stdout (a file) says it too.
      if (StopRequest::caughtSignal() == SIGPIPE)
        out << "stopping at step " << step << ": " << *why << "\n";
      if (validator && step % options.validEvery != 0) {
        // The steps are saved before the final validation (BLEU decodes a
        // whole file), then again with its score: a scheduler's grace
        // period, or a second signal, ended the run during the validation
        // and lost every step since the last save.
        if (options.savePath)
          paused(savingSeconds, [&] { saveDuringTheRun(step); });
        // Saved: this one runs to its end (a second signal ends the
        // process, the steps kept).
        validator->setInterrupt({});
        paused(validatingSeconds, [&] { return validate(step); });
      }
      lastStep = step;
      break;
    }
  }
  if (firstStep <= lastStep)
    if (std::optional<Divergence> divergence = watch.check(lastStep, lastLoss))
      throw diverged(*divergence);
  if (!options.quiet)
    progress.finish();
  double elapsed = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  int64_t finalStep = std::max(lastStep, position.step);
  if (firstStep <= lastStep) {
    // The rate over the steps; saves and validations are said apart.
    savingSeconds += std::min(bestSavingSeconds, validatingSeconds);
    validatingSeconds -= std::min(bestSavingSeconds, validatingSeconds);
    const double stepSeconds =
        std::max(0.0, elapsed - savingSeconds - validatingSeconds);
    std::string apart;
    if (savingSeconds > 0)
      apart = "saving " + formatSeconds(savingSeconds);
    if (validatingSeconds > 0)
      apart += (apart.empty() ? "validating " : " and validating ") +
               formatSeconds(validatingSeconds);
    if (!apart.empty())
      apart = " over the steps; " + apart;
    char line[256];
    std::snprintf(
        line, sizeof(line),
        "trained steps %lld..%lld in %s (%.0f %s/s%s); final loss %.4f\n",
        static_cast<long long>(firstStep), static_cast<long long>(lastStep),
        formatSeconds(elapsed).c_str(),
        stepSeconds > 0 ? double(tokens) / stepSeconds : 0.0, data.unit.c_str(),
        apart.c_str(), lastLoss);
    out << line;
    if (ranks.parallel())
      err << update.trafficSummary() << "\n";
  }
  // A resume that trained nothing writes no checkpoint of its own: its
  // options (seed, batch, data, threads) were recorded as the checkpoint's
  // although no step ran with them, and the next resume trained on them
  // without a note. The file stays as it was, or is copied as it is.
  const bool trainedNothing =
      options.resumePath && firstStep > lastStep && !ranPending;
  const bool leftAsItWas = trainedNothing && options.savePath &&
                           sameFile(*options.resumePath, *options.savePath);
  // Such a checkpoint keeps its record of the curve (the rows it saw): a
  // curve that does not hold them (one that starts again, the resumed
  // one's being elsewhere) is not written, or the next --resume found the
  // file another run's and refused it (exit 2).
  const bool curveOfTheCheckpoint =
      !trainedNothing || !position.curveThrough ||
      lossCurveFingerprint(curve) == position.curveHash;
  // The copies beside a checkpoint left as it was are written again when
  // one is missing: a run killed between the checkpoint's rename and the
  // copies' left none, and nothing wrote them again.
  auto copiesMissing = [&] {
    std::error_code error;
    for (const auto &copy : checkpointCopies())
      if (!std::filesystem::exists(
              checkpointSibling(*options.savePath, copy.first), error))
        return true;
    return false;
  };
  writeOrStop(finalStep, [&] {
    curveThenCheckpoint(
        [&] {
          if (leftAsItWas && copiesMissing()) {
            saveWithCopies([] {});
          } else if (options.savePath && trainedNothing && !leftAsItWas) {
            saveWithCopies([&] {
              copyCheckpointFile(*options.resumePath, *options.savePath);
            });
          } else if (options.savePath && !trainedNothing) {
            save(finalStep);
          }
        },
        curveOfTheCheckpoint);
  });
  if (leftAsItWas) {
    out << *options.savePath << " is left as it was (step " << finalStep
        << ")\n";
  } else if (options.savePath && trainedNothing) {
    out << "copied " << *options.resumePath << " (step " << finalStep << ") to "
        << *options.savePath << " and "
        << checkpointSibling(*options.savePath, kTokenizerSuffix) << "\n";
  } else if (options.savePath) {
    out << "saved " << *options.savePath << " (step " << finalStep
        << ") and "
        << checkpointSibling(*options.savePath, kTokenizerSuffix);
    // The SentencePiece model, which the tokenizer copy names.
    if (tokenizer.subwords)
      out << ", " << checkpointSibling(*options.savePath, kSentencePieceSuffix);
    if (data.labels)
      out << ", " << checkpointSibling(*options.savePath, kLabelsSuffix);
    out << "\n";
  } else {
    err << "note: no --save given; the trained parameters are discarded\n";
  }
  if (options.verbose && runner.device()) {
    err << "parameter arena (" << formatBytes(model.paramArenaBytes) << ") on "
        << runner.device()->describe() << ": copied in "
        << runner.params().copiesToDevice() << "x, back "
        << runner.params().copiesToHost() << "x\n";
    if (average)
      err << "weight average (--ema, " << formatBytes(average->bytes())
          << "): updated on the device " << average->deviceUpdates()
          << "x, copied in " << average->copiesToDevice() << "x, back "
          << average->copiesToHost() << "x\n";
    err << runner.graphStats().describe() << "\n";
  }
  if (bestPath && validator->best().step > 0) {
    if (bestKept)
      out << "best: " << *bestPath << " (" << validator->best().describe()
          << ")\n";
    else
      out << "best: validation step " << validator->best().step
          << ", not kept as a checkpoint (see the note at the start; no "
             "validation of this run beat it)\n";
  }
  if (logPath && curveOfTheCheckpoint)
    out << "loss curve: " << *logPath << ", " << svgPathFor(*logPath) << "\n";
  else if (logPath)
    err << "note: the loss curve is not written to '" << *logPath
        << "': nothing was trained, and the rows of the checkpoint's curve "
           "are not there\n";
  // Last, after the files it names.
  if (interrupted && options.savePath && !leftAsItWas) {
    const std::string save = shellWord(*options.savePath);
    if (options.resumePath && sameFile(*options.resumePath, *options.savePath))
      out << "to go on: the same command (it resumes " << save << ")\n";
    else if (options.resumePath)
      out << "to go on: the same command with --resume " << save
          << " in place of --resume " << shellWord(*options.resumePath) << "\n";
    else if (options.initFromPath)
      out << "to go on: the same command with --resume " << save
          << " in place of --init-from " << shellWord(*options.initFromPath)
          << "\n";
    else
      out << "to go on: the same command with --resume " << save << "\n";
  }
  // A closed output pipe stopped the run early: what was printed is
  // incomplete (exit 1, as the docs say). With stderr's pipe alone closed,
  // every write to stdout succeeded and the run ended 0, as if all steps
  // had run.
  return StopRequest::caughtSignal() == SIGPIPE ? kExitFailure : kExitOk;
}

} // namespace

int trainCommand(const ModelInfo &model, const txc_entry_fn *entryTable,
                 const TrainOptions &options, std::ostream &out,
                 std::ostream &err, bool interactive) {
  Communicator &ranks = Communicator::world();
  ranks.requireMpiIfLaunched();
  if (!ranks.parallel())
    return trainOnThisRank(model, entryTable, options, out, err, interactive,
                           ranks);
  // Rank 0 prints and writes files; the others train silently. A failure
  // on any rank ends them all (the last checkpoint stays as it was saved).
  std::ostream silent(nullptr);
  TrainOptions rankOptions = options;
  if (ranks.rank() != 0) {
    rankOptions.savePath.reset();
    rankOptions.logPath.reset();
    rankOptions.keepBest = false; // it names a file beside --save
    rankOptions.quiet = true;
  }
  try {
    // Rank 0 writes every file: outputs given to another rank alone were
    // dropped without a word (and rank 0 said "no --save given"). Which
    // outputs, not their paths (each rank may have its own --wdir).
    const std::string outputs =
        std::string("--save ") + (options.savePath ? "FILE" : "(none)") +
        ", --log " + (options.logPath ? "FILE" : "(none)") + ", --keep-best " +
        (options.keepBest ? "on" : "off");
    requireSameAsRankZero(ranks, fnv1a64(outputs),
                          "the choice of outputs (" + outputs +
                              "; rank 0 writes them, so every rank is given "
                              "the same)");
    return trainOnThisRank(model, entryTable, rankOptions,
                           ranks.rank() == 0 ? out : silent,
                           ranks.rank() == 0 ? err : silent,
                           interactive && ranks.rank() == 0, ranks);
  } catch (const DriverError &error) {
    // One write: mpirun's own abort message must not land inside the line.
    err << errorLines(error.what(),
                      "rank " + std::to_string(ranks.rank()) + ": ");
    err.flush();
    ranks.abort(error.exitCode());
  } catch (const std::exception &error) {
    err << errorLines(std::string("internal error: ") + error.what(),
                      "rank " + std::to_string(ranks.rank()) + ": ");
    err.flush();
    ranks.abort(kExitFailure);
  }
}

} // namespace txrt::driver
