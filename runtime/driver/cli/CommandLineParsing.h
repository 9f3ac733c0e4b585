//===- CommandLineParsing.h - pieces shared by the command parsers -*- C++ -*-===//
//
// Internal to CommandLine*.cpp: the argument cursor (`--opt VALUE` and
// `--opt=VALUE`), number parsing, and the parsers of each command.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_COMMANDLINEPARSING_H
#define TXRT_DRIVER_COMMANDLINEPARSING_H

#include "cli/CommandLine.h"
#include "core/Error.h"

#include <charconv>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace txrt::driver {

inline bool isHelpFlag(const std::string &arg) {
  return arg == "-h" || arg == "--help";
}

template <typename T> std::optional<T> parseInteger(std::string_view text) {
  T value{};
  auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ec != std::errc() || result.ptr != text.data() + text.size())
    return std::nullopt;
  return value;
}

/// A decimal number as every float option takes it: strtod's syntax but no
/// leading blanks and no hexadecimal (" 0.5" and "0x1p-1" were 0.5 for
/// --alpha and --ema, and refused by --temperature), nothing after it.
inline std::optional<double> parseDecimal(const std::string &text) {
  if (text.empty() || text.find_first_of("xX \t\n\r\f\v") != std::string::npos)
    return std::nullopt;
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (*end != '\0')
    return std::nullopt;
  return value;
}

/// Walks the arguments of one command, handling `--opt VALUE` and
/// `--opt=VALUE`.
class ArgCursor {
public:
  ArgCursor(const std::vector<std::string> &args, size_t start,
            std::string command)
      : args_(args), pos_(start), command_(std::move(command)) {}

  bool done() const { return pos_ >= args_.size(); }

  /// The next argument; splits "--opt=value" into option and pending value.
  std::string next() {
    std::string arg = args_[pos_++];
    pending_.reset();
    if (arg.rfind("--", 0) == 0) {
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        pending_ = arg.substr(eq + 1);
        arg.resize(eq);
      }
    }
    // `--help=x` printed the help and dropped the value.
    if (arg == "--help")
      noValue(arg);
    return arg;
  }

  /// The next argument as written (after `--`: a text, even "--a=b").
  std::string nextRaw() {
    pending_.reset();
    return args_[pos_++];
  }

  std::string value(const std::string &option) {
    // `--data A --data B` trained on B alone, `--save a --save b` never
    // wrote a: a valued option given twice is an error (--input and --dim
    // and export's --average name one thing each time).
    if (option != "--input" && option != "--dim" && option != "--average" &&
        !valued_.insert(option).second)
      fail("option '" + option + "' is given twice");
    if (pending_) {
      std::string value = *pending_;
      pending_.reset();
      return value;
    }
    if (done())
      fail("option '" + option + "' needs a value");
    // `--save --quiet` is a forgotten value, not a file named --quiet: an
    // option's value never starts with "--" unless written --opt=--value.
    const std::string &next = args_[pos_];
    if (next.size() > 2 && next.compare(0, 2, "--") == 0)
      fail("option '" + option + "' needs a value, got the option '" + next +
           "' (write " + option + "=" + next +
           " for a value that starts with --)");
    return args_[pos_++];
  }

  /// The argument `back` places before the one next() returned last, or
  /// nullptr.
  const std::string *before(size_t back) const {
    return pos_ >= back + 2 ? &args_[pos_ - back - 1] : nullptr;
  }

  void noValue(const std::string &option) {
    if (pending_)
      fail("option '" + option + "' takes no value");
  }

  [[noreturn]] void fail(const std::string &message) const {
    throw UsageError(message, command_);
  }

private:
  const std::vector<std::string> &args_;
  size_t pos_;
  std::set<std::string> valued_; ///< the valued options seen
  std::string command_;
  std::optional<std::string> pending_;
};

/// The largest count an option takes (steps, epochs, batch rows, tokens).
constexpr int64_t kMaxCount = int64_t(1) << 40;

