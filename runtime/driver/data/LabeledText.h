//===- LabeledText.h - classification data: 'label<TAB>text' lines -*- C++ -*-===//
//
// `train --data FILE.tsv` of a classifier reads UTF-8 lines
//
//   label<TAB>text
//
// (a trailing '\r' dropped). Labels are strings (leading and trailing
// blanks dropped); the text is split like every text (splitWords). Each
// bad line is an error naming FILE:LINE: empty line, no tab, more than one
// tab, empty label, empty text, invalid UTF-8.
//
// The label set is the sorted list of distinct labels of the training
// data; a label's position is its class id. It is saved beside the
// checkpoint as CKPT.labels.json:
//
//   {"format": "txc-labels", "version": 1, "labels": ["food", "sports"]}
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_LABELEDTEXT_H
#define TXRT_DRIVER_LABELEDTEXT_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace txrt::driver {

struct LabeledExample {
  std::string label;
  std::vector<std::string> words;
  std::string text; ///< as written (what SentencePiece encodes)
  int64_t line = 0;
};

struct LabeledText {
  std::string path;
  std::vector<LabeledExample> examples;
  uint64_t hash = 0;
};

/// Parses and checks (InputError listing every bad line, at most
/// kMaxReportedProblems).
LabeledText parseLabeledText(std::string_view content, const std::string &path);
LabeledText readLabeledText(const std::string &path);

class LabelSet {
public:
  LabelSet() = default;
  /// The sorted distinct labels of `text`.
  static LabelSet fromData(const LabeledText &text);
  /// Throws std::invalid_argument on an empty list or a repeated label.
  static LabelSet fromLabels(std::vector<std::string> labels);

  int64_t size() const { return int64_t(labels_.size()); }
  const std::vector<std::string> &labels() const { return labels_; }
  const std::string &label(int64_t id) const { return labels_.at(size_t(id)); }
  std::optional<int64_t> id(const std::string &label) const;

  std::string toJson() const;
  /// Throws InputError naming `origin` on malformed text.
  static LabelSet fromJson(std::string_view text, const std::string &origin);
  /// Writes atomically / reads `path`.
  void save(const std::string &path) const;
  static LabelSet load(const std::string &path);

private:
  std::vector<std::string> labels_;
};

/// The suffix of the label file beside a checkpoint.
constexpr const char *kLabelsSuffix = ".labels.json";

} // namespace txrt::driver

#endif // TXRT_DRIVER_LABELEDTEXT_H
