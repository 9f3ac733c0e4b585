//===- InputLinesTest.cpp - texts from arguments or stdin -----------------===//
#include "data/InputLines.h"
#include "TestUtil.h"
#include "core/Error.h"

#include <chrono>
#include <future>
#include <sstream>

#include <unistd.h>

using namespace txrt::driver;

namespace {

InputLines fromStdin(const std::string &text) {
  std::istringstream in(text);
  return readInputLines({}, "sentence", in);
}

TEST(InputLinesTest, ArgumentsComeFirstAndAreNamedByLabel) {
  std::istringstream in("ignored\n");
  InputLines input = readInputLines({"a b", "c"}, "prompt", in);
  EXPECT_EQ(input.lines, (std::vector<std::string>{"a b", "c"}));
  EXPECT_EQ(input.where, (std::vector<std::string>{"prompt 1", "prompt 2"}));
}

TEST(InputLinesTest, StdinLinesDropTheByteOrderMarkAndCarriageReturns) {
  // Before, the mark stayed on the first word ([UNK] for a word tokenizer),
  // so a file saved by a Windows editor translated its first line wrongly.
  InputLines input = fromStdin("\xEF\xBB\xBFyou eat cake\r\n\r\nlast");
  EXPECT_EQ(input.lines,
            (std::vector<std::string>{"you eat cake", "", "last"}));
  EXPECT_EQ(input.where,
            (std::vector<std::string>{"<stdin>:1", "<stdin>:2", "<stdin>:3"}));
  // Only at the start of the stream.
  EXPECT_EQ(fromStdin("a\n\xEF\xBB\xBF"
                      "b\n")
                .lines[1],
            "\xEF\xBB\xBF"
            "b");
  EXPECT_TRUE(fromStdin("").lines.empty());
}

TEST(InputLinesTest, ALoneCarriageReturnEndsALine) {
  // As a --text file's lines end (TextCorpus.cpp): input with old Mac line
  // ends was one line, translated or classified as one text without a
  // word.
  InputLines input = fromStdin("i love you\rwe see\r\rlast\r");
  EXPECT_EQ(input.lines,
            (std::vector<std::string>{"i love you", "we see", "", "last"}));
  EXPECT_EQ(input.where.back(), "<stdin>:4");
  EXPECT_EQ(fromStdin("a\r\nb\n\rc").lines,
            (std::vector<std::string>{"a", "b", "", "c"}));
}

TEST(InputLinesTest, ALineEndingAtCrIsAnsweredAtOnceAndItsLfSkipped) {
  // A client that ends its lines with CR alone and waits for each answer
  // hung: the reader held a CR at the end of what was read until the next
  // byte, which the client sends only after the answer. The line ends at
  // the CR; an LF that follows it (a CRLF split across reads) is skipped.
  int pipeEnds[2];
  ASSERT_EQ(::pipe(pipeEnds), 0);
  std::istringstream unused;
  InputLineReader reader({}, "sentence", unused, pipeEnds[0]);
  ASSERT_EQ(::write(pipeEnds[1], "a\r", 2), 2);
  auto first = std::async(std::launch::async, [&] {
    InputLines chunk;
    reader.next(chunk, 100);
    return chunk.lines;
  });
  bool answered =
      first.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  if (!answered)
    ASSERT_EQ(::write(pipeEnds[1], "x\n", 2), 2); // unblock it, then fail
  EXPECT_TRUE(answered) << "the reader waited for the byte after the CR";
  EXPECT_EQ(first.get(), (std::vector<std::string>{"a"}));
  ASSERT_EQ(::write(pipeEnds[1], "\nb\r\n", 4), 4);
  ::close(pipeEnds[1]);
  InputLines chunk;
  ASSERT_TRUE(reader.next(chunk, 100));
  EXPECT_EQ(chunk.lines, (std::vector<std::string>{"b"}));
  EXPECT_EQ(chunk.where, (std::vector<std::string>{"<stdin>:2"}));
  EXPECT_FALSE(reader.next(chunk, 100));
  ::close(pipeEnds[0]);
}

TEST(InputLinesTest, InvalidUtf8IsAnErrorNamingTheText) {
  EXPECT_THROW_MESSAGE(fromStdin("fine\ni \xFF love\n"), InputError,
                       "<stdin>:2: invalid UTF-8 at byte 3 of the line "
                       "(texts must be UTF-8)");
  std::istringstream in;
  EXPECT_THROW_MESSAGE(readInputLines({"ok", "a\xC3"}, "text", in), InputError,
                       "text 2: invalid UTF-8 at byte 2 of the text (texts "
                       "must be UTF-8)");
  // Every bad line, not the first alone.
  EXPECT_THROW_MESSAGE(fromStdin("\xFF\nfine\nb\xC3\n"), InputError,
                       "<stdin>:1: invalid UTF-8 at byte 1 of the line (texts "
                       "must be UTF-8)\n<stdin>:3: invalid UTF-8 at byte 2 of "
                       "the line (texts must be UTF-8)");
}

TEST(InputLinesTest, ChunksAreNumberedOnAndCheckedOneByOne) {
  std::istringstream in("\xEF\xBB\xBF"
                        "a\nb\nc\n\xEF\xBB\xBF"
                        "d\nbad \xFF\n");
  InputLineReader reader({}, "sentence", in);
  InputLines chunk;
  ASSERT_TRUE(reader.next(chunk, 2));
  EXPECT_EQ(chunk.lines, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(reader.textsBefore(), 0u);
  // The mark is dropped at the start of the stream only.
  ASSERT_TRUE(reader.next(chunk, 2));
  EXPECT_EQ(chunk.lines, (std::vector<std::string>{"c", "\xEF\xBB\xBF"
                                                        "d"}));
  EXPECT_EQ(chunk.where, (std::vector<std::string>{"<stdin>:3", "<stdin>:4"}));
  EXPECT_EQ(reader.textsBefore(), 2u);
  // A bad line is named by its number in the whole input.
  EXPECT_THROW_MESSAGE(reader.next(chunk, 2), InputError,
                       "<stdin>:5: invalid UTF-8 at byte 5 of the line");
  EXPECT_FALSE(reader.next(chunk, 2));
  EXPECT_TRUE(chunk.lines.empty());
}

TEST(InputLinesTest, AnUnfinishedLineDoesNotHoldBackTheWholeOnes) {
  // Bytes of a line whose end has not come were taken for a line waiting:
  // the reader blocked for its end and held back the answers to the lines
  // before it (a client that waits for them before it writes the rest
  // hung).
  int pipeEnds[2];
  ASSERT_EQ(::pipe(pipeEnds), 0);
  std::istringstream unused;
  InputLineReader reader({}, "sentence", unused, pipeEnds[0]);
  ASSERT_EQ(::write(pipeEnds[1], "a\nb\n", 4), 4);
  InputLines chunk;
  ASSERT_TRUE(reader.next(chunk, 1)); // reads both lines, takes "a"
  EXPECT_EQ(chunk.lines, (std::vector<std::string>{"a"}));
  ASSERT_EQ(::write(pipeEnds[1], "unfin", 5), 5); // unread when "b" is taken
  auto next = std::async(std::launch::async, [&] {
    InputLines second;
    reader.next(second, 100);
    return second.lines;
  });
  bool answered =
      next.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  if (!answered)
    ASSERT_EQ(::write(pipeEnds[1], "\n", 1), 1); // unblock it, then fail
  EXPECT_TRUE(answered) << "the reader waited for the end of 'unfin'";
  EXPECT_EQ(next.get(), (std::vector<std::string>{"b"}));
  ASSERT_EQ(::write(pipeEnds[1], "ished\n", 6), 6);
  ::close(pipeEnds[1]);
  ASSERT_TRUE(reader.next(chunk, 100));
  EXPECT_EQ(chunk.lines, (std::vector<std::string>{"unfinished"}));
  EXPECT_EQ(chunk.where, (std::vector<std::string>{"<stdin>:3"}));
  EXPECT_FALSE(reader.next(chunk, 100));
  ::close(pipeEnds[0]);
}

TEST(InputLinesTest, ALongLineReadBlockByBlockIsWholeAndEndsWhereItEnds) {
  // A line longer than many reads (16 MB took 10 s: each block rescanned it
  // from its start for its end). Its end, a CR that comes in a later read
  // with its LF, and the next line are found where they are.
  const std::string longLine(5 * 65536 + 123, 'y');
  const std::string text = longLine + "\r\nnext\n" + longLine;
  std::istringstream in(text);
  InputLines input = readInputLines({}, "sentence", in);
  ASSERT_EQ(input.lines.size(), 3u);
  EXPECT_EQ(input.lines[0], longLine);
  EXPECT_EQ(input.lines[1], "next");
  EXPECT_EQ(input.lines[2], longLine);
  // Through a descriptor, in pieces that split the line anywhere.
  int pipeEnds[2];
  ASSERT_EQ(::pipe(pipeEnds), 0);
  std::istringstream unused;
  InputLineReader reader({}, "sentence", unused, pipeEnds[0]);
  auto writer = std::async(std::launch::async, [&] {
    for (size_t at = 0; at < text.size(); at += 40000)
      if (::write(pipeEnds[1], text.data() + at,
                  std::min<size_t>(40000, text.size() - at)) < 0)
        break;
    ::close(pipeEnds[1]);
  });
  std::vector<std::string> lines;
  for (InputLines chunk; reader.next(chunk, 1);)
    lines.push_back(chunk.lines.at(0));
  writer.get();
  ::close(pipeEnds[0]);
  EXPECT_EQ(lines, input.lines);
}

TEST(InputLinesTest, ArgumentsComeInChunksToo) {
  std::istringstream in("ignored\n");
  InputLineReader reader({"a", "b", "c"}, "prompt", in);
  InputLines chunk;
  ASSERT_TRUE(reader.next(chunk, 2));
  EXPECT_EQ(chunk.where, (std::vector<std::string>{"prompt 1", "prompt 2"}));
  ASSERT_TRUE(reader.next(chunk, 2));
  EXPECT_EQ(chunk.lines, (std::vector<std::string>{"c"}));
  EXPECT_EQ(chunk.where, (std::vector<std::string>{"prompt 3"}));
  EXPECT_EQ(reader.textsBefore(), 2u);
  EXPECT_FALSE(reader.next(chunk, 2));
}

} // namespace

namespace {

// A subword model with byte fallback generates any byte: an answer with a
// newline gave two output lines, shifting every later answer by one.
TEST(InputLinesTest, AnAnswerIsOneLine) {
  using txrt::driver::asOneLine;
  EXPECT_EQ(asOneLine("a\nb\rc\vd\fe"), "a b c d e");
  EXPECT_EQ(asOneLine(std::string("x\0y", 3)), "x y");
  EXPECT_EQ(asOneLine("p\x1cq\x1dr\x1es"), "p q r s");
  EXPECT_EQ(asOneLine("u\xC2\x85v\xE2\x80\xA8w\xE2\x80\xA9z"), "u v w z");
  // Tabs, other characters and other multi-byte ones stay as they are.
  EXPECT_EQ(asOneLine("t\tu \xC3\xB1 \xE2\x80\x94 \xF0\x9F\x98\x80"),
            "t\tu \xC3\xB1 \xE2\x80\x94 \xF0\x9F\x98\x80");
}

} // namespace
