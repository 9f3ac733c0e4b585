//===- Driver.cpp - the entry point of a compiled model executable --------===//
//
// Dispatch and the one place where exceptions become exit codes.
//
//===----------------------------------------------------------------------===//
#include "commands/Driver.h"
#include "cli/CommandLine.h"
#include "commands/BenchCommand.h"
#include "commands/EvalCommand.h"
#include "commands/ExportCommand.h"
#include "commands/GenerateCommand.h"
#include "commands/InfoCommand.h"
#include "commands/PredictCommand.h"
#include "commands/RunCommand.h"
#include "commands/TrainCommand.h"
#include "commands/TrainingData.h"
#include "commands/TranslateCommand.h"
#include "core/Error.h"
#include "core/ModelInfo.h"
#include "core/ModelRunner.h"
#include "data/InputLines.h"
#include "distributed/Communicator.h"
#include "formats/Safetensors.h"
#include "loop/Progress.h"
#include "txrt/txrt.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <new>
#include <sstream>
#include <vector>

#include <fcntl.h>
#include <omp.h>
#include <sys/resource.h>
#include <unistd.h>

namespace txrt::driver {

namespace {

void printErrorLines(std::ostream &err, const std::string &message) {
  err << errorLines(message);
}

/// The kernel threads `line` asks for with --threads, 0 when it does not.
int32_t threadsOption(const CommandLine &line) {
  switch (line.command) {
  case CommandLine::Command::Run:
    return line.run.threads;
  case CommandLine::Command::Train:
    return line.train.threads;
  case CommandLine::Command::Eval:
    return line.eval.threads;
  case CommandLine::Command::Translate:
    return line.translate.threads;
  case CommandLine::Command::Generate:
    return line.generate.threads;
  case CommandLine::Command::Predict:
    return line.predict.threads;
  case CommandLine::Command::Bench:
    return line.bench.threads;
  default:
    return 0;
  }
}

/// More kernel threads than cores (`TXRT_NUM_THREADS=4096` on 2 cores) is
/// accepted, and said: each kernel's team then waits on threads the cores
/// cannot run, and every step crawls. A count out of range is the
/// context's error, not this warning.
void warnAboutOversubscription(const CommandLine &line, std::ostream &err) {
  int32_t threads = threadsOption(line);
  std::string source = "--threads " + std::to_string(threads);
  if (threads == 0) {
    const char *env = std::getenv("TXRT_NUM_THREADS");
    if (!env || !*env)
      return;
    char *end = nullptr;
    long value = std::strtol(env, &end, 10);
    if (end == env || value < 1 || value > 4096)
      return;
    threads = int32_t(value);
    source = std::string("TXRT_NUM_THREADS=") + env;
  }
  const int cores = omp_get_num_procs();
  if (cores < 1 || threads <= cores)
    return;
  err << "warning: " << source << " asks for " << threads
      << " kernel threads on " << cores << (cores == 1 ? " core" : " cores")
      << ": the threads beyond the cores wait on each other and every "
         "kernel runs slower; use "
      << cores << " or fewer\n";
}

/// Takes `--device NAME` / `--device=NAME` and `--allow-tf32` (any command;
/// the device the model's entries run on and how, core/ModelRunner.h) out
/// of `args`. Both are reset first, and again when runDriver returns: a
/// run (a test's in-process driver call too) never inherits another's.
std::vector<std::string> takeDeviceOption(const std::vector<std::string> &args) {
  setRequestedDevice("");
  setAllowTf32(false);
  std::vector<std::string> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--device") {
      if (i + 1 == args.size())
        throw InputError("--device needs a value: cpu, cuda or cuda:N");
      // `--device ""` (an unset variable) as `--device=`.
      if (args[i + 1].empty())
        throw InputError("--device needs a value: cpu, cuda or cuda:N");
      // `--device --threads 1`: a forgotten value, as other options say.
      if (args[i + 1].rfind("--", 0) == 0)
        throw InputError("option '--device' needs a value, got the option '" +
                         args[i + 1] + "' (cpu, cuda or cuda:N)");
      setRequestedDevice(args[++i]);
    } else if (args[i].rfind("--device=", 0) == 0) {
      // `--device=` (an unset variable) used the default, silently.
      if (args[i].size() == 9)
        throw InputError("--device needs a value: cpu, cuda or cuda:N");
      setRequestedDevice(args[i].substr(9));
    } else if (args[i] == "--allow-tf32") {
      setAllowTf32(true);
    } else if (args[i].rfind("--allow-tf32=", 0) == 0) {
      // It said "unknown option '--allow-tf32'".
      throw InputError("option '--allow-tf32' takes no value");
    } else {
      rest.push_back(args[i]);
    }
  }
  return rest;
}

