//===- txc.cpp - the txc compiler driver ----------------------------------===//
//
// `txc FILE.tx [--emit=STAGE] [-o OUT] [-D name=value ...]`: parses a spec,
// evaluates its config, generates tx IR and prints the requested stage. Spec
// errors are printed as `file:line:col: error: ...` with the source line and
// a caret, every error of the file in one run, and exit with code 1. The
// spec is read with a size cap whatever kind of file it is, and no output
// may be the spec itself or a device the native stages would replace.
//
//===----------------------------------------------------------------------===//
#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxRoles.h"
#include "tx/Dialect/TxShape.h"
#include "txc/Frontend/ConstEval.h"
#include "txc/Frontend/Diagnostics.h"
#include "txc/Frontend/MLIRGen.h"
#include "txc/Frontend/Parser.h"
#include "txc/CodeGen/CodeGen.h"
#include "txc/GPU/CudaLowering.h"
#include "txc/GPU/GluePipeline.h"
#include "txc/Graph/GraphDot.h"
#include "txc/Transforms/MemoryPlan.h"
#include "txc/Transforms/Passes.h"

#include "../ProtectedFiles.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/thread.h"
#include "llvm/TargetParser/Host.h"

#include <cctype>
#include <chrono>
#include <csignal>
#include <sstream>

#include <unistd.h>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

enum class Stage {
  Ast, Tx, Fused, Grad, Planned, Metadata, Dot, Svg, Gpu, Llvm, Obj, Exe
};
enum class GraphDetail { Forward, Full };

cl::OptionCategory txcCategory("txc options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<spec.tx>"),
                               cl::Required, cl::cat(txcCategory));
cl::opt<std::string>
    outputFile("o", cl::desc("Output file ('-' for stdout: text outputs only)"),
               cl::value_desc("file"), cl::init("-"), cl::cat(txcCategory));
cl::opt<Stage> emit(
    "emit", cl::desc("Stage to emit"), cl::init(Stage::Exe),
    cl::values(
        clEnumValN(Stage::Ast, "ast", "the parsed spec, re-printed"),
        clEnumValN(Stage::Tx, "tx", "tx IR as written (unfused)"),
        clEnumValN(Stage::Fused, "fused", "tx IR after the fusion passes"),
        clEnumValN(Stage::Grad, "grad", "tx IR with backward and optimizer"),
        clEnumValN(Stage::Planned, "planned", "buffers with arena offsets"),
        clEnumValN(Stage::Metadata, "metadata",
                   "the executable's metadata (JSON, as `info --json` "
                   "prints it, less its call-site table)"),
        clEnumValN(Stage::Dot, "dot",
                   "the model graph in Graphviz DOT, one digraph per entry"),
        clEnumValN(Stage::Svg, "svg",
                   "the model graph rendered by Graphviz (one SVG per entry)"),
        clEnumValN(Stage::Gpu, "gpu",
                   "entries with the glue outlined to gpu.func kernels "
                   "(--target=cuda)"),
        clEnumValN(Stage::Llvm, "llvm", "LLVM IR"),
        clEnumValN(Stage::Obj, "obj", "an object file and a C header"),
        clEnumValN(Stage::Exe, "exe", "a native executable (default)")),
    cl::cat(txcCategory));
cl::list<std::string> defines("D", cl::Prefix,
                              cl::desc("Override a config value"),
                              cl::value_desc("name=value"),
                              cl::cat(txcCategory));
cl::opt<bool> listParams("list-params",
                         cl::desc("List parameters (name, shape, "
                                  "initializer) and their total count"),
                         cl::cat(txcCategory));
cl::list<std::string> noFuse(
    "no-fuse", cl::CommaSeparated, cl::ValueOptional,
    cl::desc("Disable fusion: all passes, or the listed ones "
             "(--no-fuse=add-norm)"),
    cl::value_desc("pass,..."), cl::cat(txcCategory));
cl::opt<bool> timeStages("time-stages",
                         cl::desc("Print the wall time of each compiler "
                                  "stage to stderr"),
                         cl::cat(txcCategory));
cl::opt<bool> fusionStats(
    "tx-fusion-stats",
    cl::desc("Print to stderr what each fusion pass fused and what it "
             "declined, with the spec location and the reason"),
    cl::cat(txcCategory));
cl::opt<GraphDetail> graphDetail(
    "graph-detail", cl::desc("What --emit=dot/svg draws of a training entry"),
    cl::init(GraphDetail::Forward),
    cl::values(clEnumValN(GraphDetail::Forward, "forward",
                          "the forward; backward and optimizer folded into "
                          "one node (default)"),
               clEnumValN(GraphDetail::Full, "full",
                          "every op of the differentiated entry")),
    cl::cat(txcCategory));
cl::list<std::string> graphEntries(
    "graph-entry", cl::CommaSeparated,
    cl::desc("Entries --emit=dot/svg draws (default: all)"),
    cl::value_desc("name,..."), cl::cat(txcCategory));
cl::opt<std::string> targetName(
    "target", cl::desc("Device the executable runs on: cpu (default) or cuda"),
    cl::value_desc("cpu|cuda"), cl::init("cpu"), cl::cat(txcCategory));
cl::opt<std::string> mcpu(
    "mcpu",
    cl::desc("CPU to generate host code for, as llc's -mcpu (default: the "
             "host; e.g. x86-64-v3 for executables that run on any AVX2 "
             "machine)"),
    cl::value_desc("cpu-name"), cl::cat(txcCategory));
cl::list<std::string> mattr(
    "mattr", cl::CommaSeparated,
    cl::desc("CPU features to enable or disable, as llc's -mattr "
             "(+avx2,-avx512f)"),
    cl::value_desc("+a1,-a2,..."), cl::cat(txcCategory));
cl::opt<std::string> precisionName(
    "precision",
    cl::desc("Precision of the products: fp32 (default) or bf16 (linears "
             "read bf16 and accumulate f32; docs/precision.md)"),
    cl::value_desc("fp32|bf16"), cl::init("fp32"), cl::cat(txcCategory));
cl::opt<std::string> symbolPrefix(
    "symbol-prefix",
    cl::desc("Prefix of the object's exported names (--emit=obj/llvm; "
             "default txc: txc_model_json, txc_entry_NAME): objects with "
             "different prefixes link into one program"),
    cl::value_desc("name"), cl::init("txc"), cl::cat(txcCategory));
cl::opt<bool> summary("summary",
                      cl::desc("Print a summary of the spec and of each "
                               "compiler stage"),
                      cl::cat(txcCategory));

const char *stageName(Stage stage) {
  switch (stage) {
  case Stage::Ast: return "ast";
  case Stage::Tx: return "tx";
  case Stage::Fused: return "fused";
  case Stage::Grad: return "grad";
  case Stage::Planned: return "planned";
  case Stage::Metadata: return "metadata";
  case Stage::Dot: return "dot";
  case Stage::Svg: return "svg";
  case Stage::Gpu: return "gpu";
  case Stage::Llvm: return "llvm";
  case Stage::Obj: return "obj";
  case Stage::Exe: return "exe";
  }
  return "?";
}

/// Stages that this build of txc can produce.
bool isAvailable(Stage) { return true; }

bool isGraph(Stage stage) { return stage == Stage::Dot || stage == Stage::Svg; }

bool isNative(Stage stage) {
  return stage == Stage::Llvm || stage == Stage::Obj || stage == Stage::Exe;
}

/// Stages that run the whole pipeline, memory planning included.
bool plans(Stage stage) {
  return stage == Stage::Planned || stage == Stage::Metadata ||
         stage == Stage::Gpu || isNative(stage);
}

/// `dir/base.tx` -> `base`.
std::string stemOf(llvm::StringRef path) {
  return llvm::sys::path::stem(path).str();
}

/// The most bytes of spec txc reads: 16 MiB (the base model is 4 KiB).
constexpr size_t kMaxSpecBytes = size_t(16) << 20;

