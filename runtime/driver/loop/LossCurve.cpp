//===- LossCurve.cpp - the loss curve as CSV and as an SVG plot -----------===//
#include "loop/LossCurve.h"
#include "formats/ContentHash.h"
#include "core/Error.h"
#include "formats/FileIO.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace txrt::driver {

std::string lossCsv(const std::vector<LossPoint> &points) {
  std::string text = "step,loss,lr,tokens_per_second,valid_loss,"
                     "valid_accuracy,valid_bleu\n";
  char row[256];
  for (const LossPoint &point : points) {
    std::snprintf(row, sizeof(row), "%lld,%.9g,%.9g,%.1f,",
                  static_cast<long long>(point.step), point.loss, point.lr,
                  point.tokensPerSecond);
    text += row;
    if (point.validated()) {
      // A language model's validation has no BLEU: its column stays empty.
      // A NaN loss is written "nan" (it left the row's columns empty).
      const double loss = std::isnan(point.validLoss) ? NAN : point.validLoss;
      const double bleu = std::isnan(point.validBleu) ? NAN : point.validBleu;
      if (!point.hasBleu && std::isnan(bleu))
        std::snprintf(row, sizeof(row), "%.9g,%.9g,", loss,
                      point.validAccuracy);
      else
        std::snprintf(row, sizeof(row), "%.9g,%.9g,%.9g", loss,
                      point.validAccuracy, bleu);
      text += row;
    } else {
      text += ",,";
    }
    text += "\n";
  }
  return text;
}

uint64_t lossCurveFingerprint(const std::vector<LossPoint> &points) {
  std::string text;
  char row[96];
  for (const LossPoint &point : points) {
    std::snprintf(row, sizeof(row), "%lld,%.9g,%.9g\n",
                  static_cast<long long>(point.step), point.loss, point.lr);
    text += row;
  }
  return contentHash64(text.data(), text.size());
}

std::vector<LossPoint> parseLossCsv(const std::string &text) {
  std::vector<LossPoint> points;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    LossPoint point;
    long long step = 0;
    if (std::sscanf(line.c_str(), "%lld,%lf,%lf,%lf", &step, &point.loss,
                    &point.lr, &point.tokensPerSecond) != 4)
      continue;
    point.step = step;
    // The validation columns, when the row has them filled.
    double valid[3];
    size_t comma = 0;
    for (int i = 0; i < 4 && comma != std::string::npos; ++i)
      comma = line.find(',', comma ? comma + 1 : 0);
    int filled = comma == std::string::npos
                     ? 0
                     : std::sscanf(line.c_str() + comma, ",%lf,%lf,%lf",
                                   &valid[0], &valid[1], &valid[2]);
    if (filled >= 2) {
      point.hasValidation = true;
      point.validLoss = valid[0];
      point.validAccuracy = valid[1];
      if (filled == 3) {
        point.hasBleu = true;
        point.validBleu = valid[2];
      }
    }
    points.push_back(point);
  }
  return points;
}

namespace {

std::string escapeXml(const std::string &text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '&': out += "&amp;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
    }
  }
  return out;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", value);
  return text;
}

std::string coordinate(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", value);
  return text;
}