/// The checks of the command's own arguments that need no device: the
/// model's kind, run's entry, and that each checkpoint to read opens as
/// one (each command checks its contents again).
void checkBeforeDevice(const ModelInfo &model, const CommandLine &line) {
  auto opens = [](const std::optional<std::string> &path) {
    if (path && !path->empty())
      SafetensorsReader file(*path);
  };
  switch (line.command) {
  case CommandLine::Command::Translate:
    requireModelKind(model, ModelKind::Seq2Seq, "translate");
    opens(line.translate.loadPath);
    break;
  case CommandLine::Command::Generate:
    requireModelKind(model, ModelKind::LanguageModel, "generate");
    opens(line.generate.loadPath);
    break;
  case CommandLine::Command::Predict:
    requireModelKind(model, ModelKind::Classifier, "predict");
    opens(line.predict.loadPath);
    break;
  case CommandLine::Command::Eval:
    opens(line.eval.loadPath);
    break;
  case CommandLine::Command::Train:
    opens(line.train.resumePath);
    opens(line.train.initFromPath);
    break;
  case CommandLine::Command::Bench:
    opens(line.bench.loadPath);
    break;
  case CommandLine::Command::Run:
    entryToRun(model, line.run.entry);
    opens(line.run.loadPath);
    break;
  default:
    break;
  }
}

/// The smallest thread stack the kernels run on (the attention and norm
/// kernels keep row buffers on the stack): OMP_STACKSIZE=16K, or `ulimit
/// -s 16`, segfaulted in the first kernel.
constexpr uint64_t kMinStackBytes = 256 * 1024;

/// Why the stacks the kernels would run on are too small, or "".
std::string stackProblem() {
  if (const char *size = std::getenv("OMP_STACKSIZE"); size && *size) {
    // libgomp's syntax: a number, then B, K (the default), M or G.
    char *end = nullptr;
    errno = 0;
    unsigned long long value = std::strtoull(size, &end, 10);
    while (end && *end == ' ')
      ++end;
    const char unit = end && *end ? char(std::toupper(*end)) : 'K';
    const uint64_t scale = unit == 'B'   ? 1
                           : unit == 'K' ? 1024
                           : unit == 'M' ? 1024 * 1024
                           : unit == 'G' ? 1024ull * 1024 * 1024
                                         : 0;
    if (errno == 0 && end != size && scale &&
        value < kMinStackBytes / scale + (kMinStackBytes % scale != 0))
      return std::string("OMP_STACKSIZE=") + size +
             " is below the 256K stack the kernels' threads need; unset it "
             "or give 256K or more";
  }
  struct rlimit limit;
  if (getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      limit.rlim_cur < kMinStackBytes)
    return "the stack limit (ulimit -s " +
           std::to_string(uint64_t(limit.rlim_cur) / 1024) +
           ") is below the 256K stack the kernels need; raise it (ulimit -s "
           "8192 is the usual default)";
  return "";
}

/// Why an on/off switch of the environment has a value that is neither:
/// TXRT_PACK_WEIGHTS=off (or false) turned packing on, as any value but 0
/// did, without a word.
std::string switchProblem() {
  for (const char *name : {"TXRT_PACK_WEIGHTS", "TXRT_HUGE_PAGES"})
    if (const char *value = std::getenv(name); value && *value &&
                                               std::strcmp(value, "0") != 0 &&
                                               std::strcmp(value, "1") != 0)
      return std::string(name) + "='" + value +
             "' is not 0 (off) or 1 (on, the default)";
  // TXRT_ASSUME_NO_CPU_FEATURES=avx-2 (or AVX2) took nothing away, without
  // a word: each name must be one the CPU check knows.
  if (const char *list = std::getenv("TXRT_ASSUME_NO_CPU_FEATURES");
      list && *list) {
    std::string unknown;
    std::stringstream items(list);
    for (std::string item; std::getline(items, item, ',');)
      if (!item.empty() && txrt_cpu_has_feature(item.c_str()) < 0)
        unknown += (unknown.empty() ? "'" : ", '") + item + "'";
    if (!unknown.empty())
      return std::string("TXRT_ASSUME_NO_CPU_FEATURES='") + list +
             "' names no CPU feature the check knows: " + unknown +
             " (LLVM's lower-case names, comma-separated without spaces: "
             "avx2,fma,avx512f)";
  }
  return "";
}

