//===- InputLines.cpp - the texts of translate, generate and predict ------===//
#include "data/InputLines.h"
#include "core/Error.h"
#include "data/TabbedLines.h"
#include "data/Tokenizer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <limits>

#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace txrt::driver {

namespace {

bool stdinWasClosed = false;

/// Stdin redirected from a directory reads as empty (read fails with
/// EISDIR, which the stream takes for the end): say so instead. So is a
/// closed stdin (driverMain reopens it on /dev/null: it read as empty, exit
/// 0 with no output).
void checkStdinReadable(std::istream &in) {
  if (&in != &std::cin)
    return;
  if (stdinWasClosed)
    throw InputError("cannot read <stdin>: it is closed (give the texts one "
                     "a line on stdin, or as arguments)");
  struct stat status;
  if (fstat(STDIN_FILENO, &status) == 0 && S_ISDIR(status.st_mode))
    throw InputError("cannot read <stdin>: it is a directory (give the texts "
                     "one a line, or as arguments)");
}

} // namespace

InputLineReader::InputLineReader(std::vector<std::string> arguments,
                                 std::string label, std::istream &in, int fd)
    : arguments_(std::move(arguments)), label_(std::move(label)), in_(in),
      fd_(fd) {
  // std::cin reads through C's stdin buffer, which poll() cannot see into:
  // the process's stdin is read from its descriptor instead (nothing else
  // reads it in these commands).
  if (fd_ < 0 && &in == &std::cin)
    fd_ = STDIN_FILENO;
}

size_t InputLineReader::pendingLineEnd() {
  const size_t end =
      buffer_.find_first_of("\r\n", std::max(bufferBegin_, scanned_));
  scanned_ = end == std::string::npos ? buffer_.size() : end;
  return end;
}

void InputLineReader::skipLfAfterCr() {
  // The LF of a CRLF whose CR ended the last line (it may come in a later
  // read: waiting for it held back the answer of a client that ends its
  // lines with CR alone, which waits for the answer first).
  if (lfMayFollow_ && bufferBegin_ < buffer_.size()) {
    if (buffer_[bufferBegin_] == '\n')
      ++bufferBegin_;
    lfMayFollow_ = false;
  }
}

bool InputLineReader::readLine(std::string &line) {
  // A line ends at LF, CRLF or a lone CR, as a --text file's lines do
  // (TextCorpus.cpp): input with old Mac line ends was one line, answered
  // as one text without a word.
  for (;;) {
    skipLfAfterCr();
    size_t end = lfMayFollow_ ? std::string::npos : pendingLineEnd();
    if (end != std::string::npos) {
      line.assign(buffer_, bufferBegin_, end - bufferBegin_);
      bufferBegin_ = end + 1;
      lfMayFollow_ = buffer_[end] == '\r';
      skipLfAfterCr();
      return true;
    }
    if (atEnd_) {
      if (bufferBegin_ >= buffer_.size())
        return false;
      line.assign(buffer_, bufferBegin_, std::string::npos);
      bufferBegin_ = buffer_.size();
      return true;
    }
    readBlock();
  }
}

void InputLineReader::readBlock() {
  buffer_.erase(0, bufferBegin_);
  scanned_ = scanned_ > bufferBegin_ ? scanned_ - bufferBegin_ : 0;
  bufferBegin_ = 0;
  char block[1 << 16];
  if (fd_ < 0) {
    // An istream of the caller's (tests): what it holds, then its end.
    in_.read(block, sizeof(block));
    const std::streamsize got = in_.gcount();
    if (in_.bad())
      throw InputError(std::string("cannot read <stdin>: ") +
                       std::strerror(errno));
    if (got > 0)
      buffer_.append(block, size_t(got));
    if (!in_)
      atEnd_ = true;
    return;
  }
  ssize_t got = ::read(fd_, block, sizeof(block));
  if (got < 0 && (errno == EINTR || errno == EAGAIN))
    return; // the caller looks again
  if (got < 0)
    throw InputError(std::string("cannot read <stdin>: ") +
                     std::strerror(errno));
  if (got == 0)
    atEnd_ = true;
  else
    buffer_.append(block, size_t(got));
}

