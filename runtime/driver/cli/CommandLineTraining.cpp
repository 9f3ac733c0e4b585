//===- CommandLineTraining.cpp - train, eval, translate, bench options ----===//
//
// The grammar and usage texts of the commands that work on text data and
// checkpoints. Like CommandLine.cpp: pure parsing, UsageError on anything
// malformed; files are checked when the command runs.
//
//===----------------------------------------------------------------------===//
#include "cli/CommandLineParsing.h"
#include "loop/Checkpoint.h"
#include "loop/StopRequest.h"

#include <cstdlib>
#include <cstring>

namespace txrt::driver {

namespace {

constexpr const char *kTrainUsage =
    R"(usage: PROGRAM train (--data FILE.tsv | --text FILE.txt) [options]

Trains the model with the train_step entry txc compiled (forward, backward
and the optimizer update in one call), on the data of its kind:
  seq2seq          --data FILE.tsv, one 'source<TAB>target' pair per line
  language model   --text FILE.txt, plain text, a blank line between
                   documents; [EOS] ends each document, the token stream is
                   cut into blocks of --block positions (default: the bound
                   of the length dim), targets shifted by one
  classifier       --data FILE.tsv, one 'label<TAB>text' line each; the
                   label set is stored inside the checkpoint, with a copy
                   CKPT.labels.json beside it
Builds word-level vocabularies from the data (stored inside the checkpoint,
with a copy CKPT.tokenizer.json beside it), batches the examples and prints
progress (a bar on a terminal, lines otherwise). Stops (exit 1) without
saving when the loss or an update turns non-finite.

length:
  --steps N         train until update N (counting a resumed run's updates)
  --epochs N        train for N passes over the data (default 1)
  --stop-time D     stop after D of training (90s, 40m, 1.5h): the current
                    update finishes, then the final validation and the
                    save run as after the last step. The first SIGINT or
                    SIGTERM stops the same way; a second ends at once
data:
  --data FILE.tsv   the training pairs or labeled texts
  --text FILE.txt   the training text (language models)
  --block N         positions per block of --text (default: the T bound)
  --batch N         sentences per batch (default: the bound of dim B)
  --max-tokens N    batches by size instead: at most N padded tokens on each
                    side (rows x longest row), at most the bound of B rows,
                    length-bucketed; excludes --batch
  --seed S          the seed of the batch order and of dropout (default 0)
  --update-freq K   one update per K batches of --batch, their gradients
                    accumulated: the update of one batch K times larger
                    (default 1, or the --resume checkpoint's); under mpirun
                    --batch is the global batch, split over the ranks
                    (docs/distributed.md)
  --min-freq K      words seen fewer than K times become [UNK] (default 1)
tokenizer:
  --tokenizer word  word-level vocabularies built from the data (default)
  --tokenizer spm   train ONE SentencePiece model on the source and target
                    sides together (shared subwords, one vocabulary for
                    encoder and decoder; it must fit both the spec's source
                    and target vocabulary sizes), saved inside the
                    checkpoint and as CKPT.spm.model beside it; a language
                    model's is trained on its --text documents as written,
                    a classifier's on its --data texts as written
  --tokenizer F.model  use an existing SentencePiece model
  --tokenizer F.json   use existing word vocabularies: a txc tokenizer file
                    (CKPT.tokenizer.json) or one file of a Hugging Face
                    pair (CKPT.source.tokenizer.json)
  --vocab-size N    pieces of the spm model, specials included (default:
                    the smaller of the spec's source / target vocab sizes;
                    config vocab for a language model or classifier)
  --spm-type T      unigram (default) or bpe
validation:
  --valid FILE.tsv  pairs to validate on (seq2seq): loss and token accuracy
                    (teacher forced) and BLEU of greedy translations on the
                    whole file, printed as one line; BLEU as eval scores it
                    (sacreBLEU 13a on detokenized text with a subword
                    tokenizer, corpus BLEU-4 with effective order on the
                    tokenizer's words otherwise). A language model's
                    --valid is plain text (FILE.txt): loss, perplexity and
                    next-token accuracy as eval --text scores them. A
                    classifier's is 'label<TAB>text' lines (FILE.tsv):
                    loss, accuracy and macro-F1 as eval --data scores them
                    (a label the training data lacks is an error)
  --valid-every N   validate every N steps (and after the last); required
                    with --valid
  --keep-best       keep the checkpoint with the best validation score as
                    CKPT.best.safetensors (needs --save and --valid)
  --best-by M       bleu, loss or accuracy: what --keep-best and
                    --patience compare (default: bleu for seq2seq, loss for
                    language models and classifiers; bleu applies to
                    seq2seq only)
  --patience P      stop after P validations in a row without improvement
  --ema DECAY       keep an exponential moving average of the weights
                    (ema = DECAY * ema + (1 - DECAY) * weights after every
                    update, e.g. 0.999): validation and --keep-best use it,
                    the checkpoint holds it (translate and eval use it)
checkpoints:
  --save FILE       write the checkpoint (safetensors: parameters, Adam
                    moments, step, tokenizer) at the end and every --every
                    steps; written to a temporary file and renamed, never
                    half-written
  --every N         also save every N steps (default: only at the end)
  --keep-last K     also keep each save (every N steps and the last) as
                    CKPT.step-STEP.safetensors, the latest K of them (a
                    hard link; older ones are removed): export --average
                    averages them
  --overwrite       let --save replace a training checkpoint that this run
                    does not --resume, and --log a file (another run's
                    curve) a new run would replace (without it that is an
                    error: the checkpoint's steps would be lost)
  --resume FILE     continue a run from its checkpoint (and the tokenizer,
                    --batch or --max-tokens, --update-freq, --block and the
                    best validation in it); the result is bit-identical to
                    an uninterrupted run on as many --threads (another
                    count, or another spec, flag or config, is noted)
  --init SEED       initialize the parameters with SEED (default 0)
  --init-from W     start from the parameters in W.safetensors (from export,
                    or PyTorch's state_dict by the same names and shapes;
                    of a train --ema checkpoint the average, as eval
                    takes it); Adam moments zero, step 0
  --no-ema          with --init-from: the raw weights, not the average
  --log FILE.csv    the loss curve (step, loss, lr, tokens/s) as CSV, and as
                    an SVG plot beside it (default with --save: CKPT.loss.csv)
options:
  --threads N       kernel threads (default: TXRT_NUM_THREADS or all cores)
  --quiet           no progress output
  --verbose         also print what the encoded training data takes in
                    memory (seq2seq: pairs, token ids, bytes) and, on a
                    GPU, how often the parameter arena crossed to the host
  -h, --help        show this text
)";

constexpr const char *kEvalUsage =
    R"(usage: PROGRAM eval --load FILE (--data FILE.tsv | --text FILE.txt) [options]

Evaluates a checkpoint on the data of the model's kind:
  seq2seq          --data: the teacher-forced loss (mean cross-entropy over
                   the non-pad target tokens, no label smoothing), the token
                   accuracy (argmax == target) and the corpus BLEU-4 of
                   greedy translations against the targets
  language model   --text: the mean next-token loss, perplexity and
                   next-token accuracy over blocks of the checkpoint's
                   training --block (else the T bound)
  classifier       --data: accuracy, macro-F1 and the confusion table

options:
  --load FILE         the checkpoint (parameters by name)
  --data FILE.tsv     'source<TAB>target' pairs or 'label<TAB>text' lines
  --text FILE.txt     plain text (language models)
  --block N           positions per block of --text (default: the --block
                      the checkpoint was trained with, else the T bound)
  --tokenizer FILE    the vocabularies (default: the ones inside the
                      checkpoint; when given, they must be the same)
  --labels FILE       a classifier's label set, CKPT.labels.json (default:
                      the one inside the checkpoint; when given, it must be
                      the same); for an export, which holds none
  --batch N           sentences per batch (default: the bound of dim B)
  --max-len N         at most N generated tokens per sentence for BLEU
                      (default: the bound of the target dim)
  --no-bleu           skip the translations (loss and accuracy only)
  --truncate          a text longer than the bounds is cut (a note counts
                      them); without it such a text is an error.
                      Classifiers: the first T positions ([SOS] included).
                      Seq2seq: a source keeps its first S words (or
                      pieces); a reference's first T are scored by the loss
                      and accuracy, and BLEU takes it whole
  --no-ema            the raw weights, not the average a train --ema
                      checkpoint holds (default: the average)
  --threads N         kernel threads
  -h, --help          show this text
)";

constexpr const char *kTranslateUsage =
    R"(usage: PROGRAM translate --load FILE [options] [--] [SENTENCE ...]

Translates each SENTENCE (after '--', every argument is one, even if it
starts with '-'), or each line of stdin when none is given, and
prints one line per input. Text is read as the training data was: with a
word tokenizer lowercased and split at blanks and punctuation, words the
source vocabulary lacks becoming [UNK]; with SentencePiece as written
(cased) and cut into the model's pieces.

options:
  --load FILE         the checkpoint (parameters by name)
  --tokenizer FILE    the vocabularies (default: the ones inside the
                      checkpoint; when given, they must be the same)
  --max-len N         at most N generated tokens ([EOS] included; default and
                      limit: the bound of the target dim)
  --beam N            beam search with N hypotheses, at most 1024 and the
                      batch bound (default 1: greedy)
  --alpha A           beam length penalty ((5 + len) / 6)^A, len counting
                      [EOS], A in [0, 10] (default 0.6)
  --no-kv-cache       re-run the whole prefix at every step instead of the
                      compiled incremental decode_step (same output, slower;
                      also spelled --no-cache, as generate has it)
  --no-ema            the raw weights, not the average a train --ema
                      checkpoint holds (default: the average)
  --truncate          a sentence longer than the source bound keeps its
                      first words (or pieces) (a note counts the cut
                      sentences); without it such a sentence is an error
  --batch N           rows decoded together: sentences (greedy) or
                      sentences x hypotheses (--beam; at least one
                      sentence) (default: the bound of B)
  --threads N         kernel threads
  -h, --help          show this text
)";

constexpr const char *kBenchUsage =
    R"(usage: PROGRAM bench [options]

Times the train step and greedy decoding (the prefix re-run every step) on
synthetic batches of random token ids, after one warm-up call each, and
prints ms/step, tokens/s, ms/token and the peak resident memory.

options:
  --steps N           timed train steps (default 10)
  --batch N           sentences per batch (default: the bound of dim B)
  --src-len N         source length (default: the bound of the source dim)
  --tgt-len N         target length (default: the bound of the target dim)
  --load FILE         parameters from a checkpoint (default: --init 0)
  --seed S            the seed of the synthetic ids (default 0)
  --sources F.npy     the source ids instead (int32 [B, S], rows
                      right-padded with the pad id): sets the batch and
                      the source length
  --decode-only       time greedy decoding only: no train step, and with a
                      compiled KV cache, no prefix re-run
  --decode-out F.npy  write the greedy tokens (int32 [B, target length],
                      the first timed way) to F
  --beam N            also time beam search with N hypotheses, one sentence
                      at a time and batched as translate runs it (with the
                      KV cache when compiled)
  --beam-out F.npy    write the beam search's tokens to F (needs --beam)
  --threads N         kernel threads
  --profile           time every runtime call of the timed train steps and
                      print where the time goes by spec line and op kind
  --profile-trace F   --profile, and write a Chrome trace-event JSON to F
  --profile-rows N    rows of the by-location table (default 15, 0: all; implies --profile)
  -h, --help          show this text
)";


} // namespace