/// Validation loss as dots on the loss axis, BLEU as squares on a right
/// axis from 0 to the highest BLEU, and a legend; empty without any.
template <typename X, typename Y>
std::string validationMarks(const std::vector<const LossPoint *> &points,
                            X x, Y y, double rightEdge, double top,
                            double plotH) {
  double maxBleu = 0;
  bool any = false, anyBleu = false; // a language model's have no BLEU
  for (const LossPoint *p : points)
    if (p->validated() && std::isfinite(p->validLoss)) {
      any = true;
      if (std::isfinite(p->validBleu)) {
        anyBleu = true;
        maxBleu = std::max(maxBleu, p->validBleu);
      }
    }
  if (!any)
    return "";
  double bleuTop = maxBleu > 0 ? maxBleu : 1;
  std::string svg;
  for (const LossPoint *p : points) {
    if (!p->validated() || !std::isfinite(p->validLoss))
      continue;
    std::string px = coordinate(x(double(p->step)));
    svg += "<circle class=\"valid-loss\" cx=\"" + px + "\" cy=\"" +
           coordinate(y(p->validLoss)) + "\" r=\"3.5\" fill=\"#ff7f0e\"/>\n";
    if (std::isfinite(p->validBleu)) {
      double by = top + (1.0 - p->validBleu / bleuTop) * plotH;
      svg += "<rect class=\"valid-bleu\" x=\"" +
             coordinate(x(double(p->step)) - 3) + "\" y=\"" +
             coordinate(by - 3) +
             "\" width=\"6\" height=\"6\" fill=\"#2ca02c\"/>\n";
    }
  }
  if (anyBleu)
    svg += "<text x=\"" + coordinate(rightEdge) + "\" y=\"" +
           coordinate(top - 6) +
           "\" text-anchor=\"end\" fill=\"#2ca02c\">BLEU " + number(bleuTop) +
           " at top</text>\n";
  svg += "<text x=\"" + coordinate(rightEdge) + "\" y=\"" +
         coordinate(top + 14) +
         "\" text-anchor=\"end\"><tspan fill=\"#1f77b4\">train loss</tspan> "
         "<tspan fill=\"#ff7f0e\">valid loss</tspan>" +
         (anyBleu ? " <tspan fill=\"#2ca02c\">valid BLEU</tspan>" : "") +
         "</text>\n";
  return svg;
}

} // namespace

namespace {
/// The opening of every plot lossSvg writes (isLossPlot recognizes it).
const char *const kPlotOpening =
    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" "
    "height=\"400\" viewBox=\"0 0 640 400\" font-family=\"sans-serif\" "
    "font-size=\"12\">\n"
    "<rect width=\"640\" height=\"400\" fill=\"white\"/>\n";
} // namespace

bool isLossPlot(const std::string &path) {
  const size_t length = std::strlen(kPlotOpening);
  std::string head(length, '\0');
  FILE *file = std::fopen(path.c_str(), "rb");
  // A plot that cannot be read is not known to be a user's figure: the
  // cause, not "no loss plot txc wrote" (with `ulimit -n 6` txc's own plot
  // was blamed, and --overwrite advised).
  if (!file && errno != ENOENT)
    throw ResourceError("cannot read '" + path + "': " + std::strerror(errno));
  if (!file)
    return false;
  size_t got = std::fread(head.data(), 1, length, file);
  std::fclose(file);
  return got == length && head == kPlotOpening;
}

