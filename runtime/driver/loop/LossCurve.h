//===- LossCurve.h - the loss curve as CSV and as an SVG plot ---*- C++ -*-===//
//
// CSV: a header "step,loss,lr,tokens_per_second,valid_loss,valid_accuracy,
// valid_bleu" and one row per step; the validation columns (train --valid:
// loss, accuracy in 0..1, BLEU in 0..100) are empty on steps without one.
// SVG: a self-contained 640x400 plot, the loss as a polyline over the steps
// with labelled axes (5 ticks each) and a title; validations add the
// validation loss as orange dots on the same axis and the BLEU as green
// squares on a right axis (0 to the highest BLEU); no scripts, no fonts
// beyond the generic sans-serif.
//
// A resumed run keeps the rows of the existing CSV up to the step it
// resumes from (readLossCsv), so the curve covers the whole training.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_LOSSCURVE_H
#define TXRT_DRIVER_LOSSCURVE_H

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace txrt::driver {

struct LossPoint {
  int64_t step = 0;
  double loss = 0, lr = 0, tokensPerSecond = 0;
  /// The validation after this step (validated); its loss may be NaN (the
  /// weights gave NaN logits on the validation text), BLEU NaN for kinds
  /// that have none.
  double validLoss = NAN, validAccuracy = NAN, validBleu = NAN;
  bool hasValidation = false;
  /// Whether the validation scores a BLEU (seq2seq), NaN when decoding met
  /// logits that are not finite ("nan" in the CSV; empty for other kinds).
  bool hasBleu = false;
  bool validated() const { return hasValidation; }
};

std::string lossCsv(const std::vector<LossPoint> &points);
/// Rows of a CSV written by lossCsv; malformed rows are skipped.
std::vector<LossPoint> parseLossCsv(const std::string &text);
std::string lossSvg(const std::vector<LossPoint> &points,
                    const std::string &title);

/// Writes both (atomically): `csvPath` and `csvPath` with .csv -> .svg.
void writeLossCurve(const std::string &csvPath,
                    const std::vector<LossPoint> &points,
                    const std::string &title);

/// A fingerprint of the rows' step, loss and learning rate as the CSV
/// writes them (the same from the rows or from the CSV read back; the
/// tokens per second and validations, which a resumed run may have
/// otherwise, left out): a checkpoint records it, and a resume tells its
/// own curve from another run's or a cut one.
uint64_t lossCurveFingerprint(const std::vector<LossPoint> &points);

/// "run.csv" -> "run.svg"; other names get ".svg" appended.
std::string svgPathFor(const std::string &csvPath);

/// Whether the file at `path` is a plot lossSvg wrote (its opening lines):
/// a run replaces such a plot beside its curve, but not another file of
/// that name (a figure of the user's). ResourceError naming the cause when
/// it exists but cannot be read (too many open files).
bool isLossPlot(const std::string &path);

} // namespace txrt::driver

#endif // TXRT_DRIVER_LOSSCURVE_H