/// Every TXRT_ variable an executable (its driver, libtxrt and the CUDA
/// runtime) reads; docs/driver.md lists them.
constexpr const char *kEnvironmentNames[] = {
    "TXRT_NUM_THREADS",    "TXRT_DENORMALS",   "TXRT_PACK_WEIGHTS",
    "TXRT_HUGE_PAGES",     "TXRT_BUCKET_MB",   "TXRT_ALLREDUCE_OVERLAP",
    "TXRT_ASSUME_NO_BF16", "TXRT_NCCL",        "TXRT_ASSUME_NO_CPU_FEATURES",
    "TXRT_CUDA_ATTENTION", "TXRT_CUDA_GRAPHS", "TXRT_CUBLASLT"};

/// Levenshtein distance of two upper-cased names.
size_t nameDistance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// Warnings for variables of the environment that look like a misspelled
/// TXRT_ variable (within two edits of one, in any case): nothing reads
/// them, and TXRT_ASSUME_NO_CPU_FEATURE=avx2 (no S) changed nothing
/// without a word.
std::vector<std::string> misspelledEnvironmentNames() {
  std::vector<std::string> warnings;
  for (char **entry = environ; entry && *entry; ++entry) {
    const char *equals = std::strchr(*entry, '=');
    if (!equals)
      continue;
    const std::string name(*entry, size_t(equals - *entry));
    std::string upper = name;
    for (char &c : upper)
      c = char(std::toupper(static_cast<unsigned char>(c)));
    // Any name: TRXT_NUM_THREADS and TX_NUM_THREADS are misspellings too
    // (only names that began with TXRT were compared); none of the
    // environment's other variables is within two edits of these.
    const char *nearest = nullptr;
    size_t best = 3;
    for (const char *known : kEnvironmentNames) {
      if (name == known) {
        nearest = nullptr;
        break;
      }
      if (size_t distance = nameDistance(upper, known); distance < best) {
        best = distance;
        nearest = known;
      }
    }
    if (nearest)
      warnings.push_back(name + " is set, but nothing reads it: did you mean " +
                         nearest + "?");
  }
  return warnings;
}

/// "a, b, c".
std::string joinWithCommas(const std::vector<std::string> &items) {
  std::string joined;
  for (const std::string &item : items)
    joined += (joined.empty() ? "" : ", ") + item;
  return joined;
}