bool InputLineReader::lineWaiting() {
  if (fd_ < 0)
    return true;
  // A whole line (or the end) that reads get at once; a regular file always
  // has one. Bytes of a line whose end has not come are no line: waiting
  // for its end held back the answers to the lines before it, from a
  // client that waits for them before it writes the rest.
  for (;;) {
    skipLfAfterCr();
    if (atEnd_ || (!lfMayFollow_ && pendingLineEnd() != std::string::npos))
      return true;
    struct pollfd request = {fd_, POLLIN, 0};
    int ready;
    do
      ready = ::poll(&request, 1, 0);
    while (ready < 0 && errno == EINTR);
    if (ready == 0)
      return false;
    // Readable: this read returns at once (bytes, or 0 at the end).
    readBlock();
  }
}

namespace {
bool stdoutWasClosed = false;
} // namespace

void setStdoutWasClosed(bool closed) { stdoutWasClosed = closed; }

void setStdinWasClosed(bool closed) { stdinWasClosed = closed; }

int stdoutPipeError() {
  struct pollfd request = {STDOUT_FILENO, POLLOUT, 0};
  if (::poll(&request, 1, 0) > 0 && (request.revents & POLLERR))
    return EPIPE;
  // A file: at the file size limit (`ulimit -f`), or on a full file
  // system, the cause the write's errno said before it was lost.
  struct stat file;
  if (::fstat(STDOUT_FILENO, &file) != 0)
    return 0;
  // /dev/full (character device 1, 7): every write fails with ENOSPC.
  if (S_ISCHR(file.st_mode) && major(file.st_rdev) == 1 &&
      minor(file.st_rdev) == 7)
    return ENOSPC;
  if (S_ISREG(file.st_mode)) {
    struct rlimit limit;
    if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 &&
        limit.rlim_cur != RLIM_INFINITY &&
        uint64_t(file.st_size) >= uint64_t(limit.rlim_cur))
      return EFBIG;
    struct statvfs space;
    if (::fstatvfs(STDOUT_FILENO, &space) == 0 && space.f_bavail == 0)
      return ENOSPC;
  }
  return 0;
}

void checkAnswersWritten(std::ostream &out, const InputLines &chunk,
                         std::string &written) {
  errno = 0;
  out.flush();
  if (!out.fail()) {
    if (!chunk.where.empty())
      written = chunk.where.back();
    return;
  }
  int error = errno;
  // A write that failed before this flush (the stream's buffer went out
  // while the answers were written) left no errno here: a pipe whose
  // reader has gone (`| head -1` with SIGPIPE ignored) says so to poll.
  const bool toStdout = &out == &std::cout;
  if (!error && toStdout)
    error = stdoutPipeError();
  // A chunk's answers can fail part way (the stream's buffer went out
  // before the flush): only the chunks flushed before it are known whole.
  std::string chunkText;
  if (!chunk.where.empty())
    chunkText = chunk.where.front() +
                (chunk.where.size() > 1 ? ".." + chunk.where.back() : "");
  throw ResourceError(
      "cannot write the output" +
      (toStdout && stdoutWasClosed
           ? std::string(": stdout is closed; ")
           : (error ? ": " + std::string(std::strerror(error))
                    : std::string()) +
                 " (a closed pipe, a full disk?); ") +
      (written.empty() ? std::string("no answer is known to be written whole")
                       : "the answers through " + written + " were written") +
      (chunkText.empty() ? std::string()
                         : "; those of " + chunkText + " are missing or cut"));
}