/// Reads the spec at `path` ("-": stdin). Any file (regular, pipe, FIFO,
/// device) is read with the kMaxSpecBytes cap, so `/dev/zero` or an endless
/// pipe is an error, not unbounded memory.
std::optional<std::string> readSpec(llvm::StringRef path, std::string &error) {
  llvm::sys::fs::file_t file;
  bool isStdin = path == "-";
  if (isStdin) {
    file = llvm::sys::fs::getStdinHandle();
  } else {
    llvm::Expected<llvm::sys::fs::file_t> opened =
        llvm::sys::fs::openNativeFileForRead(path);
    if (!opened) {
      error = llvm::toString(opened.takeError());
      return std::nullopt;
    }
    file = *opened;
  }
  auto close = llvm::make_scope_exit([&] {
    if (!isStdin)
      llvm::sys::fs::closeFile(file);
  });
  std::string text;
  char chunk[1 << 16];
  while (true) {
    llvm::Expected<size_t> read = llvm::sys::fs::readNativeFile(file, chunk);
    if (!read) {
      error = llvm::toString(read.takeError());
      return std::nullopt;
    }
    if (*read == 0)
      return text;
    if (text.size() + *read > kMaxSpecBytes) {
      error = "the spec is larger than 16 MiB (the limit)";
      return std::nullopt;
    }
    text.append(chunk, *read);
  }
}

/// What txc writes at an output path.
enum class OutputKind {
  Text,   ///< IR, tables: streamed; a pipe, FIFO or /dev/null is fine
  Header, ///< the object's C header: written or replaced whole
  Native, ///< object, executable: written or replaced whole
};

/// "cannot create a temporary file in 'DIR' (TMPDIR): WHY": the directory
/// the error is about (it said only "No such file or directory").
std::string temporaryFileError(std::error_code error) {
  llvm::SmallString<128> directory;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, directory);
  const char *tmpdir = std::getenv("TMPDIR");
  return "txc: error: cannot create a temporary file in '" +
         std::string(directory) + "'" + (tmpdir ? " (TMPDIR)" : "") +
         (error ? ": " + error.message() : std::string()) + "\n";
}

/// Checks that txc may write `path`: never the spec itself (by path, link or
/// device and inode), never a directory, and for native outputs only a
/// regular file (the linker and object writer would truncate, chmod or
/// replace a device or FIFO). Reports and returns false otherwise.
/// Whether a file can be created in `directory`: a probe created and
/// removed (access() says yes to root on a read-only mount or /proc, where
/// the linker then failed with its whole command line).
bool canCreateIn(llvm::StringRef directory) {
  llvm::SmallString<256> model(directory);
  llvm::sys::path::append(model, ".txc-probe-%%%%%%%%");
  int fd;
  llvm::SmallString<256> probe;
  if (llvm::sys::fs::createUniqueFile(model, fd, probe))
    return false;
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  llvm::sys::fs::remove(probe);
  return true;
}

bool checkOutputPath(llvm::StringRef path, OutputKind kind) {
  if (path == "-")
    return true;
  // (The linker answered an empty name with its whole command line.)
  if (path.empty()) {
    llvm::errs() << "txc: error: the output's name is empty; give -o FILE\n";
    return false;
  }
  // `-o /dev/stdout > model.o` wrote the object through the descriptor's
  // file and its header to /dev/stdout.h.
  if (kind != OutputKind::Text && txc::namedFileDescriptor(path) >= 0) {
    llvm::errs() << "txc: error: the output '" << path
                 << "' names a file descriptor: txc writes objects and "
                    "executables only to a file it is given by name (an "
                    "object's header goes beside it)\n";
    return false;
  }
  bool same = false;
  if (inputFile != "-" &&
      !llvm::sys::fs::equivalent(inputFile.getValue(), path, same) && same) {
    llvm::errs() << "txc: error: the output '" << path
                 << "' is the spec itself; choose another -o\n";
    return false;
  }
  // A spec read from stdin (`txc - -o s.tx < s.tx`): compared by the file
  // stdin is.
  llvm::sys::fs::file_status stdinStatus, outputStatus;
  if (inputFile == "-" && !llvm::sys::fs::status(0, stdinStatus) &&
      llvm::sys::fs::is_regular_file(stdinStatus) &&
      !llvm::sys::fs::status(path, outputStatus) &&
      llvm::sys::fs::equivalent(stdinStatus, outputStatus)) {
    llvm::errs() << "txc: error: the output '" << path
                 << "' is the spec itself (read from stdin); choose another "
                    "-o\n";
    return false;
  }
  if (std::string why = txc::untrustedSymlink(path); !why.empty()) {
    llvm::errs() << "txc: error: the output '" << path << "': " << why << "\n";
    return false;
  }
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(path, status)) {
    // A dangling symlink names the file it points to: that one is made
    // (the checks below are of its name and directory). One that loops,
    // or whose file cannot be made, is found now, not after the object
    // was written without its header.
    if (llvm::sys::fs::is_symlink_file(path)) {
      std::string target = txc::symlinkTarget(path);
      if (target == path) {
        llvm::errs() << "txc: error: the output '" << path
                     << "' is a symlink that loops\n";
        return false;
      }
      return checkOutputPath(target, kind);
    }
    // Written fresh: its directory must exist and take new files (found
    // now, not by the linker after the whole compile).
    if (std::string problem = txc::directoryProblem(path); !problem.empty()) {
      llvm::errs() << "txc: error: the output '" << path << "': " << problem
                   << "\n";
      return false;
    }
    llvm::SmallString<256> parent(llvm::sys::path::parent_path(path));
    if (parent.empty())
      parent = ".";
    if (llvm::sys::fs::access(parent, llvm::sys::fs::AccessMode::Write) ||
        !canCreateIn(parent)) {
      llvm::errs() << "txc: error: the output '" << path
                   << "': cannot create files in directory '" << parent
                   << "'\n";
      return false;
    }
    return true;
  }
  llvm::sys::fs::file_type type = status.type();
  using llvm::sys::fs::file_type;
  if (type == file_type::regular_file) {
    // An object or executable is replaced by a new file (the linker
    // unlinks and creates it): its directory must take one.
    llvm::SmallString<256> parent(llvm::sys::path::parent_path(path));
    if (parent.empty())
      parent = ".";
    if (llvm::sys::fs::access(path, llvm::sys::fs::AccessMode::Write) ||
        (kind != OutputKind::Text && !canCreateIn(parent))) {
      llvm::errs() << "txc: error: the output '" << path
                   << "' exists and cannot be written\n";
      return false;
    }
    // The header's name is derived from -o, not given: only a header txc
    // wrote is replaced (a hand-written data.h beside -o data.o was
    // overwritten without a word).
    if (kind == OutputKind::Header) {
      auto existing = llvm::MemoryBuffer::getFile(path);
      if (existing &&
          !(*existing)->getBuffer().starts_with(tx::kCHeaderBanner)) {
        llvm::errs() << "txc: error: '" << path
                     << "' exists and txc did not write it: --emit=obj writes "
                        "the object's C header beside it (STEM.h for -o "
                        "STEM.o), which would replace it; choose another -o "
                        "(or remove the file)\n";
        return false;
      }
    }
    std::string kept =
        txc::protectedKindOf(path, /*binary=*/kind == OutputKind::Native);
    if (!kept.empty()) {
      llvm::errs() << "txc: error: the output '" << path << "' is " << kept
                   << ": writing "
                   << (kind != OutputKind::Native ? "txc's output"
                       : emit == Stage::Obj       ? "the object file"
                                                  : "the executable")
                   << " there would destroy it; choose another -o (or remove "
                      "the file)\n";
      return false;
    }
    return true;
  }
  if (type == file_type::directory_file) {
    llvm::errs() << "txc: error: the output '" << path << "' is a directory\n";
    return false;
  }
  bool streams =
      type == file_type::fifo_file || type == file_type::character_file;
  if (kind == OutputKind::Text && streams)
    return true;
  llvm::errs() << "txc: error: the output '" << path
               << "' is not a regular file; txc writes "
               << (kind == OutputKind::Text ? "text"
                                            : "objects and executables")
               << " only to regular files"
               << (kind == OutputKind::Text ? ", pipes and character devices"
                                            : "")
               << "\n";
  return false;
}

