//===- OutputPaths.cpp - outputs never clobber the inputs -----------------===//
#include "cli/OutputPaths.h"
#include "core/Error.h"
#include "formats/FileIO.h"
#include "formats/Json.h"
#include "formats/Safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace txrt::driver {

namespace {

/// How a path is compared: device and inode when it exists, else its
/// canonical path (symlinks of the existing prefix resolved).
struct FileIdentity {
  bool exists = false;
  dev_t device = 0;
  ino_t inode = 0;
  std::string canonical;
};

FileIdentity identify(const std::string &path) {
  FileIdentity identity;
  struct stat info;
  if (::stat(path.c_str(), &info) == 0) {
    identity.exists = true;
    identity.device = info.st_dev;
    identity.inode = info.st_ino;
    return identity;
  }
  std::error_code error;
  std::filesystem::path canonical =
      std::filesystem::weakly_canonical(std::filesystem::absolute(path), error);
  identity.canonical =
      error ? std::filesystem::absolute(path).lexically_normal().string()
            : canonical.string();
  return identity;
}

bool same(const FileIdentity &a, const FileIdentity &b) {
  if (a.exists != b.exists)
    return false;
  if (a.exists)
    return a.device == b.device && a.inode == b.inode;
  return a.canonical == b.canonical;
}

/// What the existing file at `path` is when a binary output of `format`
/// would replace a file of another kind ("a text file", "an executable");
/// nullopt for a text output, no file, an empty one, one of `format`, or a
/// safetensors file (checkOutputPaths says that one itself).
std::optional<std::string> otherKindOfFile(const std::string &path,
                                           NamedPath::Format format) {
  std::error_code error;
  if (format == NamedPath::Format::Text ||
      !std::filesystem::is_regular_file(path, error) ||
      std::filesystem::file_size(path, error) == 0 || error ||
      looksLikeSafetensors(path))
    return std::nullopt;
  char head[512];
  size_t got = 0;
  if (FILE *file = std::fopen(path.c_str(), "rb")) {
    got = std::fread(head, 1, sizeof head, file);
    std::fclose(file);
  }
  std::string_view start(head, got);
  if (format == NamedPath::Format::Npy && start.substr(0, 6) == "\x93NUMPY")
    return std::nullopt;
  // JSON: the whole file parses (after a byte order mark), up to 256 MiB;
  // a larger one that starts as an object or array. (Its first byte alone
  // took an INI file's '[general]' for JSON.)
  if (format == NamedPath::Format::Json) {
    const bool small = std::filesystem::file_size(path, error) <= (256u << 20);
    std::string whole;
    try {
      if (small)
        whole = readWholeFile(path);
    } catch (const InputError &) {
      // Unreadable: judged by its start, as before.
    }
    std::string_view text = small ? std::string_view(whole) : start;
    if (text.substr(0, 3) == "\xEF\xBB\xBF")
      text.remove_prefix(3);
    // A larger one: its first two tokens ('[INFO]' is no JSON array). A
    // NUL is never JSON (a parse stopped there, at a JSON head before
    // binary data).
    const size_t first = text.find_first_not_of(" \t\r\n");
    const size_t second = first == std::string_view::npos
                              ? first
                              : text.find_first_not_of(" \t\r\n", first + 1);
    const bool opens =
        first != std::string_view::npos &&
        (text[first] == '{' || text[first] == '[') &&
        second != std::string_view::npos &&
        std::string_view("\"{[]}-0123456789tfn").find(text[second]) !=
            std::string_view::npos;
    if (opens && text.find('\0') == std::string_view::npos &&
        (!small || Json::accept(text)))
      return std::nullopt;
  }
  // A SentencePiece model: a protobuf ModelProto, whose first field is a
  // piece (field 1, length-delimited: byte 0x0a, a varint length), itself
  // a message whose first field is the piece's text (0x0a again). A text
  // file whose first line is blank starts with 0x0a too.
  if (format == NamedPath::Format::SentencePiece && start[0] == '\x0a') {
    // The piece's length, then its text field (0x0a) and that text's
    // length, shorter than the piece ("\n\n\nmy notes": 10, then 109).
    size_t at = 1;
    auto varint = [&]() -> uint64_t {
      uint64_t value = 0;
      for (int shift = 0; at < start.size() && shift < 35; shift += 7) {
        const unsigned char byte = static_cast<unsigned char>(start[at++]);
        value |= uint64_t(byte & 0x7f) << shift;
        if (!(byte & 0x80))
          return value;
      }
      return 0;
    };
    const uint64_t piece = varint();
    if (piece > 0 && at < start.size() && start[at] == '\x0a') {
      ++at;
      const uint64_t text = varint();
      if (text > 0 && text < piece)
        return std::nullopt;
    }
  }
  if (start.substr(0, 4) == "\x7f"
                            "ELF")
    return std::string("an executable or object file (ELF)");
  if (start.find('\0') == std::string_view::npos)
    return std::string("a text file");
  return "a file of another kind (" +
         std::to_string(std::filesystem::file_size(path, error)) + " bytes)";
}

/// What an output of `format` writes, as messages name it.
const char *formatName(NamedPath::Format format) {
  switch (format) {
  case NamedPath::Format::Npy:
    return "an .npy array";
  case NamedPath::Format::Json:
    return "a JSON file";
  case NamedPath::Format::SentencePiece:
    return "a SentencePiece model";
  default:
    return "a safetensors file";
  }
}

std::string describe(const NamedPath &named) {
  return named.what + " '" + named.path + "'";
}

/// Throws every problem in one InputError, a line each (none: returns).
void throwProblems(const std::vector<std::string> &problems) {
  if (problems.empty())
    return;
  std::string message;
  for (const std::string &problem : problems)
    message += (message.empty() ? "" : "\n") + problem;
  throw InputError(message);
}

} // namespace

