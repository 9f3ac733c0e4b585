//===- DivergenceTest.cpp - finding the first update that went non-finite -===//
//
// DivergenceWatch on the fake seq2seq model's arena with a stand-in "step"
// that writes an infinity at a chosen update: a scan right after it names
// it at once; a scan after unscanned updates replays from the restore
// point (the start or the last save) to name the same update; a replay
// that does not meet it again reports the range of steps.
//
//===----------------------------------------------------------------------===//
#include "loop/Divergence.h"
#include "loop/FiniteCheck.h"
#include "core/ModelInfo.h"
#include "TestUtil.h"

#include <cmath>

extern "C" const char fake_seq2seq_json[];

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

class DivergenceTest : public ::testing::Test {
protected:
  DivergenceTest() : model(ModelInfo::parse(fake_seq2seq_json)), params(model) {
    params.initialize(1);
  }
  /// Update `step`: nudges a parameter; the update of kBadStep makes
  /// exp_avg of 'out.bias' infinite.
  double step(int64_t step) {
    ++steps;
    const ParamInfo &bias = *model.findParam("out.bias");
    params.param(bias)[0] += 1.0f;
    if (step == badStep)
      params.expAvg(bias)[7] = INFINITY;
    return 0.5 * double(step);
  }
  DivergenceWatch watch(double budget) {
    return DivergenceWatch(
        view(), 0, [this](int64_t s) { return step(s); },
        [this] {
          ++restores;
          params.initialize(1);
        },
        budget);
  }

  DivergenceWatch::ArenaView view() {
    return [this]() -> const ParameterArena & { return params; };
  }

  ModelInfo model;
  ParameterArena params;
  int64_t badStep = 4, steps = 0, restores = 0;
};

TEST_F(DivergenceTest, ScanRightAfterTheBadUpdateNamesIt) {
  DivergenceWatch w = watch(/*budget=*/1e9); // scan after every update
  for (int64_t s = 1; s <= 3; ++s) {
    step(s);
    EXPECT_FALSE(w.afterStep(s, 0.001, 0.5 * double(s)));
  }
  step(4);
  std::optional<Divergence> found = w.afterStep(4, 0.001, 2.0);
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->exact());
  EXPECT_EQ(found->describe(), "the update of step 4 made exp_avg of "
                               "'out.bias' non-finite (inf at [7]; the loss "
                               "before it was 2.0000)");
  EXPECT_EQ(restores, 0);
}

// The step's own loss already non-finite: printed "the loss before it was
// -nan", as if a value. Now it says what that means.
TEST(DivergenceDescribeTest, ANonFiniteLossBeforeTheUpdateIsSaidInWords) {
  Divergence nan{2, 2, "'w'", "nan at [4, 0]", -NAN};
  EXPECT_EQ(nan.describe(),
            "the update of step 2 made 'w' non-finite (nan at [4, 0]); that "
            "step's loss was already nan, computed from finite parameters: "
            "the forward overflowed (lower the learning rate) or computed an "
            "undefined value on this batch (log or sqrt of a negative, 0 / "
            "0: at step 1 the parameters are the initial ones, and the cause "
            "is the spec's arithmetic)");
  Divergence inf{3, 3, "'w'", "inf at [1]", -INFINITY};
  EXPECT_NE(inf.describe().find("loss was already -inf,"), std::string::npos)
      << inf.describe();
}

// A loss of 3e35 printed "%.4f" into 32 bytes: 31 digits, no point, the
// magnitude lost. Large ones are in scientific notation.
TEST(DivergenceDescribeTest, ALargeLossKeepsItsMagnitude) {
  Divergence large{5, 5, "'w'", "inf at [0]", 2.982621e35};
  EXPECT_NE(large.describe().find("the loss before it was 2.982621e+35)"),
            std::string::npos)
      << large.describe();
}

TEST_F(DivergenceTest, LaterScanReplaysToTheFirstBadUpdate) {
  DivergenceWatch w = watch(/*budget=*/0); // only the scans asked for
  for (int64_t s = 1; s <= 9; ++s) {
    step(s);
    EXPECT_FALSE(w.afterStep(s, 0.001, 0.0));
  }
  EXPECT_EQ(w.scans(), 1); // the first update (nothing spent yet)
  int64_t before = steps;
  std::optional<Divergence> found = w.check(9, 4.5);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->step, 4);
  EXPECT_TRUE(found->exact());
  EXPECT_EQ(found->tensor, "exp_avg of 'out.bias'");
  EXPECT_DOUBLE_EQ(found->lossBefore, 2.0);
  EXPECT_EQ(restores, 1);
  EXPECT_EQ(steps - before, 4); // replayed updates 1..4, no further
}

TEST_F(DivergenceTest, ReplayStartsFromTheLastSave) {
  badStep = 7;
  DivergenceWatch w = watch(/*budget=*/0);
  for (int64_t s = 1; s <= 5; ++s)
    step(s);
  EXPECT_FALSE(w.check(5, 2.5));
  w.savedAt(5); // the restore function now brings back step 5's state
  for (int64_t s = 6; s <= 9; ++s)
    step(s);
  int64_t before = steps;
  std::optional<Divergence> found = w.check(9, 4.5);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->step, 7);
  EXPECT_EQ(steps - before, 2); // replayed updates 6 and 7 only
}

TEST_F(DivergenceTest, ReplayThatDoesNotMeetItAgainGivesTheRange) {
  // Replayed updates change nothing, so the replay never meets the NaN.
  DivergenceWatch w(
      view(), 0, [](int64_t) { return 0.0; }, [this] { params.initialize(1); },
      /*budget=*/0);
  EXPECT_FALSE(w.check(2, 0.0));
  params.expAvgSq(*model.findParam("src_embed.weight"))[9] = NAN;
  std::optional<Divergence> found = w.check(6, 0.0);
  ASSERT_TRUE(found);
  EXPECT_FALSE(found->exact());
  EXPECT_EQ(found->describe(),
            "exp_avg_sq of 'src_embed.weight' became non-finite (nan at "
            "[1, 1]) in one of the updates of steps 3..6");
}

TEST(FiniteCheckTest, FindsTheFirstNonFiniteValueInAnyBlock) {
  std::vector<float> values(10000, 1.5f);
  EXPECT_EQ(firstNonFinite(values.data(), int64_t(values.size())), -1);
  values[9000] = -INFINITY;
  values[9999] = NAN;
  EXPECT_EQ(firstNonFinite(values.data(), int64_t(values.size())), 9000);
  EXPECT_EQ(describeNonFinite(values.data(), 9000, {100, 100}),
            "-inf at [90, 0]");
  values[5] = std::numeric_limits<float>::max(); // finite
  values[6] = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(firstNonFinite(values.data(), 100), -1);
}

} // namespace