/// Text output (IR, tables, graphs), gathered and then written whole to
/// its file (ProtectedFiles.h): a full disk or `ulimit -f` left a truncated
/// file, or none where the previous one had been.
struct TextOutput {
  std::string text;
  llvm::raw_string_ostream stream{text};
  llvm::raw_ostream &os() { return stream; }
};

/// Writes `output` to `path`, or reports why it could not (a full disk,
/// /dev/full) and returns false, the previous file as it was.
bool finishOutput(TextOutput &output, llvm::StringRef path) {
  output.stream.flush();
  const bool replaces =
      !txc::writtenInPlace(path) && llvm::sys::fs::exists(path);
  std::string problem = txc::writeOutputWhole(path, output.text);
  if (problem.empty())
    return true;
  llvm::errs() << "txc: error: cannot write '" << path << "': " << problem
               << (replaces ? " (the previous file is left as it was)" : "")
               << "\n";
  return false;
}

/// --emit=dot / --emit=svg: the graph of each selected entry (GraphDot.h).
/// `module` is after fusion; a copy is differentiated to fold (or, with
/// --graph-detail=full, draw) the training entries' backward and optimizer.
int emitGraph(ModuleOp module) {
  OwningOpRef<ModuleOp> differentiated = module.clone();
  {
    PassManager pm(module.getContext());
    pm.addPass(tx::createAutodiffPass());
    pm.addPass(tx::createOptimizerPass());
    if (failed(pm.run(*differentiated)))
      return 1;
  }
  txc::GraphOptions options;
  options.full = graphDetail == GraphDetail::Full;
  options.entries.assign(graphEntries.begin(), graphEntries.end());
  if (llvm::is_contained(options.entries, std::string())) {
    // `--graph-entry=$UNSET` drew nothing and said nothing.
    txc::GraphOptions all;
    std::string ignored;
    llvm::errs() << "txc: error: --graph-entry= names no entry (entries: "
                 << llvm::join(txc::selectEntries(module, all, ignored), ", ")
                 << ")\n";
    return 1;
  }
  std::string unknown;
  std::vector<std::string> entries =
      txc::selectEntries(module, options, unknown);
  if (!unknown.empty()) {
    txc::GraphOptions all;
    std::string ignored;
    llvm::errs() << "txc: error: --graph-entry=" << unknown
                 << ": the spec has no entry '" << unknown << "' (entries: "
                 << llvm::join(txc::selectEntries(module, all, ignored), ", ")
                 << ")\n";
    return 1;
  }
  auto dotOf = [&](llvm::StringRef entry) {
    std::string text;
    llvm::raw_string_ostream os(text);
    txc::writeEntryDot(module, *differentiated, entry, options, os);
    return text;
  };

  if (emit == Stage::Dot) {
    if (!checkOutputPath(outputFile, OutputKind::Text))
      return 1;
    TextOutput output;
    for (const std::string &entry : entries)
      output.os() << dotOf(entry);
    return finishOutput(output, outputFile) ? 0 : 1;
  }

  // SVG: Graphviz's dot renders each entry to its own file.
  llvm::ErrorOr<std::string> dot = llvm::sys::findProgramByName("dot");
  if (!dot) {
    llvm::errs() << "txc: error: --emit=svg needs Graphviz's `dot` on PATH "
                    "(Debian: apt-get install graphviz; scripts/install-deps.sh "
                    "installs it); --emit=dot writes the graph without it\n";
    return 1;
  }
  if (entries.size() > 1 && outputFile == "-") {
    llvm::errs() << "txc: error: --emit=svg draws one picture per entry and "
                    "the spec has "
                 << entries.size()
                 << ": give -o FILE.svg (writes FILE.<entry>.svg) or pick one "
                    "with --graph-entry=NAME\n";
    return 1;
  }
  // One file per entry beside -o: `-o /dev/full` wrote /dev/full.train.svg.
  if (entries.size() > 1 && llvm::sys::fs::exists(outputFile) &&
      !llvm::sys::fs::is_regular_file(outputFile)) {
    llvm::errs() << "txc: error: -o '" << outputFile
                 << "' is not a regular file, and --emit=svg writes one file "
                    "per entry beside it (FILE.<entry>.svg): give -o "
                    "DIR/FILE.svg, or one entry with --graph-entry=NAME\n";
    return 1;
  }
  for (const std::string &entry : entries) {
    std::string target = outputFile;
    if (entries.size() > 1) {
      llvm::SmallString<256> path(outputFile);
      llvm::sys::path::replace_extension(path, "");
      target = (path + "." + entry + ".svg").str();
    }
    if (!checkOutputPath(target, OutputKind::Text))
      return 1;
    llvm::SmallString<128> dotFile, svgFile;
    std::error_code failed =
        llvm::sys::fs::createTemporaryFile("txc-graph", "dot", dotFile);
    if (!failed)
      failed = llvm::sys::fs::createTemporaryFile("txc-graph", "svg", svgFile);
    if (failed) {
      llvm::errs() << temporaryFileError(failed);
      return 1;
    }
    auto cleanup = llvm::make_scope_exit([&] {
      llvm::sys::fs::remove(dotFile);
      llvm::sys::fs::remove(svgFile);
    });
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(dotFile, ec);
      if (ec) {
        llvm::errs() << "txc: error: " << dotFile << ": " << ec.message()
                     << "\n";
        return 1;
      }
      os << dotOf(entry);
    }
    std::string errorMessage;
    llvm::StringRef args[] = {*dot, "-Tsvg", dotFile, "-o", svgFile};
    int code = llvm::sys::ExecuteAndWait(*dot, args, std::nullopt, {}, 0, 0,
                                         &errorMessage);
    if (code != 0) {
      llvm::errs() << "txc: error: Graphviz's dot failed on entry '" << entry
                   << "'" << (errorMessage.empty() ? "" : ": ")
                   << errorMessage << "\n";
      return 1;
    }
    auto svg = llvm::MemoryBuffer::getFile(svgFile);
    if (!svg) {
      llvm::errs() << "txc: error: " << svg.getError().message() << "\n";
      return 1;
    }
    TextOutput output;
    output.os() << (*svg)->getBuffer();
    if (!finishOutput(output, target))
      return 1;
  }
  return 0;
}

/// Compiles a planned module to LLVM IR, an object file (+ C header) or an
/// executable. Returns the process exit code.
/// Prints "stage: N ms" to stderr under --time-stages.
class StageTimer {
public:
  void done(const char *stage) {
    auto now = std::chrono::steady_clock::now();
    if (timeStages)
      llvm::errs() << "txc: " << stage << ": "
                   << std::chrono::duration_cast<std::chrono::milliseconds>(
                          now - last)
                          .count()
                   << " ms\n";
    last = now;
  }

private:
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
};

/// The CUDA toolkit whose libdevice the glue kernels link: $CUDA_HOME, else
/// the one this txc was configured with.
std::string cudaToolkitPath() {
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    return home;
#ifdef TXC_CUDA_TOOLKIT
  return TXC_CUDA_TOOLKIT;
#else
  return "";
#endif
}

/// Applies MLIR's pass-manager flags (--mlir-timing, --mlir-print-ir-*) to
/// one of txc's pipelines.
LogicalResult applyPassManagerOptions(PassManager &pm) {
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  applyDefaultTimingPassManagerCLOptions(pm);
  return success();
}

/// The host CPU of native code, from --mcpu / --mattr.
tx::CpuTarget cpuTarget() {
  return {mcpu, std::vector<std::string>(mattr.begin(), mattr.end())};
}