void checkWritableDirectories(const std::vector<NamedPath> &outputs) {
  std::vector<std::string> directories, problems;
  for (const NamedPath &output : outputs) {
    // A symlink is written through (FileIO.h): the temporary file is made
    // beside its target, whose directory is the one to probe (a dangling
    // link into a missing directory failed after the whole run).
    const std::string target = followSymlinks(output.path);
    std::string directory =
        std::filesystem::path(target).parent_path().string();
    if (directory.empty())
      directory = ".";
    if (std::find(directories.begin(), directories.end(), directory) !=
        directories.end())
      continue;
    directories.push_back(directory);
    struct stat info;
    const bool exists = ::stat(directory.c_str(), &info) == 0;
    if (!exists || !S_ISDIR(info.st_mode)) {
      if (target != output.path)
        problems.push_back(describe(output) +
                           " cannot be written: it is a symbolic link to '" +
                           target + "', and '" + directory + "' " +
                           (exists ? "is not a directory" : "does not exist"));
      continue; // else checkOutputPaths names it
    }
    std::string probe = directory + "/.txc-write-probe.XXXXXX";
    int fd = ::mkstemp(probe.data());
    if (fd < 0) {
      problems.push_back(describe(output) +
                         " cannot be written: creating a file in '" +
                         directory + "' fails: " + std::strerror(errno));
      continue;
    }
    ::close(fd);
    // An append-only directory (chattr +a) takes new files but removes or
    // replaces none: every save's rename failed after the work.
    if (::unlink(probe.c_str()) != 0) {
      problems.push_back(describe(output) + " cannot be written: '" +
                         directory +
                         "' takes new files but lets none be removed or "
                         "replaced (" +
                         std::strerror(errno) +
                         "; an append-only directory, chattr +a?), and "
                         "outputs are written through a temporary file "
                         "renamed over them; the probe file '" +
                         probe + "' is left there");
    }
  }
  // What the directory allows may still not let an existing file be
  // replaced: the rename failed after the whole run (EPERM).
  for (const NamedPath &output : outputs)
    if (std::optional<std::string> why = whyNotReplaceable(output.path))
      problems.push_back(describe(output) + " cannot be replaced: " + *why);
  throwProblems(problems);
}

std::optional<std::string> whyNotReplaceable(const std::string &path) {
  std::string target = followSymlinks(path);
  struct stat file;
  if (::lstat(target.c_str(), &file) != 0 || !S_ISREG(file.st_mode))
    return std::nullopt;
  std::string directory = std::filesystem::path(target).parent_path().string();
  if (directory.empty())
    directory = ".";
  struct stat dir;
  const uid_t me = ::geteuid();
  // A sticky directory (/tmp, a shared scratch space): only the file's or
  // the directory's owner may rename over a file (root may anyway).
  if (::stat(directory.c_str(), &dir) == 0 && (dir.st_mode & S_ISVTX) &&
      me != 0 && file.st_uid != me && dir.st_uid != me)
    return "'" + target + "' belongs to another user (uid " +
           std::to_string(file.st_uid) + ") in '" + directory +
           "', a directory with the sticky bit, where only its owner may "
           "replace it; give another name";
  // chattr +i / +a: nobody may replace it.
  int fd = ::open(target.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd >= 0) {
    int flags = 0;
    bool got = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
    ::close(fd);
    if (got && (flags & (FS_IMMUTABLE_FL | FS_APPEND_FL)))
      return "'" + target + "' is " +
             ((flags & FS_IMMUTABLE_FL) ? "immutable" : "append-only") +
             " (chattr +" + ((flags & FS_IMMUTABLE_FL) ? "i" : "a") +
             "): nobody may replace it; give another name or lift the "
             "attribute (chattr -" +
             ((flags & FS_IMMUTABLE_FL) ? "i" : "a") + ")";
  }
  return std::nullopt;
}

bool sameFile(const std::string &a, const std::string &b) {
  return same(identify(a), identify(b));
}

