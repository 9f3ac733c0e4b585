//===- Diagnostics.cpp - spec-language diagnostics ------------------------===//
//
// Source files, the diagnostic engine and its clang-style output:
//
//   file.tx:3:17: error: unknown name 'd_modl'
//     x = linear(x, d_modl) as W_q
//                   ^
//   hint: did you mean 'd_model'?
//
// A diagnostic at line 0 (e.g. about a `-D` flag) has no place in the file
// and prints as `error: message` without a source line.
//
//===----------------------------------------------------------------------===//

#include "txc/Frontend/Diagnostics.h"

#include <algorithm>
#include <cctype>

namespace txc {

//===----------------------------------------------------------------------===//
// SourceFile
//===----------------------------------------------------------------------===//

SourceFile::SourceFile(std::string name, std::string text)
    : name(std::move(name)), text(std::move(text)) {
  lineStarts.push_back(0);
  for (size_t i = 0; i < this->text.size(); ++i)
    if (this->text[i] == '\n')
      lineStarts.push_back(i + 1);
}

std::string SourceFile::getLine(uint32_t line) const {
  return std::string(getLineView(line));
}

std::string_view SourceFile::getLineView(uint32_t line) const {
  if (line == 0 || line > lineStarts.size())
    return "";
  size_t begin = lineStarts[line - 1];
  size_t end = line < lineStarts.size() ? lineStarts[line] - 1 : text.size();
  if (end > begin && text[end - 1] == '\r')
    --end;
  return std::string_view(text).substr(begin, end - begin);
}

//===----------------------------------------------------------------------===//
// DiagnosticEngine
//===----------------------------------------------------------------------===//

bool DiagnosticEngine::add(Diagnostic diag) {
  if (diag.severity == Severity::Note) {
    if (droppingNotes)
      return false;
    diags.push_back(std::move(diag));
    return true;
  }
  // FNV-1a over the severity, position, message and hint (the syntax
  // library does not link LLVM).
  uint64_t key = 0xcbf29ce484222325ull;
  auto mix = [&key](std::string_view bytes) {
    for (char c : bytes) {
      key ^= static_cast<unsigned char>(c);
      key *= 0x100000001b3ull;
    }
  };
  std::string position = std::to_string(static_cast<int>(diag.severity)) +
                         ":" + std::to_string(diag.loc.line) + ":" +
                         std::to_string(diag.loc.col) + ":";
  mix(position);
  mix(diag.message);
  mix(std::string_view("\0", 1));
  mix(diag.hint);
  // Past kMaxErrors nothing is shown: new keys are only looked up, not
  // kept, so the set stays bounded (the count of errors not shown may then
  // include repeats of one).
  droppingNotes = numErrors >= kMaxErrors ? seen.count(key) != 0
                                          : !seen.insert(key).second;
  if (droppingNotes)
    return false;
  if (numErrors >= kMaxErrors) {
    // Counted by the caller (errors), not kept: output stays bounded.
    droppingNotes = true;
    return true;
  }
  diags.push_back(std::move(diag));
  return true;
}

void DiagnosticEngine::error(SourceLoc loc, std::string message,
                             std::string hint) {
  ++numErrorReports;
  if (add({Severity::Error, loc, std::move(message), std::move(hint)})) {
    ++numErrors;
    noteCallSites();
  }
}

void DiagnosticEngine::warning(SourceLoc loc, std::string message,
                               std::string hint) {
  if (add({Severity::Warning, loc, std::move(message), std::move(hint)}))
    noteCallSites();
}

void DiagnosticEngine::pushCallSite(SourceLoc loc, std::string what) {
  callSites.push_back({Severity::Note, loc, std::move(what), ""});
}

void DiagnosticEngine::popCallSite() { callSites.pop_back(); }

void DiagnosticEngine::noteCallSites() {
  size_t shown = 0;
  for (auto it = callSites.rbegin();
       it != callSites.rend() && shown < kMaxCallSiteNotes; ++it, ++shown)
    add(*it);
  if (callSites.size() > kMaxCallSiteNotes)
    add({Severity::Note, callSites.front().loc,
         "... " + std::to_string(callSites.size() - kMaxCallSiteNotes) +
             " more call(s), the outermost here",
         ""});
}

void DiagnosticEngine::noteFlagsOnErrorLines(
    const std::map<std::string, std::string> &flags, size_t first,
    const std::map<std::string, std::vector<std::string>> *derived) {
  if (flags.empty())
    return;
  for (size_t i = first; i < diags.size(); ++i) {
    if (diags[i].severity != Severity::Error || diags[i].loc.line == 0)
      continue;
    // The identifiers of the error's line.
    std::string_view line = file.getLineView(diags[i].loc.line);
    std::vector<std::string> named;
    for (size_t at = 0; at < line.size();) {
      auto isStart = [](char c) {
        return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
      };
      if (!isStart(line[at])) {
        ++at;
        continue;
      }
      size_t end = at;
      while (end < line.size() &&
             (isStart(line[end]) ||
              std::isdigit(static_cast<unsigned char>(line[end]))))
        ++end;
      std::string word(line.substr(at, end - at));
      if ((flags.count(word) || (derived && derived->count(word))) &&
          std::find(named.begin(), named.end(), word) == named.end())
        named.push_back(word);
      at = end;
    }
    // After the error's own notes, unless one already names the flag.
    size_t end = i + 1;
    while (end < diags.size() && diags[end].severity == Severity::Note)
      ++end;
    for (const std::string &name : named) {
      const bool set = flags.count(name) != 0;
      std::string text;
      if (set) {
        text = "'" + name + "' is set on the command line: " + flags.at(name);
      } else {
        text = "'" + name + "' is computed from the command line's ";
        const std::vector<std::string> &from = derived->at(name);
        for (size_t k = 0; k < from.size(); ++k)
          text += (k == 0                 ? ""
                   : k + 1 == from.size() ? " and "
                                          : ", ") +
                  from[k];
      }
      bool there = false;
      for (size_t k = i + 1; k < end; ++k)
        there |= diags[k].message == text;
      // Nor when a note of the config's evaluation names the flag already
      // ("these values come from the command line: -D batch=2**62"): the
      // same fact was printed twice.
      if (set)
        for (const Diagnostic &other : diags)
          there |= other.severity == Severity::Note &&
                   other.message.find(flags.at(name)) != std::string::npos;
      if (there)
        continue;
      diags.insert(diags.begin() + std::ptrdiff_t(end),
                   Diagnostic{Severity::Note, SourceLoc{}, text, ""});
      ++end;
    }
    i = end - 1;
  }
}

void DiagnosticEngine::note(SourceLoc loc, std::string message) {
  add({Severity::Note, loc, std::move(message), ""});
}

namespace {

const char *severityName(Severity severity) {
  switch (severity) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  }
  return "error";
}

/// The line under `sourceLine` with a '^' at byte column `col`. Tabs are
/// copied so the caret lines up however the terminal expands them, and UTF-8
/// continuation bytes take no room.
std::string caretLine(std::string_view sourceLine, uint32_t col) {
  std::string caret;
  for (size_t i = 0; i + 1 < col; ++i) {
    if (i < sourceLine.size()) {
      unsigned char c = static_cast<unsigned char>(sourceLine[i]);
      if ((c & 0xC0) == 0x80)
        continue;
      caret += c == '\t' ? '\t' : ' ';
    } else {
      caret += ' ';
    }
  }
  caret += '^';
  return caret;
}

} // namespace