/// Records in `module` the CPU features its native code may use (the
/// metadata's "cpu_features", checked by the executable before any work).
void setCpuFeatures(ModuleOp module) {
  SmallVector<Attribute> names;
  for (const std::string &name : tx::cpuFeaturesUsed(cpuTarget()))
    names.push_back(StringAttr::get(module.getContext(), name));
  module->setAttr("tx.cpu_features",
                  ArrayAttr::get(module.getContext(), names));
}

/// Checks --target, --mcpu and --mattr before any work; reports and returns
/// false when one is wrong (txc then exits with 2, a usage error).
bool checkTargetFlags() {
  if (targetName != "cpu" && targetName != "cuda") {
    llvm::errs() << "txc: error: --target=" << targetName
                 << ": unknown target; the targets are cpu (default) and "
                    "cuda\n";
    return false;
  }
  if (targetName == "cuda") {
#ifndef TXC_HAS_CUDA
    llvm::errs() << "txc: error: this txc was built without CUDA (reconfigure "
                    "with the CUDA toolkit, see README \"Building with "
                    "CUDA\")\n";
    return false;
#endif
    // The kernels link libdevice from the toolkit: a CUDA_HOME without it
    // gave MLIR's error once per kernel, each at an unrelated spec line.
    if (emit == Stage::Llvm || emit == Stage::Obj || emit == Stage::Exe) {
      std::string toolkit = cudaToolkitPath();
      llvm::SmallString<256> libdevice(toolkit);
      llvm::sys::path::append(libdevice, "nvvm", "libdevice",
                              "libdevice.10.bc");
      // A file that is no LLVM bitcode (empty, a directory, text): an
      // empty one built an executable whose kernels call __nv_expf
      // unresolved (exit 0), another gave an error at an unrelated spec
      // line.
      auto isBitcode = [](llvm::StringRef path) {
        if (!llvm::sys::fs::is_regular_file(path))
          return false;
        auto buffer = llvm::MemoryBuffer::getFile(path);
        if (!buffer || (*buffer)->getBufferSize() < 4)
          return false;
        llvm::StringRef bytes = (*buffer)->getBuffer();
        return bytes.starts_with("BC\xC0\xDE") ||
               bytes.starts_with("\xDE\xC0\x17\x0B");
      };
      if (!toolkit.empty() && llvm::sys::fs::exists(libdevice) &&
          !isBitcode(libdevice)) {
        llvm::errs() << "txc: error: --target=cuda needs the CUDA toolkit's "
                        "libdevice, and '"
                     << libdevice
                     << "' is not an LLVM bitcode file (empty, a directory or "
                        "damaged); set CUDA_HOME to a CUDA toolkit whose "
                        "libdevice is intact (e.g. /usr/local/cuda)\n";
        return false;
      }
      if (toolkit.empty() || !llvm::sys::fs::exists(libdevice)) {
        const char *home = std::getenv("CUDA_HOME");
        llvm::errs() << "txc: error: --target=cuda needs the CUDA toolkit's "
                        "libdevice, and '"
                     << libdevice << "' does not exist ("
                     << (home && *home ? "CUDA_HOME=" + std::string(home)
                                       : std::string("the toolkit this txc "
                                                     "was built with"))
                     << "); set CUDA_HOME to a CUDA toolkit (e.g. "
                        "/usr/local/cuda)\n";
        return false;
      }
    }
  } else if (emit == Stage::Gpu) {
    llvm::errs() << "txc: error: --emit=gpu is a stage of the CUDA target; "
                    "add --target=cuda\n";
    return false;
  }
  if (precisionName != "fp32" && precisionName != "bf16") {
    llvm::errs() << "txc: error: --precision=" << precisionName
                 << ": unknown precision; the precisions are fp32 (default) "
                    "and bf16\n";
    return false;
  }
  if (precisionName == "bf16" && targetName == "cuda") {
    llvm::errs() << "txc: error: --precision=bf16 is implemented for the cpu "
                    "target only (docs/precision.md)\n";
    return false;
  }
  std::string error;
  if (failed(tx::verifyCpuTarget(cpuTarget(), error))) {
    llvm::errs() << "txc: error: " << error << "\n";
    return false;
  }
  return true;
}