void parseTrain(ArgCursor &cursor, CommandLine &line) {
  TrainOptions &train = line.train;
  bool haveData = false, haveText = false;
  while (!cursor.done()) {
    std::string arg = cursor.next();
    if (help(arg, line, "train"))
      return;
    if (arg == "--data") {
      train.dataPath = pathOption(cursor, arg);
      haveData = true;
    } else if (arg == "--text") {
      train.textPath = pathOption(cursor, arg);
      haveText = true;
    } else if (arg == "--block") {
      train.block = integerOption<int64_t>(cursor, arg, 1, kMaxCount);
    } else if (arg == "--steps") {
      train.steps = integerOption<int64_t>(cursor, arg, 1, kMaxCount);
    } else if (arg == "--epochs") {
      train.epochs = integerOption<int64_t>(cursor, arg, 1, kMaxCount);
    } else if (arg == "--stop-time") {
      train.stopTimeText = cursor.value(arg);
      train.stopSeconds = parseDuration(train.stopTimeText);
      if (!train.stopSeconds)
        cursor.fail("--stop-time expects a duration such as 90s, 40m or "
                    "1.5h (digits and a unit, no exponent; more than 0, at "
                    "most 1000000000s), got '" +
                    train.stopTimeText + "'");
    } else if (arg == "--batch") {
      train.batch = integerOption<int64_t>(cursor, arg, 1, kMaxCount);
    } else if (arg == "--max-tokens") {
      train.maxTokens = integerOption<int64_t>(cursor, arg, 1, kMaxCount);
    } else if (arg == "--seed") {
      train.seed = integerOption<uint64_t>(cursor, arg, 0, ~uint64_t(0));
    } else if (arg == "--min-freq") {
      train.minFreq = integerOption<int64_t>(cursor, arg, 1, kMaxCount);
    } else if (arg == "--save") {
      train.savePath = pathOption(cursor, arg);
    } else if (arg == "--update-freq") {
      train.updateFreq = integerOption<int64_t>(cursor, arg, 1, kMaxUpdateFreq);
    } else if (arg == "--every") {
      train.every = integerOption<int64_t>(cursor, arg, 1, kMaxCount);
    } else if (arg == "--overwrite") {
      cursor.noValue(arg);
      train.overwrite = true;
    } else if (arg == "--resume") {
      train.resumePath = pathOption(cursor, arg);
    } else if (arg == "--init") {
      train.initSeed = integerOption<uint64_t>(cursor, arg, 0, ~uint64_t(0));
    } else if (arg == "--init-from") {
      train.initFromPath = pathOption(cursor, arg);
    } else if (arg == "--no-ema") {
      cursor.noValue(arg);
      train.noEma = true;
    } else if (arg == "--log") {
      train.logPath = pathOption(cursor, arg);
    } else if (arg == "--threads") {
      train.threads = threadsOption(cursor, arg);
    } else if (arg == "--quiet") {
      cursor.noValue(arg);
      train.quiet = true;
    } else if (arg == "--verbose") {
      cursor.noValue(arg);
      train.verbose = true;
    } else if (arg == "--tokenizer") {
      train.tokenizer = pathOption(cursor, arg);
      train.tokenizerGiven = true;
      auto endsWith = [&](const char *suffix) {
        const size_t n = std::strlen(suffix);
        return train.tokenizer.size() > n &&
               train.tokenizer.compare(train.tokenizer.size() - n, n, suffix) ==
                   0;
      };
      if (train.tokenizer != "word" && train.tokenizer != "spm" &&
          !endsWith(".model") && !endsWith(".json"))
        cursor.fail("--tokenizer expects word, spm, a SentencePiece "
                    "FILE.model or a tokenizer FILE.json, got '" +
                    train.tokenizer + "'");
    } else if (arg == "--vocab-size") {
      train.vocabSize = integerOption<int64_t>(cursor, arg, 5, 1 << 24);
    } else if (arg == "--spm-type") {
      std::string type = cursor.value(arg);
      if (type != "unigram" && type != "bpe")
        cursor.fail("--spm-type expects unigram or bpe, got '" + type + "'");
      train.spmType = type;
    } else if (arg == "--valid") {
      train.validPath = pathOption(cursor, arg);
    } else if (arg == "--valid-every") {
      train.validEvery = integerOption<int64_t>(cursor, arg, 1, kMaxCount);
    } else if (arg == "--keep-last") {
      train.keepLast = integerOption<int64_t>(cursor, arg, 1, kMaxCount);
    } else if (arg == "--keep-best") {
      cursor.noValue(arg);
      train.keepBest = true;
    } else if (arg == "--best-by") {
      std::string metric = cursor.value(arg);
      if (metric != "bleu" && metric != "loss" && metric != "accuracy")
        cursor.fail("--best-by expects bleu, loss or accuracy, got '" +
                    metric + "'");
      train.bestBy = metric;
    } else if (arg == "--patience") {
      train.patience = integerOption<int64_t>(cursor, arg, 1, kMaxCount);
    } else if (arg == "--ema") {
      std::string text = cursor.value(arg);
      std::optional<double> decay = parseDecimal(text);
      if (!decay || !(*decay > 0 && *decay < 1))
        cursor.fail("--ema expects a decay in (0, 1), e.g. 0.999, got '" +
                    text + "'");
      // The average updates in f32 (keep DECAY, take 1 - DECAY, both f32):
      // a decay that rounds to 1 would never move it (as the optimizer's
      // betas, refused the same way).
      if (float(*decay) >= 1.0f)
        cursor.fail("--ema " + text +
                    " is 1 in f32, where the average is kept: it would never "
                    "move; the largest decay below 1 is 0.99999994");
      // And one whose 1 - DECAY is 1 in f32 (below about 3e-8, 0 in f32
      // included) would be the weights themselves (--ema 0 is refused).
      if (1.0f - float(*decay) == 1.0f)
        cursor.fail("--ema " + text +
                    " leaves 1 - DECAY at 1 in f32, where the average is "
                    "kept: it would be the weights themselves; a decay must "
                    "be in (0, 1), e.g. 0.999 (from about 2.98e-8, whose f32 "
                    "is past 2^-25)");
      train.ema = *decay;
    } else {
      unexpected(cursor, arg);
    }
  }
  if (!haveData && !haveText)
    cursor.fail("train needs --data FILE.tsv (seq2seq, classifier) or --text "
                "FILE.txt (language model)");
  if (haveData && haveText)
    cursor.fail("--data and --text exclude each other");
  if (train.block && !haveText)
    cursor.fail("--block applies to --text (language models)");
  if (train.steps && train.epochs)
    cursor.fail("--steps and --epochs exclude each other");
  if (train.batch && train.maxTokens)
    cursor.fail("--batch and --max-tokens exclude each other");
  if (train.resumePath && train.initSeed)
    cursor.fail("--resume and --init exclude each other");
  if (train.initFromPath && (train.resumePath || train.initSeed))
    cursor.fail(std::string("--init-from and ") +
                (train.resumePath ? "--resume" : "--init") +
                " exclude each other");
  if (train.noEma && !train.initFromPath)
    cursor.fail("--no-ema applies to --init-from (the raw weights of a "
                "train --ema checkpoint)");
  if (train.every && !train.savePath)
    cursor.fail("--every needs --save FILE");
  if (train.overwrite && !train.savePath && !train.logPath)
    cursor.fail("--overwrite lets --save replace a checkpoint (or --log a "
                "curve); give --save FILE (without either nothing is "
                "written)");
  if ((train.vocabSize || train.spmType) && train.tokenizer != "spm")
    cursor.fail(std::string(train.vocabSize ? "--vocab-size" : "--spm-type") +
                " applies to --tokenizer spm");
  // SentencePiece has no word counts to cut: --min-freq would be ignored.
  if (train.minFreq && train.tokenizer != "word")
    cursor.fail("--min-freq applies to --tokenizer word (a SentencePiece "
                "model keeps --vocab-size pieces)");
  if (train.validPath && !train.validEvery)
    cursor.fail("--valid needs --valid-every N");
  // A language model (--text) validates on plain text, the others on TSV.
  const std::string validFile =
      train.textPath.empty() ? "--valid FILE.tsv" : "--valid FILE.txt";
  if (!train.validPath && train.validEvery)
    cursor.fail("--valid-every needs " + validFile);
  if ((train.keepBest || train.patience) && !train.validPath)
    cursor.fail(std::string(train.keepBest ? "--keep-best" : "--patience") +
                " needs " + validFile);
  // What --keep-best and --patience compare: nothing without --valid (it
  // was ignored silently).
  if (train.bestBy && !train.validPath)
    cursor.fail("--best-by needs " + validFile +
                " (with --keep-best or --patience)");
  if (train.keepBest && !train.savePath)
    cursor.fail("--keep-best needs --save FILE");
  if (train.keepLast && (!train.savePath || !train.every))
    cursor.fail(std::string("--keep-last needs ") +
                (train.savePath ? "" : "--save FILE and ") +
                "--every N (it keeps the saves of every N steps)");
}

