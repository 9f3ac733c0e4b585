//===- CommandLine.h - the driver's command-line grammar --------*- C++ -*-===//
//
//   PROGRAM info [--json]
//   PROGRAM run ENTRY [--load FILE | --init SEED] [--input [NAME=]FILE]...
//               [--out-dir DIR] [--threads N] [--dim NAME=N]... [--save FILE]
//               [[NAME=]FILE]...
//   PROGRAM help [COMMAND] | --help | COMMAND --help
//
// Options take their value as the next argument or after '='
// (`--load=w.safetensors`). Parsing is pure: it checks the syntax and the
// number formats and throws UsageError (which prints the command's usage);
// whether ENTRY, input names and files exist is checked when running.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_COMMANDLINE_H
#define TXRT_DRIVER_COMMANDLINE_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace txrt::driver {

/// `--input NAME=FILE` (name set) or `--input FILE` (name empty: the next
/// input of the entry in declaration order).
struct InputArg {
  std::string name;
  std::string path;
};

struct InfoOptions {
  bool json = false; ///< print the raw metadata JSON
};

struct RunOptions {
  std::string entry;
  std::optional<std::string> loadPath;
  std::optional<uint64_t> initSeed;
  std::vector<InputArg> inputs;
  std::string outDir = ".";
  int32_t threads = 0; ///< 0: TXRT_NUM_THREADS or every core
  std::vector<std::pair<std::string, int64_t>> dims;
  std::optional<std::string> savePath;
  int32_t repeat = 1; ///< runs of the entry; timing reports min and median
};

struct CommandLine {
  enum class Command { Help, Info, Run };
  Command command = Command::Help;
  std::string helpTopic; ///< for Help: "", "info" or "run"
  InfoOptions info;
  RunOptions run;
};

/// Parses the arguments after the program name; throws UsageError.
CommandLine parseCommandLine(const std::vector<std::string> &args);

/// The usage text of `command` ("" for the top level, "info", "run").
std::string usageText(std::string_view command, std::string_view program);

/// Splits "NAME=VALUE" when NAME is an identifier ([A-Za-z_][A-Za-z0-9_.]*);
/// nullopt otherwise.
std::optional<std::pair<std::string, std::string>>
splitNameValue(std::string_view text);

} // namespace txrt::driver

#endif // TXRT_DRIVER_COMMANDLINE_H