int emitNative(ModuleOp module, const std::string &flags, char *argv0) {
  // Check every path written before the long stages run.
  std::string stem = stemOf(inputFile);
  std::string target = outputFile;
  if (inputFile == "-" && outputFile == "-" &&
      (emit == Stage::Obj || emit == Stage::Exe)) {
    // The default name is the spec's stem, and stdin has none (the
    // linker wrote the executable to stdout).
    llvm::errs() << "txc: error: the spec comes from stdin: give -o for the "
                 << (emit == Stage::Obj ? "object file" : "executable")
                 << "\n";
    return 1;
  }
  if (emit == Stage::Obj && outputFile == "-")
    target = stem + ".o";
  else if (emit == Stage::Exe && outputFile == "-")
    target = stem;
  if (emit == Stage::Obj && llvm::sys::path::extension(target) == ".h") {
    // Its header is STEM.h: the object would be written over.
    llvm::errs() << "txc: error: -o '" << target
                 << "' is where the object's C header goes (STEM.h beside "
                    "it); name the object STEM.o\n";
    return 1;
  }
  std::string headerPath =
      (llvm::sys::path::parent_path(target) +
       (llvm::sys::path::parent_path(target).empty() ? "" : "/") +
       llvm::sys::path::stem(target) + ".h")
          .str();
  if (!checkOutputPath(target, emit == Stage::Llvm ? OutputKind::Text
                                                   : OutputKind::Native) ||
      (emit == Stage::Obj && !checkOutputPath(headerPath, OutputKind::Header)))
    return 1;
  // Written through a symlink to its file, as the text outputs are (the
  // linker replaced the link and left its file the old build).
  target = txc::symlinkTarget(target);
  headerPath = txc::symlinkTarget(headerPath);
  StageTimer timer;
  bool cuda = targetName == "cuda";
  if (cuda) // the driver runs a CUDA executable on the GPU (ModelAbi.h)
    module->setAttr("tx.target", StringAttr::get(module.getContext(), "cuda"));
  setCpuFeatures(module);
  std::string json =
      tx::buildModelMetadata(module, inputFile, flags, symbolPrefix);
  if (emit == Stage::Obj) {
    std::string clash = tx::cHeaderNameClash(module, symbolPrefix);
    if (!clash.empty()) {
      llvm::errs() << inputFile << ": error: " << clash << "\n";
      return 1;
    }
  }
  // The guard names the model too: every examples/*/model.tx made
  // TXC_MODEL_H, so a second model's header was silently skipped.
  std::string headerSymbol;
  std::string header =
      tx::buildCHeader(module,
                       "txc_" + module.getSymName().value_or("model").str() +
                           "_" + stemOf(inputFile),
                       symbolPrefix, &headerSymbol);
  std::vector<std::string> entrySymbols;
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr("tx.entry"))
      entrySymbols.push_back(("txc_entry_" + func.getSymName()).str());

  if (cuda && failed(tx::checkCudaLimits(module)))
    return 1;
  PassManager pm(module.getContext());
  if (failed(applyPassManagerOptions(pm)))
    return 2;
  // Verified once at the end: verifying after each of the lowering's
  // passes took a third of its time on deep models (docs/benchmarks.md).
  pm.enableVerifier(false);
  pm.addPass(tx::createLowerEntriesPass());
  if (!cuda)
    tx::buildLowerToLLVMPipeline(pm);
  if (failed(pm.run(module)))
    return 1;
  if (cuda) {
    if (failed(tx::lowerEntriesForCuda(module, cudaToolkitPath())))
      return 1;
    timer.done("glue kernels to PTX");
    PassManager host(module.getContext());
    host.enableVerifier(false);
    tx::buildLowerToLLVMPipeline(host, /*gpuLaunches=*/true);
    if (failed(host.run(module)))
      return 1;
  }
  if (failed(verify(module)))
    return 1;
  timer.done("lower to LLVM dialect");
  json = tx::addSiteTable(json, module);
  if (failed(tx::addModelGlobals(module, json, entrySymbols, headerSymbol)))
    return 1;
  llvm::LLVMContext llvmContext;
  std::string error;
  tx::NativeModules modules =
      tx::translateAndOptimize(module, llvmContext, error, cpuTarget());
  if (!modules) {
    llvm::errs() << "txc: error: " << error << "\n";
    return 1;
  }
  timer.done("translate + O3");
  if (emit == Stage::Llvm) {
    std::unique_ptr<llvm::Module> joined =
        tx::joinModules(std::move(modules), error);
    if (!joined) {
      llvm::errs() << "txc: error: " << error << "\n";
      return 1;
    }
    tx::renameExportedSymbols(*joined, symbolPrefix);
    TextOutput output;
    joined->print(output.os(), nullptr);
    bool written = finishOutput(output, outputFile);
    timer.done("join and write llvm");
    return written ? 0 : 1;
  }
  // The kernels' and the entries' objects, in temporary files.
  std::vector<std::string> objects;
  std::vector<std::unique_ptr<llvm::FileRemover>> removers;
  for (const char *half : {"kernels", "entries"}) {
    llvm::SmallString<128> object;
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "txc-" + stem + "-" + half, "o", object)) {
      llvm::errs() << temporaryFileError(ec);
      return 1;
    }
    objects.push_back(object.str().str());
    removers.push_back(std::make_unique<llvm::FileRemover>(object));
    // Also when a signal ends txc (they were left in TMPDIR).
    llvm::sys::RemoveFileOnSignal(object);
  }
  // Both halves alike: the entries call the kernels by name.
  tx::renameExportedSymbols(*modules.kernels, symbolPrefix);
  tx::renameExportedSymbols(*modules.entries, symbolPrefix);
  if (failed(tx::writeObjectFiles(modules, objects[0], objects[1], error,
                                  cpuTarget()))) {
    llvm::errs() << "txc: error: " << error << "\n";
    return 1;
  }
  timer.done("object code");
  // The linker writes a temporary beside the target, renamed over it when
  // the link succeeded (and, for an object, its header was written): a
  // full disk, `ulimit -f` or a signal during the link left no file, or a
  // half-written one that crashed, under the target's name.
  txc::StagedOutput staged;
  if (std::string problem = staged.create(target); !problem.empty()) {
    llvm::errs() << "txc: error: cannot write '" << target << "': " << problem
                 << "\n";
    return 1;
  }
  const std::string keptNote =
      llvm::sys::fs::exists(target)
          ? " ('" + target + "' is left as it was)"
          : std::string();
  auto commit = [&]() {
    if (std::string problem = staged.commit(emit == Stage::Exe);
        !problem.empty()) {
      llvm::errs() << "txc: error: cannot write '" << target
                   << "': " << problem << keptNote << "\n";
      return false;
    }
    return true;
  };
  if (emit == Stage::Obj) {
    if (failed(tx::linkRelocatable(objects, staged.path(), error))) {
      llvm::errs() << "txc: error: " << error << keptNote << "\n";
      return 1;
    }
    const bool headerExisted = llvm::sys::fs::exists(headerPath);
    if (std::string problem = txc::writeOutputWhole(headerPath, header);
        !problem.empty()) {
      llvm::errs() << "txc: error: cannot write '" << headerPath
                   << "': " << problem
                   << (headerExisted ? " (it and '" + target +
                                           "' are left as they were)"
                                     : keptNote)
                   << "\n";
      return 1;
    }
    if (!commit())
      return 1;
    // The two objects joined into one (ld -r) and the header: no
    // executable is linked ("link" read as if one were).
    timer.done("one object (ld -r) and header");
    return 0;
  }
  // An executable: the objects linked with the runtime.
  std::string self =
      llvm::sys::fs::getMainExecutable(argv0, reinterpret_cast<void *>(&stemOf));
  std::string libDir =
      (llvm::sys::path::parent_path(llvm::sys::path::parent_path(self)) + "/lib")
          .str();
  if (failed(tx::linkExecutable(objects, staged.path(), libDir, error, cuda))) {
    llvm::errs() << "txc: error: " << error << keptNote << "\n";
    return 1;
  }
  if (!commit())
    return 1;
  timer.done("link");
  return 0;
}

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

void printParams(ModuleOp module, llvm::raw_ostream &os) {
  size_t width = 4;
  for (auto param : module.getOps<tx::ParameterOp>())
    width = std::max(width, param.getSymName().size());
  int64_t total = 0, count = 0;
  for (auto param : module.getOps<tx::ParameterOp>()) {
    RankedTensorType type = param.getTensorType();
    os << llvm::left_justify(param.getSymName(), width + 2)
       << llvm::left_justify(formatShape(type.getShape()), 16)
       << tx::stringifyInit(param.getInit());
    if (std::optional<APFloat> std = param.getStd())
      os << " (std " << llvm::format("%g", std->convertToDouble()) << ")";
    os << "\n";
    total += type.getNumElements();
    ++count;
  }
  os << "total: " << total << " parameters in " << count << " tensors ("
     << llvm::format("%.1f", total * 4.0 / (1 << 20)) << " MiB f32)\n";
}

void printSummary(ModuleOp module, llvm::raw_ostream &os) {
  os << "model    " << module.getSymName().value_or("<unnamed>") << " ("
     << inputFile << ")\n";
  if (auto config = module->getAttrOfType<DictionaryAttr>("tx.config")) {
    os << "config  ";
    for (NamedAttribute attr : config) {
      os << " " << attr.getName().getValue() << "=";
      // A BoolAttr is an i1 IntegerAttr: tested first.
      if (auto b = dyn_cast<BoolAttr>(attr.getValue()))
        os << (b.getValue() ? "true" : "false");
      else if (auto i = dyn_cast<IntegerAttr>(attr.getValue()))
        os << i.getInt();
      else if (auto f = dyn_cast<FloatAttr>(attr.getValue()))
        // As the spec writes it: `16.0` (a float), every digit that reads
        // back (%g gave `16` and `1.23457e+08`).
        os << txc::ast::formatNumber(f.getValueAsDouble(), false);
    }
    os << "\n";
  }
  if (auto dims = module->getAttrOfType<DictionaryAttr>("tx.dims")) {
    os << "dims    ";
    for (NamedAttribute attr : dims)
      os << " " << attr.getName().getValue()
         << "<=" << cast<IntegerAttr>(attr.getValue()).getInt();
    os << "\n";
  }
  int64_t total = 0, count = 0;
  for (auto param : module.getOps<tx::ParameterOp>()) {
    total += param.getTensorType().getNumElements();
    ++count;
  }
  os << "params   " << total << " in " << count << " tensors\n";
  os << "precision " << precisionName
     << (precisionName == "bf16"
             ? " (linears and attention products read bf16, accumulate f32)"
             : "")
     << "\n";
  auto kind = module->getAttrOfType<StringAttr>(tx::kKindAttr);
  os << "kind     " << (kind ? kind.getValue() : "none");
  if (module->hasAttr(tx::kKindInferredAttr))
    os << " (roles inferred from input names; declare them with `kind` and "
          "`@role`)";
  os << "\n";
  for (auto func : module.getOps<func::FuncOp>()) {
    os << "entry    " << func.getSymName() << "(";
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto name = func.getArgAttrOfType<StringAttr>(i, "tx.name");
      os << (i ? ", " : "") << (name ? name.getValue() : "?") << ": "
         << tx::formatType(func.getArgument(i).getType());
      if (auto role = func.getArgAttrOfType<StringAttr>(i, tx::kRoleAttr))
        os << " @" << role.getValue();
    }
    os << ") ->";
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      auto name = func.getResultAttrOfType<StringAttr>(i, "tx.name");
      os << (i ? ", " : " ") << (name ? name.getValue() : "?") << ": "
         << tx::formatType(func.getFunctionType().getResult(i));
    }
    if (auto role = func->getAttrOfType<StringAttr>(tx::kRoleAttr))
      os << "  (role " << role.getValue() << ")";
    llvm::MapVector<StringRef, int> ops;
    int numOps = 0;
    func.walk([&](Operation *op) {
      if (isa<tx::TxDialect>(op->getDialect())) {
        ++ops[op->getName().stripDialect()];
        ++numOps;
      }
    });
    os << "\n         " << numOps << " tx ops:";
    for (auto &[name, n] : ops)
      os << " " << name << "=" << n;
    os << "\n";
  }
  // The stages --summary ran (it stops after planning, and a failure there
  // is an error with exit 1: nothing is printed); native code it does not
  // build, and "llvm:ok obj:ok exe:ok" read as if it had for a spec whose
  // lowering fails.
  os << "stages  ";
  for (Stage stage : {Stage::Tx, Stage::Fused, Stage::Grad, Stage::Planned})
    os << " " << stageName(stage) << ":ok";
  os << " (llvm, obj, exe: not run by --summary; txc -o FILE builds them)\n";
}

} // namespace

