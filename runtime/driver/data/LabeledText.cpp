//===- LabeledText.cpp - classification data: 'label<TAB>text' lines ------===//
#include "data/LabeledText.h"
#include "core/Error.h"
#include "core/Init.h"
#include "core/Parameters.h"
#include "data/TabbedLines.h"
#include "data/Tokenizer.h"
#include "formats/FileIO.h"
#include "formats/Json.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace txrt::driver {

namespace {

/// The label without blanks or byte order marks around it: a BOM inside a
/// file (files joined with `cat`) is a blank as in the text; it made
/// "\uFEFFfood" a label of its own beside "food".
std::string_view trimBlanks(std::string_view text) {
  constexpr std::string_view kBlanks = " \t\v\f\r";
  const std::string_view bom = kUtf8ByteOrderMark;
  for (;;) {
    if (!text.empty() && kBlanks.find(text.front()) != std::string_view::npos)
      text.remove_prefix(1);
    else if (text.substr(0, bom.size()) == bom)
      text.remove_prefix(bom.size());
    else if (!text.empty() &&
             kBlanks.find(text.back()) != std::string_view::npos)
      text.remove_suffix(1);
    else if (text.size() >= bom.size() &&
             text.substr(text.size() - bom.size()) == bom)
      text.remove_suffix(bom.size());
    else
      return text;
  }
}

/// Whether a label holds what breaks the lines it is printed in: a
/// control character (a tab, a line break, ESC, NUL, a C1 control) or a
/// line separator
/// that readers split lines at (U+0085, U+2028, U+2029: `predict` printed
/// them raw, and one label became two lines).
bool breaksLines(std::string_view label) {
  for (size_t i = 0; i < label.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(label[i]);
    if (c < 0x20 || c == 0x7f)
      return true;
    if (c == 0xC2 && i + 1 < label.size() &&
        static_cast<unsigned char>(label[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(label[i + 1]) <= 0x9F)
      return true; // C1 controls: U+0085 NEL, U+009B CSI, ...
    if (c == 0xE2 && i + 2 < label.size() &&
        static_cast<unsigned char>(label[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(label[i + 2]) == 0xA8 ||
         static_cast<unsigned char>(label[i + 2]) == 0xA9))
      return true;
  }
  return false;
}

} // namespace

LabeledText parseLabeledText(std::string_view content,
                             const std::string &path) {
  LabeledText text;
  text.path = path;
  text.hash = fnv1a64(content);
  ProblemList problems;
  forEachTabbedLine(content, path, {"label", "text"}, problems,
                    [&](const TabbedLine &line) {
                      LabeledExample example;
                      example.line = line.number;
                      example.label = std::string(trimBlanks(line.left));
                      example.words = splitWords(line.right);
                      example.text = std::string(line.right);
                      std::string at = fileLine(path, line.number);
                      if (example.label.empty())
                        problems.add(at + "the label is empty");
                      else if (breaksLines(example.label))
                        problems.add(at + "the label " +
                                     quotedForMessage(example.label) +
                                     " holds a control character or a line "
                                     "separator (U+0085, U+2028, U+2029), "
                                     "which break the lines it is printed in");
                      else if (example.words.empty())
                        problems.add(at + "the text is empty");
                      else
                        text.examples.push_back(std::move(example));
                    });
  // (A line's length is known once every line is read and the tokenizer
  // made: two runs showed the problems of one file.)
  if (!text.examples.empty())
    problems.note("the lengths of the other lines are checked once these "
                  "are fixed");
  problems.throwIfAny("bad lines in '" + path + "'");
  if (text.examples.empty())
    throw InputError("'" + path + "' holds no labeled lines");
  return text;
}

LabeledText readLabeledText(const std::string &path) {
  return parseLabeledText(readWholeFile(path), path);
}

LabelSet LabelSet::fromData(const LabeledText &text) {
  std::set<std::string> labels;
  for (const LabeledExample &example : text.examples)
    labels.insert(example.label);
  LabelSet set;
  set.labels_.assign(labels.begin(), labels.end());
  return set;
}

LabelSet LabelSet::fromLabels(std::vector<std::string> labels) {
  if (labels.empty())
    throw std::invalid_argument("the label list is empty");
  std::set<std::string> seen;
  for (const std::string &label : labels)
    if (!seen.insert(label).second)
      throw std::invalid_argument("the label " + quotedForMessage(label) +
                                  " repeats");
  LabelSet set;
  set.labels_ = std::move(labels);
  return set;
}

std::optional<int64_t> LabelSet::id(const std::string &label) const {
  auto it = std::find(labels_.begin(), labels_.end(), label);
  if (it == labels_.end())
    return std::nullopt;
  return int64_t(it - labels_.begin());
}

std::string LabelSet::toJson() const {
  Json root = Json::object();
  root["format"] = "txc-labels";
  root["version"] = 1;
  root["labels"] = labels_;
  return txrt::driver::toJson(root) + "\n";
}

LabelSet LabelSet::fromJson(std::string_view text, const std::string &origin) {
  auto bad = [&](const std::string &why) {
    return InputError(origin + " is not a valid label file: " + why);
  };
  Json root;
  std::string why = parseFormattedJson(text, "txc-labels", 1, root);
  if (!why.empty())
    throw bad(why);
  const Json *list = jsonMember(root, "labels");
  if (!list || !list->is_array())
    throw bad("'labels' is not a list");
  std::vector<std::string> labels;
  for (const Json &label : *list) {
    if (!label.is_string() || jsonString(label).empty())
      throw bad("a label is not a non-empty string");
    // What a 'label<TAB>text' line can give: no tab, line break or NUL
    // (they broke predict's 'label<TAB>probability' lines), no blank at
    // either end (labels are trimmed).
    const std::string &text = jsonString(label);
    if (text.find_first_of(std::string("\t\n\r\0", 4)) != std::string::npos)
      throw bad("a label holds a tab, a line break or a NUL, which no "
                "'label<TAB>text' line can give");
    if (breaksLines(text))
      throw bad("the label " + quotedForMessage(text) +
                " holds a control character or a line separator (U+0085, "
                "U+2028, U+2029), which break the lines it is printed in");
    if (text.front() == ' ' || text.back() == ' ')
      throw bad("the label " + quotedForMessage(text) +
                " starts or ends with a blank (labels are trimmed)");
    labels.push_back(text);
  }
  try {
    return fromLabels(std::move(labels));
  } catch (const std::invalid_argument &error) {
    throw bad(error.what());
  }
}

void LabelSet::save(const std::string &path) const {
  AtomicFileWriter writer(path);
  writer.write(toJson());
  writer.commit();
}

LabelSet LabelSet::load(const std::string &path) {
  return fromJson(readWholeFile(path), "'" + path + "'");
}

} // namespace txrt::driver
