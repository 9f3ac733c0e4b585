//===- LossCurveTest.cpp - CSV and SVG of the loss curve ------------------===//
#include "loop/LossCurve.h"
#include "TestUtil.h"

#include <cstdio>

#include <cmath>

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

TEST(LossCurveTest, CsvRoundTrip) {
  std::vector<LossPoint> points = {{1, 2.5, 0.05, 1000}, {2, 1.25, 0.05, 980}};
  std::string csv = lossCsv(points);
  EXPECT_EQ(csv, "step,loss,lr,tokens_per_second,valid_loss,valid_accuracy,"
                 "valid_bleu\n1,2.5,0.05,1000.0,,,\n2,1.25,0.05,980.0,,,\n");
  std::vector<LossPoint> back = parseLossCsv(csv);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].step, 2);
  EXPECT_EQ(back[1].loss, 1.25);
}

TEST(LossCurveTest, ValidationColumnsRoundTripAndEmptyWithout) {
  LossPoint validated{2, 1.25, 0.05, 980};
  validated.hasValidation = true;
  validated.validLoss = 1.5;
  validated.validAccuracy = 0.25;
  validated.validBleu = 12.5;
  std::string csv = lossCsv({{1, 2.5, 0.05, 1000}, validated});
  EXPECT_NE(csv.find("\n1,2.5,0.05,1000.0,,,\n2,1.25,0.05,980.0,1.5,0.25,"
                     "12.5\n"),
            std::string::npos)
      << csv;
  std::vector<LossPoint> back = parseLossCsv(csv);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_FALSE(back[0].validated());
  EXPECT_TRUE(back[1].validated());
  EXPECT_EQ(back[1].validLoss, 1.5);
  EXPECT_EQ(back[1].validAccuracy, 0.25);
  EXPECT_EQ(back[1].validBleu, 12.5);
  // A CSV from before the columns still reads.
  EXPECT_EQ(parseLossCsv("step,loss,lr,tokens_per_second\n3,1,0,0\n")[0].step,
            3);

  // The plot: a dot per validation loss, a square per BLEU (at the top:
  // the highest BLEU), none without validations.
  std::string svg = lossSvg({{1, 4, 0, 0}, validated}, "t");
  EXPECT_NE(svg.find("<circle class=\"valid-loss\" cx=\"620.0\""),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find("<rect class=\"valid-bleu\" x=\"617.0\" y=\"37.0\""),
            std::string::npos)
      << svg;
  EXPECT_EQ(lossSvg({{1, 4, 0, 0}}, "t").find("valid-"), std::string::npos);
}

TEST(LossCurveTest, StepTicksStandAtTheStepsTheyName) {
  // Steps 1..60: the ticks' labels were rounded from 15.75, 30.5 and 45.25
  // while they stood at those places ("16" at step 15.75).
  std::vector<LossPoint> points;
  for (int64_t step = 1; step <= 60; ++step)
    points.push_back({step, 1.0 + 1.0 / double(step), 0.01, 100});
  std::string svg = lossSvg(points, "t");
  // x(step) = left + (step - 1) / 59 * plotW; the label 16 is at x(16).
  const double left = 70, plotW = 550;
  char at[64];
  std::snprintf(at, sizeof(at), "<text x=\"%.1f\"", left + 15.0 / 59.0 * plotW);
  size_t label = svg.find(std::string(at));
  ASSERT_NE(label, std::string::npos) << svg;
  EXPECT_EQ(svg.compare(svg.find('>', label) + 1, 3, "16<"), 0) << svg;
}