void parseEval(ArgCursor &cursor, CommandLine &line) {
  EvalOptions &eval = line.eval;
  while (!cursor.done()) {
    std::string arg = cursor.next();
    if (help(arg, line, "eval"))
      return;
    if (arg == "--load") {
      eval.loadPath = pathOption(cursor, arg);
    } else if (arg == "--data") {
      eval.dataPath = pathOption(cursor, arg);
    } else if (arg == "--text") {
      eval.textPath = pathOption(cursor, arg);
    } else if (arg == "--tokenizer") {
      eval.tokenizerPath = pathOption(cursor, arg);
    } else if (arg == "--labels") {
      eval.labelsPath = pathOption(cursor, arg);
    } else if (arg == "--batch") {
      eval.batch = integerOption<int64_t>(cursor, arg, 1, kMaxCount);
    } else if (arg == "--max-len") {
      eval.maxLength = integerOption<int64_t>(cursor, arg, 1, kMaxCount);
    } else if (arg == "--block") {
      eval.block = integerOption<int64_t>(cursor, arg, 1, kMaxCount);
    } else if (arg == "--no-ema") {
      cursor.noValue(arg);
      eval.noEma = true;
    } else if (arg == "--no-bleu") {
      cursor.noValue(arg);
      eval.noBleu = true;
    } else if (arg == "--truncate") {
      cursor.noValue(arg);
      eval.truncate = true;
    } else if (arg == "--threads") {
      eval.threads = threadsOption(cursor, arg);
    } else {
      unexpected(cursor, arg);
    }
  }
  if (eval.loadPath.empty())
    cursor.fail("eval needs --load CHECKPOINT");
  if (eval.dataPath.empty() && eval.textPath.empty())
    cursor.fail("eval needs --data FILE.tsv (seq2seq, classifier) or --text "
                "FILE.txt (language model)");
  if (!eval.dataPath.empty() && !eval.textPath.empty())
    cursor.fail("--data and --text exclude each other");
  if (eval.block && eval.textPath.empty())
    cursor.fail("--block applies to --text (language models)");
}