std::string lossSvg(const std::vector<LossPoint> &points,
                    const std::string &title) {
  const double width = 640, height = 400;
  const double left = 70, right = 20, top = 40, bottom = 50;
  const double plotW = width - left - right, plotH = height - top - bottom;
  double minStep = 0, maxStep = 1, minLoss = 0, maxLoss = 1;
  double lastStep = maxStep; // the last step drawn (maxStep: the axis end)
  std::vector<const LossPoint *> finite;
  for (const LossPoint &p : points)
    if (std::isfinite(p.loss))
      finite.push_back(&p);
  if (!finite.empty()) {
    minStep = maxStep = double(finite[0]->step);
    minLoss = maxLoss = finite[0]->loss;
    for (const LossPoint *p : finite) {
      minStep = std::min(minStep, double(p->step));
      maxStep = std::max(maxStep, double(p->step));
      minLoss = std::min(minLoss, p->loss);
      maxLoss = std::max(maxLoss, p->loss);
      if (std::isfinite(p->validLoss))
        maxLoss = std::max(maxLoss, p->validLoss);
    }
    minLoss = std::min(minLoss, 0.0);
    lastStep = maxStep;
    if (maxStep == minStep)
      maxStep = minStep + 1;
    if (maxLoss == minLoss)
      maxLoss = minLoss + 1;
  }
  auto x = [&](double step) {
    return left + (step - minStep) / (maxStep - minStep) * plotW;
  };
  auto y = [&](double loss) {
    return top + (1.0 - (loss - minLoss) / (maxLoss - minLoss)) * plotH;
  };

  std::string svg = kPlotOpening;
  svg += "<text x=\"320\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" +
         escapeXml(title) + "</text>\n";
  // Axes.
  svg += "<line x1=\"" + coordinate(left) + "\" y1=\"" + coordinate(top) +
         "\" x2=\"" + coordinate(left) + "\" y2=\"" +
         coordinate(top + plotH) + "\" stroke=\"black\"/>\n";
  svg += "<line x1=\"" + coordinate(left) + "\" y1=\"" +
         coordinate(top + plotH) + "\" x2=\"" + coordinate(left + plotW) +
         "\" y2=\"" + coordinate(top + plotH) + "\" stroke=\"black\"/>\n";
  double lastTick = -1;
  for (int i = 0; i <= 4; ++i) {
    // The tick at the whole step its label names (a label "16" stood at
    // step 15.75); once per step (a 3-step run drew "2" twice), and none
    // past the last step (a 1-step run's axis named a step 2).
    double step = std::round(minStep + (maxStep - minStep) * i / 4.0);
    const bool tick = step != lastTick && step <= lastStep;
    if (tick)
      lastTick = step;
    double loss = minLoss + (maxLoss - minLoss) * i / 4.0;
    if (tick) {
      svg += "<line x1=\"" + coordinate(x(step)) + "\" y1=\"" +
             coordinate(top + plotH) + "\" x2=\"" + coordinate(x(step)) +
             "\" y2=\"" + coordinate(top + plotH + 5) +
             "\" stroke=\"black\"/>\n";
      svg += "<text x=\"" + coordinate(x(step)) + "\" y=\"" +
             coordinate(top + plotH + 18) + "\" text-anchor=\"middle\">" +
             number(step) + "</text>\n";
    }
    svg += "<line x1=\"" + coordinate(left - 5) + "\" y1=\"" +
           coordinate(y(loss)) + "\" x2=\"" + coordinate(left) + "\" y2=\"" +
           coordinate(y(loss)) + "\" stroke=\"black\"/>\n";
    svg += "<text x=\"" + coordinate(left - 8) + "\" y=\"" +
           coordinate(y(loss) + 4) + "\" text-anchor=\"end\">" +
           number(loss) + "</text>\n";
  }
  svg += "<text x=\"" + coordinate(left + plotW / 2) + "\" y=\"" +
         coordinate(height - 10) + "\" text-anchor=\"middle\">step</text>\n";
  svg += "<text x=\"16\" y=\"" + coordinate(top + plotH / 2) +
         "\" text-anchor=\"middle\" transform=\"rotate(-90 16 " +
         coordinate(top + plotH / 2) + ")\">loss</text>\n";
  if (!finite.empty()) {
    svg += "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" "
           "points=\"";
    for (size_t i = 0; i < finite.size(); ++i)
      svg += (i ? " " : "") + coordinate(x(double(finite[i]->step))) + "," +
             coordinate(y(finite[i]->loss));
    svg += "\"/>\n";
  }
  svg += validationMarks(finite, x, y, left + plotW, top, plotH);
  return svg + "</svg>\n";
}

std::string svgPathFor(const std::string &csvPath) {
  const std::string extension = ".csv";
  if (csvPath.size() > extension.size() &&
      csvPath.compare(csvPath.size() - extension.size(), extension.size(),
                      extension) == 0)
    return csvPath.substr(0, csvPath.size() - extension.size()) + ".svg";
  return csvPath + ".svg";
}

void writeLossCurve(const std::string &csvPath,
                    const std::vector<LossPoint> &points,
                    const std::string &title) {
  AtomicFileWriter csv(csvPath);
  csv.write(lossCsv(points));
  csv.commit();
  AtomicFileWriter svg(svgPathFor(csvPath));
  svg.write(lossSvg(points, title));
  svg.commit();
}

} // namespace txrt::driver