namespace {

/// `line` as a terminal may print it: each byte of an invalid UTF-8
/// sequence and each control character but tab as '?' (one byte for one,
/// so the caret stays under its column). Raw bytes of a binary or Latin-1
/// file were echoed to the terminal.
std::string printableLine(std::string_view line) {
  std::string out(line);
  size_t i = 0;
  while (i < out.size()) {
    unsigned char c = static_cast<unsigned char>(out[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t') || c == 0x7F)
        out[i] = '?';
      ++i;
      continue;
    }
    size_t length = c >= 0xF0 && c <= 0xF4   ? 4
                    : c >= 0xE0 && c <= 0xEF ? 3
                    : c >= 0xC2 && c <= 0xDF ? 2
                                             : 0;
    bool valid = length > 0 && i + length <= out.size();
    for (size_t k = 1; valid && k < length; ++k)
      valid = (static_cast<unsigned char>(out[i + k]) & 0xC0) == 0x80;
    if (!valid) {
      out[i] = '?';
      ++i;
      continue;
    }
    i += length;
  }
  return out;
}

} // namespace

std::string DiagnosticEngine::format(const Diagnostic &diag) const {
  std::string out;
  if (diag.loc.line == 0) {
    out +=
        std::string(severityName(diag.severity)) + ": " + diag.message + "\n";
  } else {
    uint32_t col = std::max<uint32_t>(diag.loc.col, 1);
    out += file.getName() + ":" + std::to_string(diag.loc.line) + ":" +
           std::to_string(col) + ": " + severityName(diag.severity) + ": " +
           diag.message + "\n";
    std::string_view line = file.getLineView(diag.loc.line);
    if (line.size() <= kMaxShownLine) {
      out += printableLine(line) + "\n";
      out += caretLine(line, col) + "\n";
    } else {
      // A window of the line around the caret, marked with "...".
      size_t at = std::min<size_t>(col - 1, line.size());
      size_t begin = at > kMaxShownLine / 2 ? at - kMaxShownLine / 2 : 0;
      // Do not start inside a UTF-8 sequence.
      while (begin > 0 && (static_cast<unsigned char>(line[begin]) & 0xC0) == 0x80)
        --begin;
      std::string_view shown = line.substr(begin, kMaxShownLine);
      std::string prefix = begin > 0 ? "..." : "";
      std::string suffix = begin + shown.size() < line.size() ? "..." : "";
      out += prefix + printableLine(shown) + suffix + "\n";
      out += std::string(prefix.size(), ' ') +
             caretLine(shown, static_cast<uint32_t>(col - begin)) + "\n";
    }
  }
  if (!diag.hint.empty())
    out += "hint: " + diag.hint + "\n";
  return out;
}

void DiagnosticEngine::print(std::ostream &os, size_t first) const {
  for (size_t k = first; k < diags.size(); ++k)
    os << format(diags[k]);
  if (numErrors > kMaxErrors)
    os << "note: " << numErrors - kMaxErrors << " more error"
       << (numErrors - kMaxErrors == 1 ? "" : "s")
       << " not shown (txc shows the first " << kMaxErrors << ")\n";
}

//===----------------------------------------------------------------------===//
// closestMatch
//===----------------------------------------------------------------------===//

namespace {

size_t editDistance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

} // namespace

std::string closestMatch(const std::string &name,
                         const std::vector<std::string> &candidates) {
  size_t limit = std::max<size_t>(1, name.size() / 3);
  std::string best;
  size_t bestDistance = limit + 1;
  for (const std::string &candidate : candidates) {
    if (candidate == name)
      continue;
    // The distance is at least the difference in length: skip the work.
    size_t lengthGap = candidate.size() > name.size()
                           ? candidate.size() - name.size()
                           : name.size() - candidate.size();
    if (lengthGap >= bestDistance)
      continue;
    size_t distance = editDistance(name, candidate);
    if (distance < bestDistance) {
      bestDistance = distance;
      best = candidate;
    }
  }
  return best;
}

} // namespace txc