/// Flags whose values cl::opt cannot tell apart from others: `--no-fuse=`
/// (and an empty item, `--no-fuse=attention,`) read as --no-fuse alone and
/// turned every fusion pass off; `-o -` for an object or executable (the
/// default is the spec's stem) wrote ./STEM instead of stdout.
bool checkListAndOutputFlags(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg == "--")
      break;
    if (!arg.consume_front("--no-fuse=") && !arg.consume_front("-no-fuse="))
      continue;
    llvm::SmallVector<llvm::StringRef> items;
    arg.split(items, ',');
    if (llvm::is_contained(items, llvm::StringRef())) {
      llvm::errs() << "txc: error: " << argv[i]
                   << ": an empty pass name (--no-fuse alone turns every "
                      "fusion pass off; --no-fuse=attention,add-norm,linear "
                      "names some)\n";
      return false;
    }
  }
  // Flags that choose another output than --emit's, or apply to one kind
  // of output only: each was dropped without a word.
  if ((summary || listParams) && emit.getNumOccurrences() > 0) {
    llvm::errs() << "txc: error: " << (summary ? "--summary" : "--list-params")
                 << " prints instead of an --emit stage; give one or the "
                    "other (run txc twice for both)\n";
    return false;
  }
  // --list-params prints the parameters as the spec makes them: a flag
  // that changes the passes or the native code changes none of them, and
  // was taken without a word.
  if (listParams) {
    const char *flag = noFuse.getNumOccurrences() > 0 ? "--no-fuse"
                       : fusionStats.getNumOccurrences() > 0
                           ? "--tx-fusion-stats"
                       : precisionName.getNumOccurrences() > 0 ? "--precision"
                       : mcpu.getNumOccurrences() > 0          ? "--mcpu"
                       : mattr.getNumOccurrences() > 0         ? "--mattr"
                                                               : nullptr;
    if (flag) {
      llvm::errs() << "txc: error: --list-params lists the parameters as the "
                      "spec makes them, which "
                   << flag << " does not change; give it without " << flag
                   << "\n";
      return false;
    }
  }
  if (summary && listParams) {
    llvm::errs() << "txc: error: --summary and --list-params each print "
                    "instead of the other; give one\n";
    return false;
  }
  if (!isGraph(emit) && (graphEntries.getNumOccurrences() > 0 ||
                         graphDetail.getNumOccurrences() > 0)) {
    llvm::errs() << "txc: error: "
                 << (graphEntries.getNumOccurrences() ? "--graph-entry"
                                                      : "--graph-detail")
                 << " applies to --emit=dot and --emit=svg only\n";
    return false;
  }
  // Fusion and precision change the IR from --emit=fused on, and --mcpu /
  // --mattr the native code and the metadata's CPU features: with an
  // earlier stage (or another output) each was dropped without a word.
  if (emit == Stage::Ast || emit == Stage::Tx) {
    const char *flag = noFuse.getNumOccurrences() > 0 ? "--no-fuse"
                       : fusionStats.getNumOccurrences() > 0
                           ? "--tx-fusion-stats"
                       : precisionName.getNumOccurrences() > 0 ? "--precision"
                                                               : nullptr;
    if (flag) {
      llvm::errs() << "txc: error: " << flag
                   << " applies to the stages from --emit=fused on; --emit="
                   << (emit == Stage::Ast ? "ast" : "tx")
                   << " is the spec as written\n";
      return false;
    }
  }
  if ((mcpu.getNumOccurrences() > 0 || mattr.getNumOccurrences() > 0) &&
      !isNative(emit) && emit != Stage::Metadata) {
    llvm::errs() << "txc: error: "
                 << (mcpu.getNumOccurrences() > 0 ? "--mcpu" : "--mattr")
                 << " applies to --emit=llvm, obj, metadata and the "
                    "executable (the CPU the native code runs on)\n";
    return false;
  }
  if (symbolPrefix.getNumOccurrences() > 0) {
    if (emit != Stage::Obj && emit != Stage::Llvm && emit != Stage::Metadata) {
      llvm::errs() << "txc: error: --symbol-prefix applies to --emit=obj, "
                      "llvm and metadata (an executable's driver finds the "
                      "model under txc_*)\n";
      return false;
    }
    std::string problem = tx::checkSymbolPrefix(symbolPrefix);
    if (!problem.empty()) {
      llvm::errs() << "txc: error: --symbol-prefix='" << symbolPrefix << "' "
                   << problem << "\n";
      return false;
    }
  }
  if (precisionName.getNumOccurrences() > 1)
    llvm::errs() << "txc: warning: --precision given "
                 << precisionName.getNumOccurrences() << " times; the last, '"
                 << precisionName << "', counts\n";
  // --emit twice printed the last stage without a word (as -D twice and
  // --precision twice warn).
  if (emit.getNumOccurrences() > 1)
    llvm::errs() << "txc: warning: --emit given " << emit.getNumOccurrences()
                 << " times; the last counts\n";
  // A -D that is not NAME=VALUE ('-D d_model', '-D d_model=', '-D 2x=1')
  // is a bad command line, exit 2 as the other flags' (it was a spec
  // error, exit 1); what the value says is the spec's (an expression that
  // does not parse, a name no config item has: exit 1).
  for (const std::string &define : defines) {
    const size_t eq = define.find('=');
    llvm::StringRef name = llvm::StringRef(define).take_front(eq).trim();
    llvm::StringRef value =
        eq == std::string::npos ? "" : llvm::StringRef(define).substr(eq + 1);
    const bool identifier =
        !name.empty() && (std::isalpha(uint8_t(name[0])) || name[0] == '_') &&
        llvm::all_of(
            name, [](char c) { return std::isalnum(uint8_t(c)) || c == '_'; });
    if (eq == std::string::npos || !identifier || value.trim().empty()) {
      llvm::errs() << "txc: error: -D " << define << ": expected name=value"
                   << (eq != std::string::npos && !identifier
                           ? " ('" + name.str() + "' is not a config name)"
                           : std::string())
                   << ", e.g. -D "
                   << (identifier ? name.str() : std::string("d_model"))
                   << "=128\n";
      return false;
    }
  }
  if ((emit == Stage::Obj || emit == Stage::Exe) && outputFile == "-" &&
      outputFile.getNumOccurrences() > 0) {
    llvm::errs() << "txc: error: -o -: "
                 << (emit == Stage::Obj ? "an object file" : "an executable")
                 << " is not written to stdout; give -o FILE (without -o it "
                    "is named after the spec)\n";
    return false;
  }
  return true;
}

/// `txc --version`: txc's own version (it printed LLVM's alone), the LLVM
/// and MLIR it is built on, its targets and the CPU it compiles for by
/// default.
void printVersion(llvm::raw_ostream &os) {
  os << "txc " << TXC_VERSION << "\n"
     << "  LLVM and MLIR " << LLVM_VERSION_STRING << "\n"
#ifdef TXC_HAS_CUDA
     << "  targets: cpu (default), cuda (toolkit " << TXC_CUDA_TOOLKIT << ")\n"
#else
     << "  targets: cpu (built without CUDA)\n"
#endif
     << "  default --mcpu: the host, " << llvm::sys::getHostCPUName() << "\n";
}