void checkOutputPaths(
    const std::vector<NamedPath> &outputs, const std::vector<NamedPath> &inputs,
    const std::vector<std::pair<std::string, std::string>> &allowedSame) {
  std::vector<std::string> problems;
  auto collect = [&](auto check) {
    try {
      check();
    } catch (const InputError &error) {
      problems.push_back(error.what());
    }
  };
  std::vector<FileIdentity> outputIds, inputIds;
  std::vector<std::string> directories; // each missing one reported once
  struct LongName {
    const NamedPath *output;
    std::string name;
    size_t excess; ///< characters over the limit, the temporary's included
    long limit;
  };
  std::vector<LongName> longNames;
  // Directories that are missing or loop: their outputs' own checks
  // would repeat the problem once per side file (8 lines for one --save).
  std::vector<std::string> badDirectories;
  for (const NamedPath &output : outputs) {
    std::string directory =
        std::filesystem::path(output.path).parent_path().string();
    if (std::find(directories.begin(), directories.end(), directory) ==
        directories.end()) {
      directories.push_back(directory);
      const size_t before = problems.size();
      collect([&] { checkParentDirectory(output.path, output.what); });
      if (problems.size() != before)
        badDirectories.push_back(directory);
    }
    if (std::find(badDirectories.begin(), badDirectories.end(), directory) !=
        badDirectories.end()) {
      outputIds.push_back(identify(output.path)); // (one per output)
      continue;
    }
    collect([&] { checkReplaceable(output.path, output.what); });
    // Written through a temporary beside it (AtomicFileWriter): a name that
    // fits but whose temporary does not failed only at the write, after a
    // whole training run.
    std::string name = std::filesystem::path(output.path).filename().string();
    long nameMax =
        ::pathconf(directory.empty() ? "." : directory.c_str(), _PC_NAME_MAX);
    if (nameMax <= 0)
      nameMax = 255;
    if (name.size() + AtomicFileWriter::kTemporaryNameExtra > size_t(nameMax))
      longNames.push_back({&output, name,
                           name.size() + AtomicFileWriter::kTemporaryNameExtra -
                               size_t(nameMax),
                           nameMax});
    if (sameFile(output.path, "/proc/self/exe"))
      problems.push_back(describe(output) +
                         " is this executable itself: writing it there "
                         "would destroy the program; give another path");
    else if (std::optional<std::string> kind =
                 otherKindOfFile(output.path, output.format))
      problems.push_back(
          describe(output) + " is " + *kind + " already, not " +
          formatName(output.format) +
          ": writing it there would destroy it; give another path (or "
          "remove the file)");
    if (output.format != NamedPath::Format::Safetensors &&
        looksLikeSafetensors(output.path))
      problems.push_back(
          describe(output) +
          " is a safetensors file (a checkpoint or parameters): " +
          output.what + " writes no such file, and writing it there would "
          "destroy it; give another path");
    outputIds.push_back(identify(output.path));
  }
  for (const NamedPath &input : inputs)
    inputIds.push_back(identify(input.path));
  // One line: the outputs named after --save share its fate.
  if (!longNames.empty()) {
    const LongName &first = longNames.front();
    auto byExcess = [](const LongName &a, const LongName &b) {
      return a.excess < b.excess;
    };
    auto longest =
        std::max_element(longNames.begin() + 1, longNames.end(), byExcess);
    size_t excess =
        std::max_element(longNames.begin(), longNames.end(), byExcess)->excess;
    std::string problem =
        describe(*first.output) + " has too long a file name (" +
        std::to_string(first.name.size()) +
        " characters): outputs are written through a temporary file named "
        "NAME.tmp.<pid>.<16 hex digits>, which must fit the file system's "
        "limit of " +
        std::to_string(first.limit) + " characters a name";
    if (longNames.size() > 1)
      problem +=
          "; " + std::to_string(longNames.size() - 1) +
          " more output(s) too (the longest: " + describe(*longest->output) +
          ", " + std::to_string(longest->name.size()) + " characters)";
    problem += "; shorten the name by at least " + std::to_string(excess) +
               " characters";
    problems.push_back(problem);
  }

  for (size_t i = 0; i < outputs.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      if (same(outputIds[i], outputIds[j]))
        problems.push_back(describe(outputs[i]) + " is the same file as " +
                           describe(outputs[j]) +
                           "; each output needs its own file");
    for (size_t j = 0; j < inputs.size(); ++j) {
      bool allowed =
          std::find(allowedSame.begin(), allowedSame.end(),
                    std::make_pair(outputs[i].what, inputs[j].what)) !=
          allowedSame.end();
      if (!allowed && same(outputIds[i], inputIds[j]))
        problems.push_back(describe(outputs[i]) + " is the same file as " +
                           describe(inputs[j]) + "; writing it would destroy " +
                           "the input");
    }
  }
  throwProblems(problems);
}

} // namespace txrt::driver
