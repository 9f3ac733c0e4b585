//===- InputLines.h - the texts of translate, generate and predict -*- C++
//-*-===//
//
// The inference commands take their texts from the command line or, with
// none there, one a line from stdin. Lines from stdin are read like a text
// file (TextCorpus.h): a line ends at LF, CRLF or a lone CR (old Mac line
// ends), a UTF-8 byte order mark at the start is dropped, and every text
// must be UTF-8.
// Each text keeps where it came from ("sentence 2", "<stdin>:7") for errors.
//
// InputLineReader hands the texts over a chunk at a time, so that the
// commands answer while their input still arrives: a program that writes a
// line to the pipe and waits for its answer gets it, and a file of a million
// lines is not held whole.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_INPUTLINES_H
#define TXRT_DRIVER_INPUTLINES_H

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace txrt::driver {

struct InputLines {
  std::vector<std::string> lines;
  std::vector<std::string> where; ///< "LABEL N" or "<stdin>:N", per line
  /// Per line: not UTF-8 text (InputLineReader::next given a ProblemList,
  /// which names it).
  std::vector<bool> bad;
};

class ProblemList;

/// A note on `err`, once per command (`noted`), when a line of `chunk`
/// holds a tab: a line of a TSV file read as one text (`translate <
/// test.tsv` translated each "source<TAB>target" line whole). `asWhat`
/// says what the line becomes ("translated as one sentence"), `hint` how
/// to give the texts alone ("`cut -f1 FILE.tsv` gives the sources").
void noteTabbedLine(const InputLines &chunk, bool &noted, std::ostream &err,
                    const std::string &asWhat, const std::string &hint);

/// The texts of an inference command, a chunk at a time. A chunk ends at
/// `maxLines` texts, at the end of the input, or, when the input is the
/// process's stdin, where no further line is waiting to be read (the
/// writer waits for the answers before it writes more): a file or a fast
/// pipe gives full chunks, a terminal or an interactive pipe a line or a
/// few. Each chunk is checked as readInputLines checks the whole input.
class InputLineReader {
public:
  /// Reads `in`; the process's stdin (std::cin) from its descriptor, and so
  /// does a `fd` given (tests: a pipe).
  InputLineReader(std::vector<std::string> arguments, std::string label,
                  std::istream &in, int fd = -1);
  InputLineReader(const InputLineReader &) = delete;
  InputLineReader &operator=(const InputLineReader &) = delete;

  /// The next chunk, its texts numbered on from the last chunk's; false (and
  /// an empty `chunk`) at the end. Throws InputError as readInputLines does,
  /// naming the chunk's bad lines.
  /// With `problems`, a line that is not UTF-8 is added there and marked
  /// in `chunk.bad` instead of thrown, so that the caller names it with
  /// its own problems of the chunk (a too-long sentence).
  bool next(InputLines &chunk, size_t maxLines,
            ProblemList *problems = nullptr);

  /// How many texts the earlier chunks held: the index of the next chunk's
  /// first text in the whole input.
  size_t textsBefore() const { return textsBefore_; }

  /// The texts a chunk holds at most for a command that runs `batch` rows
  /// at a time: 64 batches (sorting by length works within a chunk).
  static size_t chunkLines(int64_t batch) {
    return size_t(batch < 1 ? 1 : batch) * 64;
  }

private:
  bool readLine(std::string &line);
  bool lineWaiting();
  /// Drops the LF of a CRLF whose CR ended the last line, once the byte
  /// after the CR has been read (lfMayFollow_).
  void skipLfAfterCr();
  /// One read() of fd_ into the buffer: bytes, or the end (atEnd_);
  /// nothing when interrupted.
  void readBlock();
  /// Where the line that starts at bufferBegin_ ends (its '\n' or '\r'),
  /// npos while it has not: scanned from scanned_ on, so a long line read
  /// block by block is scanned once (a 16 MB line took 10 s, rescanned
  /// from its start after each block).
  size_t pendingLineEnd();

  std::vector<std::string> arguments_;
  std::string label_;
  std::istream &in_;
  int fd_ = -1;        ///< stdin's descriptor, read directly (see next())
  std::string buffer_; ///< bytes read from fd_, from bufferBegin_ on unread
  size_t bufferBegin_ = 0;
  /// buffer_ holds no line end in [bufferBegin_, scanned_).
  size_t scanned_ = 0;
  bool atEnd_ = false; ///< fd_ has no more bytes
  /// The last line ended at a CR whose next byte was not read yet: an LF
  /// there is that line end's.
  bool lfMayFollow_ = false;
  bool started_ = false;
  size_t textsRead_ = 0;
  size_t textsBefore_ = 0;
};

/// `text` as one output line: what would end or split a line for a reader
/// of the answers (line feed, carriage return, vertical tab, form feed,
/// the file/group/record separators, NUL, U+0085, U+2028, U+2029) becomes
/// a space. A subword model with byte fallback can generate any byte: an
/// answer with a newline shifted every later answer by a line.
std::string asOneLine(std::string text);

/// Whether the process started with stdout closed (driverMain reopens it
/// on /dev/full, whose writes fail as "No space left on device": the error
/// says "stdout is closed" instead).
void setStdoutWasClosed(bool closed);
/// Whether the process started with stdin closed (reopened on /dev/null):
/// a command that reads its texts from stdin says so.
void setStdinWasClosed(bool closed);

/// EPIPE when stdout is a pipe whose reader has gone (poll says POLLERR),
/// else 0: the cause of a failed write whose errno is lost (the stream's
/// buffer went out before the failure was seen).
int stdoutPipeError();

/// Flushes `out` after the answers of `chunk`; a write that failed (a
/// closed pipe whose reader is gone, a full disk) is a ResourceError at
/// once (the command went on reading and answering all its input into the
/// void), naming the last text whose answers are known whole (`written`:
/// the last chunk flushed, "<stdin>:64", kept up to date here) and the
/// chunk whose answers are missing or cut (it said that chunk's answers
/// were the last written, of a write to /dev/full that wrote nothing).
void checkAnswersWritten(std::ostream &out, const InputLines &chunk,
                         std::string &written);

/// Every text at once (InputLineReader with no chunk limit).
/// `arguments` when there are any (each named "`label` N"), else the lines
/// of `in`. Throws InputError naming the text on invalid UTF-8 ("<stdin>:3:
/// invalid UTF-8 at byte 5 of the line"), and when `in` cannot be read
/// (stdin redirected from a directory).
InputLines readInputLines(const std::vector<std::string> &arguments,
                          const std::string &label, std::istream &in);

} // namespace txrt::driver

#endif // TXRT_DRIVER_INPUTLINES_H