/// An integer option in [minimum, maximum]; fails with the option's name.
template <typename T>
T integerOption(ArgCursor &cursor, const std::string &option, T minimum,
                T maximum) {
  std::string text = cursor.value(option);
  std::optional<T> value = parseInteger<T>(text);
  if (!value || *value < minimum || *value > maximum)
    cursor.fail(option + " expects an integer in [" + std::to_string(minimum) +
                ", " + std::to_string(maximum) + "], got '" + text + "'");
  return *value;
}

/// A non-empty string option.
inline std::string pathOption(ArgCursor &cursor, const std::string &option) {
  std::string value = cursor.value(option);
  if (value.empty())
    cursor.fail(option + " needs a file name");
  return value;
}

/// Whether `arg` asks for help; if so, the command line becomes help on
/// `topic`.
inline bool help(const std::string &arg, CommandLine &line,
                 const char *topic) {
  if (!isHelpFlag(arg))
    return false;
  line.command = CommandLine::Command::Help;
  line.helpTopic = topic;
  return true;
}

/// --threads N: kernel threads, 1..4096.
inline int32_t threadsOption(ArgCursor &cursor, const std::string &arg) {
  return integerOption<int32_t>(cursor, arg, 1, 4096);
}

/// After `OPTION FIRST SECOND`: how to make the one file `OPTION` takes of
/// two files that look like the sides of a corpus (regular files without
/// a tab, of as many lines), into a file that is neither and does not
/// exist; "" when they do not (a forgotten --valid, a stray number, a
/// language model's text).
std::string twoSidesHint(const std::string &option, const std::string &first,
                         const std::string &second);

/// An option no parser took, or a stray argument. `texts` names what the
/// command's other arguments are ("sentence"), for the hint that one that
/// starts with '-' goes after '--'.
[[noreturn]] inline void unexpected(ArgCursor &cursor, const std::string &arg,
                                    const char *texts = nullptr) {
  if (arg.size() > 1 && arg[0] == '-')
    cursor.fail("unknown option '" + arg + "'" +
                (texts ? std::string(" (a ") + texts +
                             " that starts with '-' goes after '--')"
                       : std::string()));
  // `--data train.en train.es`: fairseq's and Marian's corpus is two files.
  for (const char *option : {"--data", "--valid"}) {
    const std::string *last = cursor.before(1), *first = cursor.before(2);
    std::string file;
    if (first && *first == option)
      file = *last;
    else if (last && last->rfind(std::string(option) + "=", 0) == 0)
      file = last->substr(std::string(option).size() + 1);
    else
      continue;
    if (std::string hint = twoSidesHint(option, file, arg); !hint.empty())
      cursor.fail("unexpected argument '" + arg + "': " + hint);
  }
  cursor.fail("unexpected argument '" + arg + "'");
}

/// --profile, --profile-trace FILE, --profile-rows N (run and bench):
/// parses `arg` into `profile` and returns true, or returns false for other
/// options.
inline bool profileOption(ArgCursor &cursor, const std::string &arg,
                          ProfileOptions &profile) {
  if (arg == "--profile") {
    cursor.noValue(arg); // --profile=no profiled
    profile.enabled = true;
  } else if (arg == "--profile-trace") {
    profile.enabled = true;
    profile.tracePath = pathOption(cursor, arg);
  } else if (arg == "--profile-rows") {
    // Implies --profile, as --profile-trace does (it was ignored alone).
    profile.enabled = true;
    profile.rows = integerOption<int64_t>(cursor, arg, 0, 1000000);
  } else {
    return false;
  }
  return true;
}

void parseTrain(ArgCursor &cursor, CommandLine &line);
void parseEval(ArgCursor &cursor, CommandLine &line);
void parseTranslate(ArgCursor &cursor, CommandLine &line);
void parseBench(ArgCursor &cursor, CommandLine &line);
void parseGenerate(ArgCursor &cursor, CommandLine &line);
void parsePredict(ArgCursor &cursor, CommandLine &line);

/// Usage texts of train, eval, translate and bench (nullptr for others).
const char *trainingUsage(std::string_view command);
/// Usage texts of generate and predict (nullptr for others).
const char *kindUsage(std::string_view command);

/// `export` (CommandLineExport.cpp).
void parseExport(ArgCursor &cursor, CommandLine &line);
extern const char *const kExportUsage;

} // namespace txrt::driver

#endif // TXRT_DRIVER_COMMANDLINEPARSING_H
