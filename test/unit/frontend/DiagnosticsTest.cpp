//===- DiagnosticsTest.cpp - source files, formatting, closestMatch -------===//
//
// The exact text of formatted diagnostics (header, source line, caret under
// the column, hint), severities, line-0 diagnostics, and the edit-distance
// suggestions.
//
//===----------------------------------------------------------------------===//

#include "FrontendTestUtil.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace txc;

namespace {

TEST(DiagnosticsTest, SourceFileLines) {
  SourceFile file("a.tx", "first\r\nsecond\n\nlast");
  EXPECT_EQ(file.getName(), "a.tx");
  EXPECT_EQ(file.getLine(1), "first");
  EXPECT_EQ(file.getLine(2), "second");
  EXPECT_EQ(file.getLine(3), "");
  EXPECT_EQ(file.getLine(4), "last");
  EXPECT_EQ(file.getLine(5), "");
  EXPECT_EQ(file.getLine(0), "");
  SourceFile empty("e.tx", "");
  EXPECT_EQ(empty.getLine(1), "");
}

TEST(DiagnosticsTest, ErrorWithHint) {
  SourceFile file(
      "model.tx",
      "def f(x) {\n  x = linear(x, d_modl) as W_q\n  return x\n}\n");
  DiagnosticEngine diags(file);
  diags.error({2, 17}, "unknown name 'd_modl'", "did you mean 'd_model'?");
  EXPECT_EQ(diags.format(diags.getDiagnostics()[0]),
            "model.tx:2:17: error: unknown name 'd_modl'\n"
            "  x = linear(x, d_modl) as W_q\n"
            "                ^\n"
            "hint: did you mean 'd_model'?\n");
  EXPECT_EQ(diags.getNumErrors(), 1u);
  EXPECT_TRUE(diags.hasErrors());
  EXPECT_EQ(&diags.getFile(), &file);
}

// A line with bytes that are not UTF-8 (a Latin-1 or binary file) or
// control characters was echoed raw to the terminal: each such byte is '?'
// (one for one, the caret stays under its column); valid UTF-8 is kept.
TEST(DiagnosticsTest, SourceLinesShowOnlyPrintableText) {
  SourceFile file("b.tx", "y = x \xff\x1b[2J z # caf\xc3\xa9\n");
  DiagnosticEngine diags(file);
  diags.error({1, 7}, "invalid UTF-8 byte 0xFF");
  EXPECT_EQ(diags.format(diags.getDiagnostics()[0]),
            "b.tx:1:7: error: invalid UTF-8 byte 0xFF\n"
            "y = x ??[2J z # caf\xc3\xa9\n"
            "      ^\n");
}

TEST(DiagnosticsTest, WarningNoteAndOrder) {
  SourceFile file("m.tx", "model a\nmodel b\n");
  DiagnosticEngine diags(file);
  diags.warning({2, 7}, "shadowed", "rename it");
  diags.note({1, 1}, "first here");
  EXPECT_EQ(diags.getNumErrors(), 0u);
  EXPECT_FALSE(diags.hasErrors());
  std::ostringstream os;
  diags.print(os);
  EXPECT_EQ(os.str(), "m.tx:2:7: warning: shadowed\n"
                      "model b\n"
                      "      ^\n"
                      "hint: rename it\n"
                      "m.tx:1:1: note: first here\n"
                      "model a\n"
                      "^\n");
  EXPECT_EQ(diags.getDiagnostics()[0].severity, Severity::Warning);
  EXPECT_EQ(diags.getDiagnostics()[1].severity, Severity::Note);
}

TEST(DiagnosticsTest, IdenticalDiagnosticsArePrintedOnce) {
  SourceFile file("m.tx", "a\nb\n");
  DiagnosticEngine diags(file);
  // A def inlined by two entries reports its error twice, with its note.
  for (int call = 0; call < 2; ++call) {
    diags.error({1, 1}, "bad", "fix it");
    diags.note({2, 1}, "declared here");
  }
  diags.error({1, 1}, "bad", "another hint"); // a different diagnostic
  diags.error({2, 1}, "bad", "fix it");       // another place
  diags.warning({1, 1}, "bad", "fix it");     // another severity
  diags.warning({1, 1}, "bad", "fix it");
  diags.note({2, 1}, "belongs to the dropped warning");
  ASSERT_EQ(diags.getDiagnostics().size(), 5u);
  EXPECT_EQ(diags.getDiagnostics()[1].message, "declared here");
  EXPECT_EQ(diags.getDiagnostics()[2].hint, "another hint");
  EXPECT_EQ(diags.getDiagnostics()[4].severity, Severity::Warning);
  EXPECT_EQ(diags.getNumErrors(), 3u);
  EXPECT_EQ(diags.getNumErrorReports(), 4u);
}

TEST(DiagnosticsTest, LongLinesAreShownAroundTheCaret) {
  std::string line = "config a = 1";
  for (int i = 0; i < 1000; ++i)
    line += ", b" + std::to_string(i) + " = 1";
  SourceFile file("m.tx", line + "\n");
  DiagnosticEngine diags(file);
  uint32_t col = static_cast<uint32_t>(line.find("b500")) + 1;
  diags.error({1, col}, "here");
  std::string text = diags.format(diags.getDiagnostics()[0]);
  // "...", 160 bytes of the line from 80 before the caret, "...".
  std::string shown = line.substr(col - 1 - 80, 160);
  EXPECT_EQ(text, "m.tx:1:" + std::to_string(col) + ": error: here\n..." +
                      shown + "...\n" + std::string(3 + 80, ' ') + "^\n");
}

TEST(DiagnosticsTest, ErrorsPastTheLimitAreCountedNotKept) {
  SourceFile file("m.tx", "a\n");
  DiagnosticEngine diags(file);
  for (unsigned i = 0; i < kMaxErrors + 5; ++i) {
    EXPECT_EQ(diags.isFull(), i >= kMaxErrors);
    diags.error({1, 1}, "error " + std::to_string(i));
    diags.note({1, 1}, "its note");
  }
  EXPECT_EQ(diags.getNumErrors(), kMaxErrors + 5);
  EXPECT_EQ(diags.getDiagnostics().size(), 2u * kMaxErrors);
  std::ostringstream os;
  diags.print(os);
  EXPECT_NE(os.str().find("note: 5 more errors not shown (txc shows the "
                          "first 100)\n"),
            std::string::npos);
}

TEST(DiagnosticsTest, LineZeroHasNoSourceLine) {
  SourceFile file("m.tx", "config d_model = 1\n");
  DiagnosticEngine diags(file);
  diags.error({0, 0}, "-D d_modle=128: no config value named 'd_modle'",
              "did you mean 'd_model'?");
  EXPECT_EQ(diags.format(diags.getDiagnostics()[0]),
            "error: -D d_modle=128: no config value named 'd_modle'\n"
            "hint: did you mean 'd_model'?\n");
}

TEST(DiagnosticsTest, CaretFollowsTabsAndUtf8) {
  SourceFile file("t.tx", "\tx = 1 # \xC3\xA9t\xC3\xA9 $\n");
  DiagnosticEngine diags(file);
  // `$` is at byte column 16; the two 2-byte characters before it each take
  // one column on screen.
  diags.error({1, 16}, "bad");
  EXPECT_EQ(diags.format(diags.getDiagnostics()[0]),
            "t.tx:1:16: error: bad\n"
            "\tx = 1 # \xC3\xA9t\xC3\xA9 $\n"
            "\t            ^\n");
}

TEST(DiagnosticsTest, CaretPastTheEndOfTheLine) {
  SourceFile file("t.tx", "ab\n");
  DiagnosticEngine diags(file);
  diags.error({1, 3}, "expected ')'");
  diags.error({2, 1}, "at the very end");
  EXPECT_EQ(diags.format(diags.getDiagnostics()[0]),
            "t.tx:1:3: error: expected ')'\nab\n  ^\n");
  EXPECT_EQ(diags.format(diags.getDiagnostics()[1]),
            "t.tx:2:1: error: at the very end\n\n^\n");
}

TEST(DiagnosticsTest, ParserDiagnosticEndToEnd) {
  test::Parsed p("model m\nconfig d_model 512\n", "spec.tx");
  EXPECT_EQ(p.report(),
            "spec.tx:2:16: error: expected '=' after config name 'd_model'\n"
            "config d_model 512\n"
            "               ^\n"
            "hint: write 'd_model = value'\n");
}

TEST(DiagnosticsTest, ClosestMatch) {
  std::vector<std::string> names = {"d_model", "heads", "d_ff", "dropout"};
  EXPECT_EQ(closestMatch("d_modl", names), "d_model");
  EXPECT_EQ(closestMatch("D_model", names), "d_model");
  EXPECT_EQ(closestMatch("head", names), "heads");
  EXPECT_EQ(closestMatch("d_fff", names), "d_ff");
  EXPECT_EQ(closestMatch("zzz", names), "");
  EXPECT_EQ(closestMatch("x", names), "");
  EXPECT_EQ(closestMatch("anything", {}), "");
  // The limit is max(1, len / 3): 2 edits for a 7-letter name, not 3.
  EXPECT_EQ(closestMatch("dxxpout", names), "dropout");
  EXPECT_EQ(closestMatch("dxxxout", names), "");
  // An exact match is not a suggestion; ties go to the first candidate.
  EXPECT_EQ(closestMatch("heads", names), "");
  EXPECT_EQ(closestMatch("ab", {"xb", "ay"}), "xb");
  EXPECT_EQ(closestMatch("boll", {"f32", "i32", "bool"}), "bool");
  EXPECT_EQ(closestMatch("f16", {"f32", "i32", "bool"}), ""); // 2 edits
}

} // namespace