void parseTranslate(ArgCursor &cursor, CommandLine &line) {
  TranslateOptions &translate = line.translate;
  bool alphaGiven = false, beamGiven = false;
  while (!cursor.done()) {
    std::string arg = cursor.next();
    if (help(arg, line, "translate"))
      return;
    if (arg == "--load") {
      translate.loadPath = pathOption(cursor, arg);
    } else if (arg == "--tokenizer") {
      translate.tokenizerPath = pathOption(cursor, arg);
    } else if (arg == "--max-len") {
      translate.maxLength = integerOption<int64_t>(cursor, arg, 1, kMaxCount);
    } else if (arg == "--beam") {
      beamGiven = true;
      translate.beam = integerOption<int32_t>(cursor, arg, 1, 1024);
    } else if (arg == "--no-kv-cache" || arg == "--no-cache") {
      // generate's spelling too: the same switch. --no-kv-cache=0 turned
      // the cache off.
      cursor.noValue(arg);
      translate.kvCache = false;
    } else if (arg == "--no-ema") {
      cursor.noValue(arg);
      translate.noEma = true;
    } else if (arg == "--truncate") {
      cursor.noValue(arg);
      translate.truncate = true;
    } else if (arg == "--alpha") {
      alphaGiven = true;
      std::string text = cursor.value(arg);
      std::optional<double> alpha = parseDecimal(text);
      if (!alpha || !(*alpha >= 0 && *alpha <= 10))
        cursor.fail("--alpha expects a number in [0, 10], got '" + text + "'");
      translate.alpha = *alpha;
    } else if (arg == "--batch") {
      translate.batch = integerOption<int64_t>(cursor, arg, 1, kMaxCount);
    } else if (arg == "--threads") {
      translate.threads = threadsOption(cursor, arg);
    } else if (arg == "--") { // the end of the options: sentences follow
      while (!cursor.done())
        translate.sentences.push_back(cursor.nextRaw());
    } else if (arg.size() > 1 && arg[0] == '-') {
      unexpected(cursor, arg, "sentence");
    } else {
      translate.sentences.push_back(arg);
    }
  }
  if (translate.loadPath.empty())
    cursor.fail("translate needs --load CHECKPOINT");
  // Greedy decoding has no length penalty: --alpha changed nothing.
  // --beam 1 is greedy decoding too (it took --alpha silently).
  if (alphaGiven && translate.beam == 1)
    cursor.fail(beamGiven
                    ? "--alpha is beam search's length penalty; --beam 1 is "
                      "greedy decoding, which has none (give --beam 2 or more)"
                    : "--alpha is beam search's length penalty; give --beam N "
                      "too (greedy decoding has none)");
}