/// A value an enumerated flag does not take (`--emit=bogus`): LLVM said
/// "for the --emit option: Cannot find option named 'bogus'!" (exit 1),
/// naming none of the values. Looks at every `-name=V`, `--name=V` and
/// `--name V` before the command line is parsed.
template <typename T>
bool checkEnumFlag(int argc, char **argv, cl::opt<T> &flag, const char *what) {
  const std::string name = flag.ArgStr.str();
  auto &parser = flag.getParser();
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "--")
      break;
    if (!arg.consume_front("-"))
      continue;
    arg.consume_front("-");
    std::string value;
    if (arg.consume_front(name + "="))
      value = arg.str();
    else if (arg == name && i + 1 < argc)
      value = argv[i + 1];
    else if (arg == name)
      value = ""; // `--emit` last: LLVM's "requires a value!" named none
    else
      continue;
    std::string known;
    bool found = false;
    for (unsigned k = 0; k < parser.getNumOptions(); ++k) {
      found |= parser.getOption(k) == value;
      known += std::string(k == 0 ? "" : ", ") + parser.getOption(k).str();
    }
    if (!found) {
      llvm::errs() << "txc: error: --" << name << "=" << value << ": unknown "
                   << what << "; the " << what << "s are " << known << "\n";
      return false;
    }
  }
  return true;
}

int compileMain(int argc, char **argv) {
  // MLIR's pass-manager flags (--mlir-timing, --mlir-print-ir-after=...)
  // work on txc's pipelines but stay out of --help.
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  cl::HideUnrelatedOptions(txcCategory);
  cl::SetVersionPrinter(printVersion);
  // A bad command line is exit 2, as a bad --precision or --target is (an
  // unknown flag or value was LLVM's exit 1, and 1 is a spec's errors).
  if (!checkEnumFlag(argc, argv, emit, "stage") ||
      !checkEnumFlag(argc, argv, graphDetail, "graph detail"))
    return 2;
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "txc: compiles a Transformer spec (.tx) through the tx dialect\n\n"
          "  txc model.tx --emit=tx          tx IR as written\n"
          "  txc model.tx --list-params      parameter names, shapes, count\n"
          "  txc model.tx -D d_model=128 ... override config values\n"
          "  txc model.tx --mcpu=x86-64-v3  an executable for any AVX2 CPU\n",
          &llvm::errs()))
    return 2;

  if (!checkTargetFlags() || !checkListAndOutputFlags(argc, argv))
    return 2;

  std::string readError;
  std::optional<std::string> text = readSpec(inputFile, readError);
  if (!text) {
    llvm::errs() << "txc: error: cannot read '" << inputFile
                 << "': " << readError << "\n";
    return 1;
  }
  // MLIR given for a spec (a stage txc printed): a hundred syntax errors
  // said less than this.
  if (llvm::sys::path::extension(inputFile) == ".mlir") {
    llvm::errs() << "txc: error: '" << inputFile
                 << "' is MLIR, not a .tx spec: txc compiles specs; run passes "
                    "on tx IR with tx-opt (docs/codegen.md)\n";
    return 1;
  }
  txc::SourceFile file(inputFile, std::move(*text));
  txc::DiagnosticEngine diags(file);
  // Diagnostics printed already: the warnings of a run that went on.
  size_t shown = 0;
  auto printWarnings = [&]() {
    std::ostringstream os;
    diags.print(os, shown);
    llvm::errs() << os.str();
    shown = diags.getDiagnostics().size();
  };
  // The -D flags that set config values, once the config is evaluated:
  // an error on a line that names one says so.
  const std::map<std::string, std::string> *defineFlags = nullptr;
  const std::map<std::string, std::vector<std::string>> *derivedFlags = nullptr;
  auto reportAndExit = [&]() {
    if (defineFlags)
      diags.noteFlagsOnErrorLines(*defineFlags, shown, derivedFlags);
    std::ostringstream os;
    diags.print(os, shown);
    llvm::errs() << os.str();
    llvm::errs() << diags.getNumErrors() << " error"
                 << (diags.getNumErrors() == 1 ? "" : "s") << " generated.\n";
    return 1;
  };

  // --time-stages: the front end and the tx passes, then emitNative's stages.
  StageTimer timer;
  std::unique_ptr<txc::ast::Module> ast = txc::parseSpec(file, diags);
  if (diags.hasErrors())
    return reportAndExit();

  // Text output (IR, tables) goes to -o, opened only when it is written, so
  // that native stages can write their own files there.
  std::unique_ptr<TextOutput> output;
  auto openOutput = [&]() -> bool {
    if (!checkOutputPath(outputFile, OutputKind::Text))
      return false;
    output = std::make_unique<TextOutput>();
    return true;
  };

  if (emit == Stage::Ast && !listParams && !summary) {
    // The spec as written: -D values are not printed into it, but a -D
    // naming no config value, or one that does not parse, is the error it
    // is in every other stage (it exited 0 here).
    if (!defines.empty()) {
      (void)txc::evaluateConfig(*ast, defines, diags);
      if (diags.hasErrors())
        return reportAndExit();
    }
    timer.done("front end (parse)");
    if (!openOutput())
      return 1;
    output->os() << txc::ast::print(*ast);
    bool written = finishOutput(*output, outputFile);
    timer.done("write ast");
    return written ? 0 : 1;
  }

  txc::ConfigEnv env = txc::evaluateConfig(*ast, defines, diags);
  defineFlags = &env.flags;
  derivedFlags = &env.derivedFlags;
  if (diags.hasErrors())
    return reportAndExit();
  printWarnings(); // a -D flag that replaces an earlier one

  MLIRContext context;
  context.loadDialect<tx::TxDialect, func::FuncDialect>();
  context.printOpOnDiagnostic(false);
  OwningOpRef<ModuleOp> module = txc::mlirGen(context, *ast, env, diags);
  if (!module || diags.hasErrors())
    return reportAndExit();
  printWarnings(); // e.g. a train entry without an optimizer
  timer.done("front end");

  if (!isAvailable(emit)) {
    llvm::errs() << "txc: error: --emit=" << stageName(emit)
                 << " is not yet available in this version of txc; "
                    "available: ast, tx, fused, planned, dot, svg, llvm, obj, exe (see --help)\n";
    return 1;
  }

  // From here on, errors of passes (shape checks, lowering) carry spec
  // locations: report them like the frontend's, with the source line.
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    txc::reportToSpec(diag, diags);
    return success();
  });

  // --summary describes the spec as written (the tx stage) and reports
  // the stages through planning, which it runs: it said "planned:ok" for
  // a spec whose memory planning fails, without running it.
  OwningOpRef<ModuleOp> asWritten;
  if (summary)
    asWritten = module->clone();
  const Stage through = summary ? Stage::Planned : emit;
  {
    PassManager pm(&context);
    if (failed(applyPassManagerOptions(pm)))
      return 2;
    pm.addPass(tx::createShapeCheckPass());
    bool printsIR = !listParams;
    bool fuseAttention = true, fuseAddNorm = true, fuseLinear = true;
    for (const std::string &name : noFuse) {
      if (name.empty())
        fuseAttention = fuseAddNorm = fuseLinear = false;
      else if (name == "attention")
        fuseAttention = false;
      else if (name == "add-norm")
        fuseAddNorm = false;
      else if (name == "linear")
        fuseLinear = false;
      else {
        llvm::errs() << "txc: error: --no-fuse=" << name
                     << ": unknown fusion pass; the passes are attention, "
                        "add-norm and linear\n";
        return 2;
      }
    }
    bool fuses = through == Stage::Fused || through == Stage::Grad ||
                 isGraph(through) || plans(through);
    // --tx-fusion-stats names each pass --no-fuse turned off (it went
    // silent on them: "off" and "report missing" looked alike).
    if (printsIR && fuses && fusionStats)
      for (auto [name, on] : {std::pair{"attention", fuseAttention},
                              std::pair{"add-norm", fuseAddNorm},
                              std::pair{"linear", fuseLinear}})
        if (!on)
          llvm::errs() << "tx-fuse-" << name << ": off (--no-fuse"
                       << (llvm::is_contained(noFuse, "")
                               ? std::string()
                               : std::string("=") + name)
                       << ")\n";
    if (printsIR && fuses && fuseAttention)
      pm.addPass(tx::createFuseAttentionPass({fusionStats}));
    if (printsIR && fuses && fuseAddNorm)
      pm.addPass(tx::createFuseAddNormPass({fusionStats}));
    if (printsIR && fuses && fuseLinear)
      // Under bf16 a bias-free matmul(x, Wᵀ) stays a tx.matmul, which
      // docs/precision.md keeps in f32 (a linear would read bf16).
      pm.addPass(tx::createFuseLinearPass(
          {fusionStats, /*biasFree=*/precisionName != "bf16"}));
    bool differentiates = through == Stage::Grad || plans(through);
    // --emit=grad is the IR the later stages start from: with the decoding
    // entries tx-decode-step derives (they were missing there, and running
    // the rest of the pipeline on it gave another module).
    if (differentiates && printsIR)
      pm.addPass(tx::createDecodeStepPass({fusionStats}));
    if (differentiates && printsIR) {
      pm.addPass(tx::createAutodiffPass());
      pm.addPass(tx::createOptimizerPass());
      pm.addPass(tx::createShapeCheckPass());
    }
    if (plans(through) && printsIR) {
      pm.addPass(tx::createStripDropoutPass());
      pm.addPass(tx::createPrecisionPass({precisionName}));
      pm.addPass(tx::createAttentionLayoutPass());
      pm.addPass(tx::createInferenceFingerprintPass());
      pm.addPass(tx::createPlanMemoryPass());
    }
    if (failed(pm.run(*module)) || diags.hasErrors())
      return reportAndExit();
  }
  timer.done("tx passes");
  printWarnings(); // the passes' (parameters the loss does not reach), for
                   // every --emit

  if (listParams || summary) {
    if (!openOutput())
      return 1;
    if (listParams)
      printParams(*module, output->os());
    if (summary)
      printSummary(*asWritten, output->os());
    bool written = finishOutput(*output, outputFile);
    timer.done(listParams ? "write --list-params" : "write --summary");
    return written ? 0 : 1;
  }

  if (isGraph(emit)) {
    int code = emitGraph(*module);
    if (diags.hasErrors())
      return reportAndExit();
    timer.done(emit == Stage::Svg ? "graph and Graphviz (svg)" : "write dot");
    return code;
  }

  std::string flags;
  for (const std::string &define : defines)
    flags += (flags.empty() ? "-D " : " -D ") + define;
  if (precisionName != "fp32")
    flags += (flags.empty() ? "--precision=" : " --precision=") +
             precisionName.getValue();
  // Every flag that changes what the executable computes or where it runs
  // (info prints them; a checkpoint's note compares the config).
  for (const std::string &name : noFuse)
    flags += (flags.empty() ? "" : " ") +
             (name.empty() ? std::string("--no-fuse") : "--no-fuse=" + name);
  if (!targetName.empty() && targetName != "cpu")
    flags += (flags.empty() ? "--target=" : " --target=") +
             targetName.getValue();
  if (!mcpu.empty())
    flags += (flags.empty() ? "--mcpu=" : " --mcpu=") + mcpu.getValue();
  for (const std::string &attr : mattr)
    flags += (flags.empty() ? "--mattr=" : " --mattr=") + attr;
  if (isNative(emit)) {
    int code = emitNative(*module, flags, argv[0]);
    if (diags.hasErrors())
      return reportAndExit();
    printWarnings(); // the lowering's (--target=cuda's limits)
    return code;
  }

  if (!openOutput())
    return 1;
  if (emit == Stage::Metadata) {
    // What the executable's metadata (info --json) says of its target.
    if (targetName == "cuda")
      (*module)->setAttr("tx.target",
                         StringAttr::get(module->getContext(), "cuda"));
    setCpuFeatures(*module);
    output->os() << tx::buildModelMetadata(*module, inputFile, flags,
                                           symbolPrefix)
                 << "\n";
    bool written = finishOutput(*output, outputFile);
    timer.done("write metadata");
    return written ? 0 : 1;
  }
  if (emit == Stage::Gpu) {
    PassManager pm(&context);
    pm.addPass(tx::createLowerEntriesPass());
    if (failed(tx::checkCudaLimits(*module)) || failed(pm.run(*module)) ||
        failed(tx::prepareEntriesForCuda(*module)) || diags.hasErrors())
      return reportAndExit();
    (*module)->removeAttr("tx.sites"); // the metadata's profile table
    timer.done("glue to gpu.func kernels");
    printWarnings(); // --target=cuda's limits (said by obj and exe alone)
  }
  if (emit == Stage::Planned)
    tx::printMemoryPlan(*module, output->os());
  module->print(output->os());
  bool written = finishOutput(*output, outputFile);
  timer.done((std::string("write ") + stageName(emit)).c_str());
  return written ? 0 : 1;
}