int dispatch(const std::string &program, const std::vector<std::string> &args,
             const char *modelJson, const txc_entry_fn *entryTable,
             std::ostream &out, std::ostream &err) {
  CommandLine line = parseCommandLine(takeDeviceOption(args));
  if (line.command == CommandLine::Command::Help) {
    out << usageText(line.helpTopic, program);
    return kExitOk;
  }
  // Under mpirun only train divides its work among the ranks. Every other
  // command ran once per rank: each answer printed N times (stdin goes to
  // rank 0 alone, so the others answered nothing or the arguments again),
  // and export's N ranks wrote one file. Rank 0 runs it; the others end.
  if (line.command != CommandLine::Command::Train) {
    const auto [rank, size] = Communicator::launchedRankAndSize();
    if (size > 1 && rank != 0)
      return kExitOk;
    if (size > 1)
      err << "note: " << line.commandName
          << " runs on rank 0 only (the launcher started " << size
          << " copies; only train divides its work among ranks)\n";
  }
  for (const std::string &warning : misspelledEnvironmentNames())
    err << "warning: " << warning << "\n";
  if (line.command == CommandLine::Command::Info && line.info.json &&
      !line.info.loadPath) {
    out << modelInfoJson(modelJson ? modelJson : "") << "\n";
    return kExitOk;
  }
  ModelInfo model = ModelInfo::parse(modelJson ? modelJson : "");
  // Profiles name spec lines through the metadata's call-site table.
  for (ProfileOptions *profile : {&line.run.profile, &line.bench.profile})
    if (profile->enabled)
      profile->sites = parseSiteTable(modelJson ? modelJson : "");
  // info and export open no device, but a --device or --allow-tf32 they
  // were given is checked as the other commands check it.
  if (line.command == CommandLine::Command::Info ||
      line.command == CommandLine::Command::Export)
    checkDeviceRequest(model);
  if (line.command == CommandLine::Command::Info && line.info.json) {
    out << checkpointJson(model, *line.info.loadPath) << "\n";
    return kExitOk;
  }
  if (line.command == CommandLine::Command::Info) {
    // The checkpoint first: a file that does not fit prints nothing else.
    std::string checkpoint =
        line.info.loadPath ? describeCheckpoint(model, *line.info.loadPath)
                           : std::string();
    printModelInfo(model, out);
    out << checkpoint;
    return kExitOk;
  }
  // Before any work: stacks the kernels can run on.
  if (line.command != CommandLine::Command::Export)
    if (std::string problem = stackProblem() + switchProblem();
        !problem.empty()) {
      err << "error: " << problem << "\n";
      return kExitBadInput;
    }
  // Before any work: the code was compiled for CPU features this CPU may
  // lack (--mcpu=x86-64-v4 on an AVX2 machine, or a native build moved to
  // an older one), which died of SIGILL in the first kernel.
  // (export runs none of that code: it copies tensors.)
  // The runtime linked in (libtxrt) is compiled for its own -march
  // (TXRT_ARCH), whatever txc's --mcpu: an --mcpu=x86-64 executable passed
  // this check and ran the runtime's AVX2 loops.
  std::vector<std::string> missing, runtimeMissing;
  if (line.command != CommandLine::Command::Export) {
    for (const std::string &feature : model.cpuFeatures)
      if (txrt_cpu_has_feature(feature.c_str()) == 0)
        missing.push_back(feature);
    std::istringstream runtimeFeatures(txrt_runtime_cpu_features());
    for (std::string feature; std::getline(runtimeFeatures, feature, ',');)
      if (!feature.empty() && txrt_cpu_has_feature(feature.c_str()) == 0)
        runtimeMissing.push_back(feature);
  }
  if (!missing.empty()) {
    err << "error: this executable was compiled for CPU features this CPU "
           "lacks: "
        << joinWithCommas(missing) << " (txc flags: "
        << (model.compileFlags.empty() ? "none, the build machine's CPU"
                                       : model.compileFlags)
        << "); recompile the spec on this machine, or for a CPU it has "
           "(txc --mcpu=x86-64-v3 for AVX2 machines, --mcpu=x86-64 for any "
           "x86-64, with a runtime built for it: -DTXRT_ARCH)\n";
    return kExitBadInput;
  }
  if (!runtimeMissing.empty()) {
    err << "error: the runtime linked into this executable (libtxrt, built "
           "with -march="
        << txrt_runtime_arch() << ") uses CPU features this CPU lacks: "
        << joinWithCommas(runtimeMissing)
        << "; build txc's runtime for a CPU this one is (cmake "
           "-DTXRT_ARCH=x86-64-v3 for AVX2 machines, x86-64-v2 or x86-64 "
           "for older ones) and recompile the spec with that txc (and "
           "--mcpu to match)\n";
    return kExitBadInput;
  }
  // Before any work: a bf16 model needs the CPU's bf16 instructions
  // (export copies f32 tensors: it needs none).
  if (model.precision == "bf16" && !txrt_cpu_has_bf16() &&
      line.command != CommandLine::Command::Export) {
    err << "error: this model was compiled with --precision=bf16 and this "
           "CPU has neither avx512_bf16 nor amx_bf16; recompile it with "
           "--precision=fp32\n";
    return kExitBadInput;
  }
  // The device before any work: no GPU or no driver is one exit-2 error
  // here (the command opens its own context again). What is wrong with the
  // command itself is said first: on a machine without a driver a CUDA
  // executable answered an unknown entry or a missing checkpoint with
  // "install the NVIDIA driver".
  if (line.command != CommandLine::Command::Export) {
    if (model.target == "cuda")
      checkBeforeDevice(model, line);
    openDevice(model);
  }
  if (line.command != CommandLine::Command::Export)
    warnAboutOversubscription(line, err);
  switch (line.command) {
  case CommandLine::Command::Train:
    // A progress bar only when writing to a terminal's stderr.
    return trainCommand(model, entryTable, line.train, out, err,
                        &err == &std::cerr && stderrIsTerminal());
  case CommandLine::Command::Eval:
    return evalCommand(model, entryTable, line.eval, out, err);
  case CommandLine::Command::Translate:
    return translateCommand(model, entryTable, line.translate, std::cin, out,
                            err);
  case CommandLine::Command::Generate:
    return generateCommand(model, entryTable, line.generate, std::cin, out,
                           err);
  case CommandLine::Command::Predict:
    return predictCommand(model, entryTable, line.predict, std::cin, out, err);
  case CommandLine::Command::Bench:
    return benchCommand(model, entryTable, line.bench, out, err);
  case CommandLine::Command::Export:
    return exportCommand(model, line.exportOptions, out, err);
  default:
    return runCommand(model, entryTable, line.run, out, err);
  }
}

} // namespace

