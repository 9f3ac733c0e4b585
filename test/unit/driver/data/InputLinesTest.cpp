//===- InputLinesTest.cpp - texts from arguments or stdin -----------------===//
#include "data/InputLines.h"
#include "TestUtil.h"
#include "core/Error.h"

#include <sstream>

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

} // namespace
