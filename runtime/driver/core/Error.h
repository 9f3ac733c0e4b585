//===- Error.h - the driver's error kinds and exit codes --------*- C++ -*-===//
//
// The driver reports every failure by throwing one of these; main() catches
// them and turns them into an `error: ...` line and an exit code:
//
//   InputError   bad user input (arguments, files, shapes, ids)  -> exit 2
//   UsageError   a malformed command line; also prints a hint naming the
//                command's --help -> exit 2
//   ModelError   the embedded model metadata is inconsistent      -> exit 1
//   KernelError  the compiled entry returned a txrt failure       -> exit 1
//   ResourceError the machine failed us: a full disk, an I/O error,
//                not enough memory for an arena                   -> exit 1
//
// A message may hold several lines (one problem each); main() prefixes every
// line with "error: ".
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_ERROR_H
#define TXRT_DRIVER_ERROR_H

#include <stdexcept>
#include <string>
#include <string_view>

namespace txrt::driver {

/// Process exit codes of a compiled model executable.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,
  kExitBadInput = 2,
};

/// Base of every error the driver reports; carries the exit code.
class DriverError : public std::runtime_error {
public:
  DriverError(const std::string &message, int exitCode)
      : std::runtime_error(message), exitCode_(exitCode) {}
  int exitCode() const { return exitCode_; }

private:
  int exitCode_;
};

/// Bad user input: a file, a tensor, a shape, an id, a flag value.
class InputError : public DriverError {
public:
  explicit InputError(const std::string &message)
      : DriverError(message, kExitBadInput) {}
};

/// A command line that does not parse; `command` names the command whose
/// usage should be printed ("" for the top level).
class UsageError : public InputError {
public:
  UsageError(const std::string &message, std::string command)
      : InputError(message), command_(std::move(command)) {}
  const std::string &command() const { return command_; }

private:
  std::string command_;
};

/// The model metadata embedded by txc is malformed (a compiler bug).
class ModelError : public DriverError {
public:
  explicit ModelError(const std::string &message)
      : DriverError("model metadata: " + message, kExitFailure) {}
};

/// A compiled entry (or the runtime) failed while running.
class KernelError : public DriverError {
public:
  explicit KernelError(const std::string &message)
      : DriverError(message, kExitFailure) {}
};

/// Decoding met logits that are not finite (weights that give NaN or inf
/// outputs): a KernelError, which train's validation scores as a BLEU it
/// cannot compute instead of ending the run.
class NonFiniteLogitsError : public KernelError {
public:
  /// Row `row` of a decoding batch (a sentence's, a prompt's) has a
  /// non-finite logit; `detail` is "id 2 at nan". `where` names the input
  /// ("<stdin>:3"), or is empty: the finding then names the row. The
  /// message adds what to do about a checkpoint's weights.
  NonFiniteLogitsError(int64_t row, std::string detail, std::string where = "")
      : KernelError(describe(row, detail, where) +
                    ": the weights give non-finite outputs (saved by a run "
                    "that diverged?); use an earlier checkpoint"),
        row_(row), detail_(std::move(detail)), where_(std::move(where)) {}
  /// The finding alone, for a run whose weights these are (train).
  std::string finding() const { return describe(row_, detail_, where_); }
  int64_t row() const { return row_; }
  /// The same finding about another row, or about the input `where` names.
  NonFiniteLogitsError atRow(int64_t row) const {
    return NonFiniteLogitsError(row, detail_, where_);
  }
  NonFiniteLogitsError at(const std::string &where) const {
    return NonFiniteLogitsError(row_, detail_, where);
  }

private:
  static std::string describe(int64_t row, const std::string &detail,
                              const std::string &where) {
    return where.empty()
               ? "the model's logits are not finite (row " +
                     std::to_string(row) + ", " + detail + ")"
               : where + ": the model's logits are not finite (" + detail + ")";
  }
  int64_t row_;
  std::string detail_, where_;
};

/// A runtime failure that is not the input's fault: writing failed (disk
/// full, file size limit, I/O error) or memory ran out.
class ResourceError : public DriverError {
public:
  explicit ResourceError(const std::string &message)
      : DriverError(message, kExitFailure) {}
};

/// `message` (one line or several) as error lines, each "error: " +
/// `prefix` + the line (a line "note: ..." as "note: " + `prefix` + the
/// rest), in one string for one write (under mpirun a rank's
/// lines must not interleave with another's or with mpirun's own).
inline std::string errorLines(const std::string &message,
                              const std::string &prefix = "") {
  std::string text;
  size_t start = 0;
  while (true) {
    size_t end = message.find('\n', start);
    std::string line = message.substr(
        start, end == std::string::npos ? std::string::npos : end - start);
    // A closing "note: ..." is said as one, not as another error.
    constexpr std::string_view kNote = "note: ";
    if (line.compare(0, kNote.size(), kNote) == 0)
      text += std::string(kNote) + prefix + line.substr(kNote.size()) + "\n";
    else
      text += "error: " + prefix + line + "\n";
    if (end == std::string::npos)
      return text;
    start = end + 1;
  }
}

} // namespace txrt::driver

#endif // TXRT_DRIVER_ERROR_H