void parseBench(ArgCursor &cursor, CommandLine &line) {
  BenchOptions &bench = line.bench;
  while (!cursor.done()) {
    std::string arg = cursor.next();
    if (help(arg, line, "bench"))
      return;
    if (arg == "--steps") {
      bench.steps = integerOption<int64_t>(cursor, arg, 1, 1000000);
    } else if (arg == "--batch") {
      bench.batch = integerOption<int64_t>(cursor, arg, 1, kMaxCount);
    } else if (arg == "--src-len") {
      bench.sourceLength = integerOption<int64_t>(cursor, arg, 1, kMaxCount);
    } else if (arg == "--tgt-len") {
      bench.targetLength = integerOption<int64_t>(cursor, arg, 1, kMaxCount);
    } else if (arg == "--load") {
      bench.loadPath = pathOption(cursor, arg);
    } else if (arg == "--seed") {
      bench.seed = integerOption<uint64_t>(cursor, arg, 0, ~uint64_t(0));
    } else if (arg == "--sources") {
      bench.sourcesPath = pathOption(cursor, arg);
    } else if (arg == "--decode-out") {
      bench.decodeOutPath = pathOption(cursor, arg);
    } else if (arg == "--decode-only") {
      cursor.noValue(arg);
      bench.decodeOnly = true;
    } else if (arg == "--beam") {
      bench.beam = integerOption<int32_t>(cursor, arg, 1, 1024);
    } else if (arg == "--beam-out") {
      bench.beamOutPath = pathOption(cursor, arg);
    } else if (arg == "--threads") {
      bench.threads = threadsOption(cursor, arg);
    } else if (profileOption(cursor, arg, bench.profile)) {
      continue;
    } else {
      unexpected(cursor, arg);
    }
  }
  if (bench.sourcesPath && (bench.batch || bench.sourceLength))
    cursor.fail("--sources sets the batch and the source length; drop "
                "--batch and --src-len");
  if (bench.beamOutPath && bench.beam == 0)
    cursor.fail("--beam-out needs --beam N");
  if (bench.decodeOnly && bench.profile.enabled)
    cursor.fail("--profile times the train step, which --decode-only skips");
}

const char *trainingUsage(std::string_view command) {
  if (command == "train")
    return kTrainUsage;
  if (command == "eval")
    return kEvalUsage;
  if (command == "translate")
    return kTranslateUsage;
  if (command == "bench")
    return kBenchUsage;
  return nullptr;
}

} // namespace txrt::driver