/// The front end and the passes recurse once per level of a spec's nesting
/// (up to 1024 levels once defs are inlined, about 3 MB of stack in the
/// normal build): they run on a thread with a stack of its own, so that the
/// limit, not the stack, ends such a spec whatever `ulimit -s` says (2 MB
/// crashed at the limit) and in the sanitizer build, whose frames are
/// larger (8 MB crashed there). The stack is reserved, not touched.
constexpr unsigned kCompileStackBytes = 256u << 20;

namespace {

/// A failure of the machine's resources (memory, `ulimit -v`, `ulimit -u`),
/// not of txc or the spec: one error line and exit 1 (LLVM printed "LLVM
/// ERROR: pthread_create failed", a crash report, and aborted: exit 134).
[[noreturn]] void exitOnResourceFailure(const char *reason) {
  llvm::errs() << "txc: error: " << reason
               << " (out of memory, or a process limit: txc needs about 1 GB "
                  "of address space, `ulimit -v`, and a few threads, `ulimit "
                  "-u`)\n";
  // The files registered for removal (a partial output) go, as LLVM's own
  // handler removes them.
  llvm::sys::RunInterruptHandlers();
  ::_exit(1);
}

/// LLVM's fatal errors: a thread it cannot start is a resource failure;
/// any other is a txc bug, reported as LLVM reports it (then its abort).
void onFatalError(void *, const char *reason, bool) {
  llvm::StringRef why(reason);
  if (why.contains("pthread_create") || why.contains("out of memory") ||
      why.contains("Allocation failed"))
    exitOnResourceFailure(reason);
  llvm::errs() << "LLVM ERROR: " << reason << "\n";
}

/// An allocation that failed (LLVM's allocators, and `new` through the
/// handler InitLLVM installs).
void onBadAlloc(void *, const char *reason, bool) {
  exitOnResourceFailure(reason);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::install_fatal_error_handler(onFatalError);
  llvm::install_bad_alloc_error_handler(onBadAlloc);
  // `ulimit -f`: a write that would pass it fails (EFBIG), reported as any
  // other, where SIGXFSZ ended txc with LLVM's crash report.
  ::signal(SIGXFSZ, SIG_IGN);
  // TMPDIR='' means no TMPDIR (as gcc takes it), not the current
  // directory, where the temporary objects went.
  if (const char *tmpdir = std::getenv("TMPDIR"); tmpdir && !*tmpdir)
    ::unsetenv("TMPDIR");
  int code = 0;
  llvm::thread compile(std::optional<unsigned>(kCompileStackBytes),
                       [&] { code = compileMain(argc, argv); });
  compile.join();
  return code;
}