int runDriver(const std::string &program, const std::vector<std::string> &args,
              const char *modelJson, const txc_entry_fn *entryTable,
              std::ostream &out, std::ostream &err) {
  // --device and --allow-tf32 are the run's: gone when it returns, so code
  // after it in the same process (a test's) opens devices as it would
  // without them.
  struct ResetDeviceOptions {
    ~ResetDeviceOptions() {
      setRequestedDevice("");
      setAllowTf32(false);
    }
  } reset;
  try {
    return dispatch(program, args, modelJson, entryTable, out, err);
  } catch (const UsageError &error) {
    printErrorLines(err, error.what());
    // One line to act on, not the whole usage text (which can bury the
    // error off screen); the bare program with no command gets the usage.
    if (args.empty())
      err << "\n" << usageText("", program);
    else
      err << "hint: see '" << program
          << (error.command().empty() ? "" : " " + error.command())
          << " --help'\n";
    return error.exitCode();
  } catch (const DriverError &error) {
    printErrorLines(err, error.what());
    return error.exitCode();
  } catch (const std::bad_alloc &) {
    err << "error: out of memory\n";
    return kExitFailure;
  } catch (const std::filesystem::filesystem_error &error) {
    // A path the command could not resolve, not txc's fault: a relative
    // one in a current directory that was removed ("internal error:
    // filesystem error: cannot make absolute path").
    std::string message = error.code().message();
    std::string path = error.path1().string();
    char here[8];
    const bool cwdGone =
        ::getcwd(here, sizeof here) == nullptr && errno == ENOENT;
    err << "error: " << (path.empty() ? "a path" : "'" + path + "'") << ": "
        << message
        << (cwdGone ? " (the current directory was removed: cd to one that "
                      "exists, or give absolute paths)"
                    : "")
        << "\n";
    return kExitBadInput;
  } catch (const std::exception &error) {
    printErrorLines(err, std::string("internal error: ") + error.what());
    return kExitFailure;
  } catch (...) {
    err << "error: internal error: unknown exception\n";
    return kExitFailure;
  }
}

namespace {

/// Standard streams the caller closed (`exe translate <&- >&-`) are
/// reopened before anything else opens a file, so that no file takes their
/// numbers (a checkpoint read as stdin, a temporary file receiving the
/// output): stdin on /dev/null (empty), stdout and stderr on /dev/full
/// (every write fails). Returns whether stdout was closed; tells
/// InputLines whether stdin was.
bool reopenClosedStandardStreams() {
  bool stdoutClosed = false;
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF)
      continue;
    int opened = ::open(fd == 0 ? "/dev/null" : "/dev/full",
                        fd == 0 ? O_RDONLY : O_WRONLY);
    if (opened >= 0 && opened != fd) {
      ::dup2(opened, fd);
      ::close(opened);
    }
    stdoutClosed |= fd == 1;
    if (fd == 0)
      setStdinWasClosed(true);
  }
  return stdoutClosed;
}

} // namespace

int driverMain(int argc, char **argv, const char *modelJson,
               const txc_entry_fn *entryTable) {
  // Past a file size limit (ulimit -f), write() then fails with EFBIG and
  // the error names the file, instead of SIGXFSZ killing the process.
  std::signal(SIGXFSZ, SIG_IGN);
  const bool stdoutClosed = reopenClosedStandardStreams();
  setStdoutWasClosed(stdoutClosed);
  std::string program = argc > 0 && argv[0] ? argv[0] : "model";
  size_t slash = program.find_last_of('/');
  if (slash != std::string::npos)
    program = program.substr(slash + 1);
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i)
    args.emplace_back(argv[i]);
  int code =
      runDriver(program, args, modelJson, entryTable, std::cout, std::cerr);
  errno = 0;
  std::cout.flush();
  // What the command printed is its result (translations, scores, info):
  // output lost to a full disk, a file size limit or a closed stdout is a
  // failure, not exit 0.
  // (A command that stopped on a failed write has said so: code != 0.)
  if (std::cout.fail() && code == kExitOk) {
    int error = errno ? errno : stdoutPipeError();
    std::cerr << "error: writing the output to stdout failed: "
              << (stdoutClosed ? "stdout is closed"
                  : error      ? std::strerror(error)
                               : "a write failed (a full disk, a file size "
                                 "limit?)")
              << "; what was printed is incomplete\n";
    code = kExitFailure;
  }
  return code;
}

} // namespace txrt::driver
