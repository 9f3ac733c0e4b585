//===- ClassifierMetrics.h - accuracy, macro-F1, confusion table -*- C++ -*-===//
//
// `eval` of a classifier counts (true label, predicted label) pairs in a
// confusion matrix and reports from it:
//
//   accuracy   correct / all
//   macro-F1   the mean over labels of F1 = 2 P R / (P + R) (0 when P + R
//              is 0), over every label that occurs as a truth or a
//              prediction (a label absent from both says nothing)
//   table      rows = true labels, columns = predicted labels, aligned
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_CLASSIFIERMETRICS_H
#define TXRT_DRIVER_CLASSIFIERMETRICS_H

#include <cstdint>
#include <string>
#include <vector>

namespace txrt::driver {

class ConfusionMatrix {
public:
  explicit ConfusionMatrix(int64_t classes);

  /// Counts one example; throws std::out_of_range for a label outside
  /// [0, classes).
  void add(int64_t truth, int64_t predicted);

  int64_t classes() const { return classes_; }
  int64_t count(int64_t truth, int64_t predicted) const;
  int64_t total() const { return total_; }

  double accuracy() const;
  /// F1 of one label (0 when it has neither truths nor predictions).
  double f1(int64_t label) const;
  double macroF1() const;

  /// The table with `names` (one per class) as headers, e.g.
  ///   truth \ predicted  food  sports
  ///   food                 12       1
  ///   sports                0      14
  std::string formatTable(const std::vector<std::string> &names) const;

private:
  int64_t classes_;
  int64_t total_ = 0;
  std::vector<int64_t> counts_; ///< [truth * classes + predicted]
};

} // namespace txrt::driver

#endif // TXRT_DRIVER_CLASSIFIERMETRICS_H
