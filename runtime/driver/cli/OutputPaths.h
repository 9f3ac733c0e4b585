//===- OutputPaths.h - outputs never clobber the inputs ---------*- C++ -*-===//
//
// Before a command does any work, every file it will write is checked
// against every other one and against the files it reads: two names for
// the same file (the same path spelled differently, a symlink, a hard link:
// compared by device and inode when the file exists, by canonical path when
// it does not) are refused with an InputError naming both flags, as are
// outputs that exist but are not regular files (a FIFO or device would be
// replaced) and outputs whose directory does not exist. So `--save C --log
// C` or `--log train.tsv --data train.tsv` fail at once instead of
// destroying a checkpoint or the data.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_OUTPUTPATHS_H
#define TXRT_DRIVER_OUTPUTPATHS_H

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace txrt::driver {

/// A file and what the command line calls it ("--save", "--data", "the
/// tokenizer copy of --save").
struct NamedPath {
  std::string path;
  std::string what;
  /// What the output writes. Only a safetensors output (a checkpoint,
  /// parameters, gradients) may replace a safetensors file: any other (a
  /// log, a loss curve, a trace, a tokenizer copy, an .npy) over one is
  /// refused, as `--log b.safetensors` would destroy a run. A binary output
  /// (safetensors, .npy) over an existing file of another kind is refused
  /// too: `--save model.tx` or `--decode-out train.tsv` replaced the spec
  /// or the data. A JSON output (a tokenizer or label copy, a trace)
  /// replaces only a JSON file, and a SentencePiece model only one
  /// (`C.tokenizer.json` of a new --save, a symlink to a program, and
  /// `--profile-trace model.tx` replaced them).
  enum class Format { Text, Safetensors, Npy, Json, SentencePiece };
  Format format = Format::Text;
};

/// Throws InputError (one line per problem) when an output collides with
/// another output or with an input, is not a regular file, has no
/// directory, or is not a safetensors output but would replace a
/// safetensors file. `allowedSame` lists (output what, input what) pairs that may
/// name one file, e.g. {"--save", "--resume"}: the input is read completely
/// before the output is written.
void checkOutputPaths(
    const std::vector<NamedPath> &outputs, const std::vector<NamedPath> &inputs,
    const std::vector<std::pair<std::string, std::string>> &allowedSame = {});

/// Throws InputError (one line per directory) when a file cannot be created
/// in the existing directory of an output (permission denied, a read-only
/// file system): each directory gets a probe file, created exclusively and
/// removed at once. Outputs are written through a temporary in their
/// directory and renamed (FileIO.h), so what the directory allows is what
/// counts, not the permissions of an existing file. Missing directories
/// are checkOutputPaths' to report.
/// It also refuses an existing output that cannot be replaced
/// (whyNotReplaceable).
void checkWritableDirectories(const std::vector<NamedPath> &outputs);

/// Why the existing regular file at `path` (its symlinks resolved) cannot
/// be replaced by a rename although its directory takes new files: another
/// user's file in a sticky directory, or an immutable or append-only one;
/// nullopt when it can (or does not exist).
std::optional<std::string> whyNotReplaceable(const std::string &path);

/// Whether `a` and `b` name the same file (see the file comment).
bool sameFile(const std::string &a, const std::string &b);

} // namespace txrt::driver

#endif // TXRT_DRIVER_OUTPUTPATHS_H
