//===- TabbedLinesTest.cpp - 'left<TAB>right' lines from text and files ---===//
#include "data/TabbedLines.h"
#include "core/Error.h"
#include "core/Init.h"
#include "TestUtil.h"

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

std::vector<std::string> visitAll(std::string_view content, ProblemList &problems) {
  std::vector<std::string> seen;
  forEachTabbedLine(content, "d.tsv", {"source", "target"}, problems,
                    [&](const TabbedLine &line) {
                      seen.push_back(std::to_string(line.number) + ":" +
                                     std::string(line.left) + "|" +
                                     std::string(line.right));
                    });
  return seen;
}

// Old Mac line ends (CR alone): the whole file is one line, reported as
// "more than one tab" with nothing to say why.
TEST(TabbedLinesTest, CarriageReturnLineEndsAreNamed) {
  ProblemList problems;
  std::vector<std::string> seen = visitAll("a\tb\rc\td\re\tf\r", problems);
  EXPECT_TRUE(seen.empty());
  EXPECT_THROW_MESSAGE(
      problems.throwIfAny("bad lines"), InputError,
      "d.tsv:1: more than one tab (expected 'source<TAB>target'); the line "
      "holds 2 carriage return(s) ('\\r'): a file with CR line ends (old "
      "Mac style) reads as one line; convert them to LF (tr '\\r' '\\n')");
}

TEST(TabbedLinesTest, GoodLinesAreVisitedAndBadOnesNamed) {
  ProblemList problems;
  std::vector<std::string> seen = visitAll(
      "a b\tc\r\n\nno tab\nx\ty\tz\n\xff\tq\nlast\tline", problems);
  EXPECT_EQ(seen, (std::vector<std::string>{"1:a b|c", "6:last|line"}));
  EXPECT_EQ(problems.count(), 4u);
  EXPECT_THROW_MESSAGE(
      problems.throwIfAny("bad lines"), InputError,
      "d.tsv:2: empty line (expected 'source<TAB>target')\n"
      "d.tsv:3: no tab between source and target (expected "
      "'source<TAB>target')\n"
      "d.tsv:4: more than one tab (expected 'source<TAB>target')\n"
      "d.tsv:5: invalid UTF-8 at byte 1 of the line (the data must be UTF-8 "
      "text)");
}

TEST(TabbedLinesTest, BlankLinesAtTheEndAreSkipped) {
  // An editor's or a script's trailing newlines (and a last line of only
  // spaces, or a CRLF blank) are no data; before, each was an error.
  for (const char *tail : {"\n", "\n\n", "\r\n\r\n", "\n  \n  ", "\n \r\n"}) {
    ProblemList problems;
    std::vector<std::string> seen =
        visitAll(std::string("a\tb\nc\td") + tail, problems);
    EXPECT_EQ(seen, (std::vector<std::string>{"1:a|b", "2:c|d"})) << tail;
    EXPECT_EQ(problems.count(), 0u) << tail;
  }
  // From a file too, with the blank lines crossing nothing special.
  ScratchDir dir;
  std::string path = dir.file("t.tsv");
  writeFile(path, "a\tb\n\n\n");
  ProblemList problems;
  int visited = 0;
  forEachTabbedLineInFile(path, {"source", "target"}, problems,
                          [&](const TabbedLine &) { ++visited; });
  EXPECT_EQ(visited, 1);
  EXPECT_EQ(problems.count(), 0u);
}

TEST(TabbedLinesTest, ALineOfATabAtTheEndIsAPairWithBlankSides) {
  // An error in the middle of a file, it was dropped without a word at the
  // end.
  ProblemList problems;
  std::vector<std::string> seen = visitAll("a\tb\n \t \n\n", problems);
  EXPECT_EQ(seen, (std::vector<std::string>{"1:a|b"}));
  EXPECT_THROW_MESSAGE(problems.throwIfAny("bad lines"), InputError,
                       "d.tsv:2: both sides are blank (expected "
                       "'source<TAB>target')");
}