bool InputLineReader::next(InputLines &chunk, size_t maxLines,
                           ProblemList *callersProblems) {
  chunk.lines.clear();
  chunk.where.clear();
  chunk.bad.clear();
  textsBefore_ = textsRead_;
  maxLines = std::max<size_t>(maxLines, 1);
  const bool fromArguments = !arguments_.empty();
  if (fromArguments) {
    for (size_t i = textsRead_;
         i < arguments_.size() && chunk.lines.size() < maxLines; ++i) {
      chunk.lines.push_back(arguments_[i]);
      chunk.where.push_back(label_ + " " + std::to_string(i + 1));
    }
  } else {
    if (!started_)
      checkStdinReadable(in_);
    std::string line;
    while (chunk.lines.size() < maxLines &&
           (chunk.lines.empty() || lineWaiting()) && readLine(line)) {
      // A UTF-8 byte order mark (Windows editors write one) is no text.
      if (textsRead_ + chunk.lines.size() == 0 &&
          line.compare(0, kUtf8ByteOrderMark.size(), kUtf8ByteOrderMark) == 0)
        line.erase(0, kUtf8ByteOrderMark.size());
      chunk.lines.push_back(std::move(line));
      chunk.where.push_back("<stdin>:" +
                            std::to_string(textsRead_ + chunk.lines.size()));
    }
  }
  started_ = true;
  // Every bad line, as train and eval list theirs.
  ProblemList ownProblems;
  ProblemList &problems = callersProblems ? *callersProblems : ownProblems;
  chunk.bad.assign(chunk.lines.size(), false);
  for (size_t i = 0; i < chunk.lines.size(); ++i)
    if (std::string problem =
            textProblem(chunk.lines[i], !fromArguments && textsRead_ + i == 0,
                        fromArguments ? "text" : "line");
        !problem.empty()) {
      problems.add(chunk.where[i] + ": " + problem + " (texts must be UTF-8)");
      chunk.bad[i] = true;
    }
  textsRead_ += chunk.lines.size();
  ownProblems.throwIfAny(label_ + "s that are not UTF-8 text");
  return !chunk.lines.empty();
}

InputLines readInputLines(const std::vector<std::string> &arguments,
                          const std::string &label, std::istream &in) {
  InputLineReader reader(arguments, label, in);
  InputLines input, chunk;
  while (reader.next(chunk, std::numeric_limits<size_t>::max()))
    for (size_t i = 0; i < chunk.lines.size(); ++i) {
      input.lines.push_back(std::move(chunk.lines[i]));
      input.where.push_back(std::move(chunk.where[i]));
    }
  return input;
}

std::string asOneLine(std::string text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == 0 ||
        (c >= 0x1c && c <= 0x1e)) {
      out += ' ';
    } else if (c == 0xC2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) == 0x85) {
      out += ' '; // U+0085 NEXT LINE
      ++i;
    } else if (c == 0xE2 && i + 2 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(text[i + 2]) == 0xA8 ||
                static_cast<unsigned char>(text[i + 2]) == 0xA9)) {
      out += ' '; // U+2028 LINE / U+2029 PARAGRAPH SEPARATOR
      i += 2;
    } else {
      out += char(c);
    }
  }
  return out;
}

void noteTabbedLine(const InputLines &chunk, bool &noted, std::ostream &err,
                    const std::string &asWhat, const std::string &hint) {
  if (noted)
    return;
  // A tab between words on both sides: a line of only tabs and spaces has
  // no words (an empty answer), and was named in place of the TSV line.
  auto separatesWords = [](const std::string &line) {
    const size_t first = line.find_first_not_of(" \t");
    return first != std::string::npos &&
           line.find('\t', first) < line.find_last_not_of(" \t");
  };
  // Only of text: a 0x09 byte in gzip data is no tab, and the line's own
  // error (decompress it) says what is wrong.
  for (size_t i = 0; i < chunk.lines.size(); ++i)
    if (separatesWords(chunk.lines[i]) &&
        textProblem(chunk.lines[i], false).empty()) {
      noted = true;
      err << "note: " << chunk.where[i]
          << " holds a tab (a line of a TSV file?): each whole line is "
          << asWhat << "; " << hint << "\n";
      return;
    }
}

} // namespace txrt::driver
