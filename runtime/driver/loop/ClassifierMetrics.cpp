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

std::string
ConfusionMatrix::formatTable(const std::vector<std::string> &names) const {
  const std::string corner = "truth \\ predicted";
  auto name = [&](int64_t label) {
    return size_t(label) < names.size() ? names[size_t(label)]
                                        : "#" + std::to_string(label);
  };
  size_t first = corner.size();
  for (int64_t label = 0; label < classes_; ++label)
    first = std::max(first, name(label).size());
  std::vector<size_t> widths;
  for (int64_t column = 0; column < classes_; ++column) {
    size_t width = name(column).size();
    for (int64_t row = 0; row < classes_; ++row)
      width = std::max(width, std::to_string(count(row, column)).size());
    widths.push_back(width);
  }
  auto pad = [](const std::string &text, size_t width, bool right) {
    std::string fill(width > text.size() ? width - text.size() : 0, ' ');
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