TEST(TabbedLinesTest, BlankLinesBeforeMoreDataAreEachNamed) {
  ProblemList problems;
  std::vector<std::string> seen =
      visitAll("a\tb\n\n \n  \t \nc\td\n\n", problems);
  EXPECT_EQ(seen, (std::vector<std::string>{"1:a|b", "5:c|d"}));
  // A blank line with its tab is named for its blank sides ("empty line"
  // said a line that holds a tab was empty).
  EXPECT_THROW_MESSAGE(
      problems.throwIfAny("bad lines"), InputError,
      "d.tsv:2: empty line (expected 'source<TAB>target')\n"
      "d.tsv:3: a line of only blanks (expected 'source<TAB>target')\n"
      "d.tsv:4: both sides are blank (expected 'source<TAB>target')");
}

// One side of a corpus kept as two files (fairseq's train.en): every line
// was "no tab" and nothing said what the data should be.
TEST(TabbedLinesTest, AFileWithNoTabSaysHowToJoinTwoFiles) {
  ProblemList problems;
  visitAll("a b\nc d\n", problems);
  EXPECT_THROW_MESSAGE(
      problems.throwIfAny("bad lines"), InputError,
      "d.tsv:2: no tab between source and target",
      "\nnote: no line of 'd.tsv' holds a tab: the data is one file of "
      "'source<TAB>target' lines; one kept as two files (one source a line, "
      "one target a line) becomes one with `paste FILE_OF_SOURCES "
      "FILE_OF_TARGETS > NEW_FILE.tsv`");
  // A file with tabs elsewhere has only its bad lines named.
  ProblemList some;
  visitAll("a\tb\nc d\n", some);
  try {
    some.throwIfAny("bad lines");
    ADD_FAILURE() << "no error";
  } catch (const InputError &error) {
    EXPECT_EQ(std::string(error.what()).find("note:"), std::string::npos)
        << error.what();
  }
}

TEST(TabbedLinesTest, Utf16FileIsNamedOnItsFirstLine) {
  // What Windows PowerShell's `>` writes: UTF-16LE with a byte order mark.
  // Before, only the first and last lines were refused; the others (NUL
  // bytes between ASCII ones) passed as pairs of NUL-riddled words.
  std::string utf16;
  for (char c : std::string("a b\tc\nd\te\n")) {
    utf16 += c;
    utf16 += '\0';
  }
  ProblemList problems;
  std::vector<std::string> seen = visitAll("\xff\xfe" + utf16, problems);
  EXPECT_TRUE(seen.empty());
  EXPECT_THROW_MESSAGE(
      problems.throwIfAny("bad lines"), InputError,
      "d.tsv:1: invalid UTF-8 at byte 1 of the line: it starts with a UTF-16 "
      "byte order mark; save it as UTF-8 (the data must be UTF-8 text)\n"
      "d.tsv:2: a NUL byte at byte 1 of the line: is it a binary or UTF-16 "
      "file? (the data must be UTF-8 text)");
}

TEST(TabbedLinesTest, AFileReadInBlocksGivesTheSameLinesAndHash) {
  // Lines of every length up to past the 1 MiB block, so that lines cross
  // block boundaries; no final newline.
  std::string content;
  for (int i = 0; content.size() < (size_t(5) << 20); ++i)
    content += std::string(size_t(1 + (i * 7919) % 300000), 'a') + "\tt" +
               std::to_string(i) + (i % 3 ? "\n" : "\r\n");
  content += "end\tend";
  ScratchDir dir;
  std::string path = dir.file("big.tsv");
  writeFile(path, content);

  ProblemList fromText, fromFile;
  std::vector<std::string> expected = visitAll(content, fromText);
  std::vector<std::string> seen;
  uint64_t hash = forEachTabbedLineInFile(
      path, {"source", "target"}, fromFile, [&](const TabbedLine &line) {
        seen.push_back(std::to_string(line.number) + ":" +
                       std::string(line.left) + "|" + std::string(line.right));
      });
  EXPECT_EQ(fromFile.count(), 0u);
  EXPECT_EQ(seen.size(), expected.size());
  EXPECT_TRUE(seen == expected);
  EXPECT_EQ(hash, fnv1a64(content));
}

TEST(TabbedLinesTest, AMissingFileIsAnInputError) {
  ProblemList problems;
  EXPECT_THROW(forEachTabbedLineInFile("/nonexistent/x.tsv", {"a", "b"},
                                       problems, [](const TabbedLine &) {}),
               InputError);
}

} // namespace
