//===- ClassifierMetrics.cpp - accuracy, macro-F1, confusion table --------===//
#include "loop/ClassifierMetrics.h"

#include <algorithm>
#include <stdexcept>

namespace txrt::driver {

ConfusionMatrix::ConfusionMatrix(int64_t classes)
    : classes_(classes), counts_(size_t(classes * classes), 0) {}

void ConfusionMatrix::add(int64_t truth, int64_t predicted) {
  if (truth < 0 || truth >= classes_ || predicted < 0 ||
      predicted >= classes_)
    throw std::out_of_range("confusion matrix label out of range");
  ++counts_[size_t(truth * classes_ + predicted)];
  ++total_;
}

int64_t ConfusionMatrix::count(int64_t truth, int64_t predicted) const {
  return counts_[size_t(truth * classes_ + predicted)];
}

double ConfusionMatrix::accuracy() const {
  if (total_ == 0)
    return 0.0;
  int64_t correct = 0;
  for (int64_t label = 0; label < classes_; ++label)
    correct += count(label, label);
  return double(correct) / double(total_);
}

double ConfusionMatrix::f1(int64_t label) const {
  int64_t truths = 0, predictions = 0;
  for (int64_t other = 0; other < classes_; ++other) {
    truths += count(label, other);
    predictions += count(other, label);
  }
  // F1 = 2 TP / (truths + predictions), the same as 2 P R / (P + R).
  if (truths + predictions == 0)
    return 0.0;
  return 2.0 * double(count(label, label)) / double(truths + predictions);
}

double ConfusionMatrix::macroF1() const {
  double sum = 0.0;
  int64_t labels = 0;
  for (int64_t label = 0; label < classes_; ++label) {
    bool occurs = false;
    for (int64_t other = 0; other < classes_ && !occurs; ++other)
      occurs = count(label, other) > 0 || count(other, label) > 0;
    if (!occurs)
      continue;
    sum += f1(label);
    ++labels;
  }
  return labels ? sum / double(labels) : 0.0;
}

namespace {

/// The columns a terminal gives `text` (UTF-8): 2 for East Asian wide and
/// fullwidth characters and emoji, 0 for combining marks, zero-width
/// characters and variation selectors, 1 otherwise (a byte that is not
/// UTF-8: 1). Labels like 食べ物 or météo (with a combining accent)
/// were padded by bytes, which put the table's columns out of line.
size_t displayWidth(const std::string &text) {
  size_t width = 0;
  for (size_t i = 0; i < text.size();) {
    const unsigned char lead = static_cast<unsigned char>(text[i]);
    uint32_t code = lead;
    size_t length = 1;
    if (lead >= 0xF0 && lead < 0xF8)
      length = 4, code = lead & 0x07;
    else if (lead >= 0xE0)
      length = 3, code = lead & 0x0F;
    else if (lead >= 0xC0)
      length = 2, code = lead & 0x1F;
    if (length > 1 && i + length <= text.size()) {
      for (size_t k = 1; k < length; ++k)
        code = (code << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    } else {
      length = 1;
      code = lead;
    }
    i += length;
    auto in = [&](uint32_t low, uint32_t high) {
      return code >= low && code <= high;
    };
    if (in(0x0300, 0x036F) || in(0x1AB0, 0x1AFF) || in(0x1DC0, 0x1DFF) ||
        in(0x20D0, 0x20FF) || in(0xFE20, 0xFE2F) || in(0x200B, 0x200F) ||
        in(0xFE00, 0xFE0F))
      continue;
    const bool wide =
        in(0x1100, 0x115F) || in(0x2E80, 0x303E) || in(0x3041, 0x33FF) ||
        in(0x3400, 0x4DBF) || in(0x4E00, 0x9FFF) || in(0xA000, 0xA4CF) ||
        in(0xAC00, 0xD7A3) || in(0xF900, 0xFAFF) || in(0xFE30, 0xFE4F) ||
        in(0xFF00, 0xFF60) || in(0xFFE0, 0xFFE6) || in(0x1F300, 0x1F64F) ||
        in(0x1F900, 0x1F9FF) || in(0x20000, 0x3FFFD);
    width += wide ? 2 : 1;
  }
  return width;
}

} // namespace

std::string
ConfusionMatrix::formatTable(const std::vector<std::string> &names) const {
  const std::string corner = "truth \\ predicted";
  auto name = [&](int64_t label) {
    return size_t(label) < names.size() ? names[size_t(label)]
                                        : "#" + std::to_string(label);
  };
  size_t first = corner.size();
  for (int64_t label = 0; label < classes_; ++label)
    first = std::max(first, displayWidth(name(label)));
  std::vector<size_t> widths;
  for (int64_t column = 0; column < classes_; ++column) {
    size_t width = displayWidth(name(column));
    for (int64_t row = 0; row < classes_; ++row)
      width = std::max(width, std::to_string(count(row, column)).size());
    widths.push_back(width);
  }
  auto pad = [](const std::string &text, size_t width, bool right) {
    const size_t shown = displayWidth(text);
    std::string fill(width > shown ? width - shown : 0, ' ');
    return right ? fill + text : text + fill;
  };
  std::string out = pad(corner, first, false);
  for (int64_t column = 0; column < classes_; ++column)
    out += "  " + pad(name(column), widths[size_t(column)], true);
  out += "\n";
  for (int64_t row = 0; row < classes_; ++row) {
    out += pad(name(row), first, false);
    for (int64_t column = 0; column < classes_; ++column)
      out += "  " + pad(std::to_string(count(row, column)),
                        widths[size_t(column)], true);
    out += "\n";
  }
  return out;
}

} // namespace txrt::driver