TEST(LossCurveTest, ShortRunsHaveOneTickPerStepAndNonePastTheLast) {
  // A 3-step run drew the ticks "2" and "3" twice each, and a 1-step run's
  // axis named a step 2 that never ran.
  for (int64_t steps : {1, 2, 3, 4}) {
    std::vector<LossPoint> points;
    for (int64_t step = 1; step <= steps; ++step)
      points.push_back({step, 1.0, 0.01, 100});
    std::string svg = lossSvg(points, "t");
    for (int64_t step = 1; step <= steps + 1; ++step) {
      std::string label =
          "text-anchor=\"middle\">" + std::to_string(step) + "<";
      size_t count = 0;
      for (size_t at = svg.find(label); at != std::string::npos;
           at = svg.find(label, at + 1))
        ++count;
      EXPECT_EQ(count, step <= steps ? 1u : 0u) << steps << " steps, " << step;
    }
  }
}

TEST(LossCurveTest, ALanguageModelsValidationHasNoBleu) {
  // Its BLEU column stays empty (not "nan", not 0) and reads back as none;
  // the plot draws the loss dot and no BLEU square.
  LossPoint validated{5, 2.0, 0.01, 900};
  validated.hasValidation = true;
  validated.validLoss = 3.5;
  validated.validAccuracy = 0.125;
  std::string csv = lossCsv({validated});
  EXPECT_NE(csv.find("\n5,2,0.01,900.0,3.5,0.125,\n"), std::string::npos)
      << csv;
  std::vector<LossPoint> back = parseLossCsv(csv);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_TRUE(back[0].validated());
  EXPECT_EQ(back[0].validLoss, 3.5);
  EXPECT_TRUE(std::isnan(back[0].validBleu));
  std::string svg = lossSvg({{1, 4, 0, 0}, validated}, "t");
  EXPECT_NE(svg.find("valid-loss"), std::string::npos);
  EXPECT_EQ(svg.find("valid-bleu"), std::string::npos);
  // Nor a BLEU legend or axis note (they were drawn with no BLEU at all).
  EXPECT_EQ(svg.find("BLEU"), std::string::npos) << svg;
  EXPECT_NE(svg.find("valid loss</tspan></text>"), std::string::npos) << svg;
}

TEST(LossCurveTest, SvgHasAxesLabelsAndAPolyline) {
  std::string svg = lossSvg({{1, 4, 0, 0}, {2, 2, 0, 0}, {3, 1, 0, 0}},
                            "fake <loss>");
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("fake &lt;loss&gt;"), std::string::npos);
  EXPECT_NE(svg.find(">step</text>"), std::string::npos);
  EXPECT_NE(svg.find(">loss</text>"), std::string::npos);
  // Step 1 at the left edge, loss 4 at the top, loss 0 at the bottom.
  EXPECT_NE(svg.find("points=\"70.0,40.0 345.0,195.0 620.0,272.5\""),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(lossSvg({}, "empty").find("</svg>"), std::string::npos);
}

TEST(LossCurveTest, WritesBothFiles) {
  ScratchDir dir;
  writeLossCurve(dir.file("run.csv"), {{1, 1, 1, 1}}, "t");
  EXPECT_EQ(svgPathFor(dir.file("run.csv")), dir.file("run.svg"));
  EXPECT_NE(readFile(dir.file("run.svg")).find("<polyline"),
            std::string::npos);
  EXPECT_EQ(readFile(dir.file("run.csv")).rfind("step,loss", 0), 0u);
}

} // namespace

// A validation whose loss is NaN (weights that give NaN logits on the
// validation text) is a validation still: "nan" and its accuracy and BLEU,
// where the row's columns were left empty as if none had run.
TEST(LossCurveTest, ANanValidationLossIsWrittenAndReadBack) {
  LossPoint validated{5, 2.0, 0.01, 900};
  validated.hasValidation = true;
  validated.validLoss = -NAN;
  validated.validAccuracy = 0.125;
  validated.validBleu = 0.0;
  std::string csv = lossCsv({validated});
  EXPECT_NE(csv.find("\n5,2,0.01,900.0,nan,0.125,0\n"), std::string::npos)
      << csv;
  std::vector<LossPoint> back = parseLossCsv(csv);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_TRUE(back[0].validated());
  EXPECT_TRUE(std::isnan(back[0].validLoss));
  EXPECT_EQ(back[0].validAccuracy, 0.125);
}
