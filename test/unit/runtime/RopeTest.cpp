//===- RopeTest.cpp - rotary position embedding ---------------------------===//
//
// txrt_rope against a double-precision reference of the Hugging Face
// (GPT-NeoX) convention, with position offsets (a decoding step), several
// heads per row, in place; the inverse undoes the rotation (it is the
// backward: a rotation's transpose). Partial rotations (txrt_rope_partial:
// GPT-NeoX's rotary_pct) against the reference over the first features.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include <cmath>

using namespace txrt_test;

namespace {

Doubles referenceRope(int64_t outer, int64_t seq, int64_t heads, int64_t d,
                      const Doubles &x, int64_t offset, double base) {
  Doubles y(x.size());
  const int64_t half = d / 2, width = heads * d;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t t = 0; t < seq; ++t)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < half; ++i) {
          double theta =
              double(offset + t) / std::pow(base, double(2 * i) / double(d));
          int64_t at = (o * seq + t) * width + h * d + i;
          y[at] = x[at] * std::cos(theta) - x[at + half] * std::sin(theta);
          y[at + half] =
              x[at + half] * std::cos(theta) + x[at] * std::sin(theta);
        }
  return y;
}

class RopeTest : public RuntimeTest {};

TEST_F(RopeTest, MatchesTheReference) {
  uint32_t seed = 1;
  for (auto [outer, seq, heads, d, offset] :
       std::vector<std::array<int64_t, 5>>{{1, 1, 1, 2, 0},
                                           {2, 7, 3, 8, 0},
                                           {3, 5, 2, 64, 0},
                                           {2, 1, 4, 16, 37},
                                           {1, 300, 1, 6, 5}}) {
    SCOPED_TRACE("outer=" + std::to_string(outer) +
                 " seq=" + std::to_string(seq) + " heads=" +
                 std::to_string(heads) + " d=" + std::to_string(d) +
                 " offset=" + std::to_string(offset));
    Floats x = randomFloats(outer * seq * heads * d, seed++, -2, 2);
    Floats y(x.size());
    expectOk(txrt_rope(ctx_, 1, outer, seq, heads, d, x.data(), y.data(),
                       offset, 10000.0f, 0));
    // Angles are float32 as Hugging Face computes them: up to p * 6e-8.
    double tolerance = 1e-6 * double(offset + seq);
    expectClose(y, referenceRope(outer, seq, heads, d, toDoubles(x), offset,
                                 10000.0),
                tolerance + 1e-6, 1e-5, "y");
    // The inverse (the gradient) undoes it, in place.
    Floats back = y;
    expectOk(txrt_rope(ctx_, 1, outer, seq, heads, d, back.data(),
                       back.data(), offset, 10000.0f, 1));
    expectClose(back, toDoubles(x), 1e-5, 1e-5, "inverse");
  }
}

TEST_F(RopeTest, OtherBase) {
  Floats x = randomFloats(2 * 4 * 8, 9), y(x.size());
  expectOk(txrt_rope(ctx_, 1, 2, 4, 1, 8, x.data(), y.data(), 3, 500000.0f, 0));
  expectClose(y, referenceRope(2, 4, 1, 8, toDoubles(x), 3, 500000.0), 1e-5,
              1e-5, "y, base 500000 (Llama 3)");
}

// With the angles given as a table, the rotation is the same as txrt_rope's
// when the table holds txrt_rope's angles, and the inverse undoes it.
TEST_F(RopeTest, AngleTableMatchesTheBuiltinAngles) {
  const int64_t outer = 3, seq = 5, heads = 2, d = 8, half = d / 2;
  Floats x = randomFloats(outer * seq * heads * d, 7), y(x.size()),
         z(x.size()), back(x.size());
  Floats angles(seq * half);
  for (int64_t t = 0; t < seq; ++t)
    for (int64_t i = 0; i < half; ++i)
      angles[t * half + i] =
          float(t) * (1.0f / std::pow(1e4f, float(2 * i) / float(d)));
  expectOk(txrt_rope(ctx_, 1, outer, seq, heads, d, x.data(), y.data(), 0,
                     1e4f, 0));
  expectOk(txrt_rope_angles(ctx_, 2, outer, seq, heads, d, x.data(),
                            z.data(), angles.data(), 0));
  expectClose(z, toDoubles(y), 0, 0, "rope by table");
  expectOk(txrt_rope_angles(ctx_, 3, outer, seq, heads, d, z.data(),
                            back.data(), angles.data(), 1));
  expectClose(back, toDoubles(x), 1e-6, 1e-6, "inverse");
  EXPECT_EQ(txrt_rope_angles(ctx_, 4, outer, seq, heads, d, x.data(),
                             z.data(), nullptr, 0),
            TXRT_ERROR_INVALID_ARGUMENT);
}

TEST_F(RopeTest, BadArgumentsAreErrors) {
  Floats x(6), y(6);
  EXPECT_EQ(txrt_rope(ctx_, 1, 1, 2, 1, 3, x.data(), y.data(), 0, 1e4f, 0),
            TXRT_ERROR_INVALID_ARGUMENT); // odd head_dim
  EXPECT_EQ(txrt_rope(ctx_, 1, 1, 3, 1, 2, x.data(), y.data(), -1, 1e4f, 0),
            TXRT_ERROR_INVALID_ARGUMENT); // negative offset
  EXPECT_EQ(txrt_rope(ctx_, 1, 1, 3, 1, 2, x.data(), y.data(), 0, 1.0f, 0),
            TXRT_ERROR_INVALID_ARGUMENT); // base
}

// Each head's first `rot` features rotate as a head of `rot` would (the
// reference over them), the rest come through unchanged; in place too,
// and by an angle table of rot/2 angles a position.
TEST_F(RopeTest, PartialRotationRotatesTheFirstFeaturesOnly) {
  const int64_t outer = 2, seq = 6, heads = 3, d = 20, rot = 8, offset = 4;
  Floats x = randomFloats(outer * seq * heads * d, 21, -2, 2), y(x.size());
  expectOk(txrt_rope_partial(ctx_, 1, outer, seq, heads, d, rot, x.data(),
                             y.data(), offset, 10000.0f, 0));
  // The reference: the rotated part as heads of rot features.
  Doubles part, rest;
  for (int64_t row = 0; row < outer * seq * heads; ++row)
    for (int64_t j = 0; j < d; ++j)
      (j < rot ? part : rest).push_back(double(x[row * d + j]));
  Doubles want = referenceRope(outer, seq, heads, rot, part, offset, 10000.0);
  Doubles expected;
  for (int64_t row = 0, r = 0, k = 0; row < outer * seq * heads; ++row)
    for (int64_t j = 0; j < d; ++j)
      expected.push_back(j < rot ? want[r++] : rest[k++]);
  expectClose(y, expected, 1e-5, 1e-5, "partial y");
  Floats inPlace = x;
  expectOk(txrt_rope_partial(ctx_, 1, outer, seq, heads, d, rot, inPlace.data(),
                             inPlace.data(), offset, 10000.0f, 0));
  expectClose(inPlace, toDoubles(y), 0, 0, "in place");
  Floats back(x.size());
  expectOk(txrt_rope_partial(ctx_, 1, outer, seq, heads, d, rot, y.data(),
                             back.data(), offset, 10000.0f, 1));
  expectClose(back, toDoubles(x), 1e-5, 1e-5, "inverse");
  // By a table holding the same angles.
  Floats angles(seq * rot / 2), z(x.size());
  for (int64_t t = 0; t < seq; ++t)
    for (int64_t i = 0; i < rot / 2; ++i)
      angles[t * rot / 2 + i] =
          float(offset + t) *
          (1.0f / std::pow(1e4f, float(2 * i) / float(rot)));
  expectOk(txrt_rope_angles_partial(ctx_, 2, outer, seq, heads, d, rot,
                                    x.data(), z.data(), angles.data(), 0));
  expectClose(z, toDoubles(y), 0, 0, "partial by table");
  // The whole head is txrt_rope; odd or oversized parts are errors.
  Floats whole(x.size()), plain(x.size());
  expectOk(txrt_rope_partial(ctx_, 1, outer, seq, heads, d, d, x.data(),
                             whole.data(), offset, 10000.0f, 0));
  expectOk(txrt_rope(ctx_, 1, outer, seq, heads, d, x.data(), plain.data(),
                     offset, 10000.0f, 0));
  expectClose(whole, toDoubles(plain), 0, 0, "rotary_dim = head_dim");
  for (int64_t bad : {int64_t(3), int64_t(0), int64_t(22)})
    EXPECT_EQ(txrt_rope_partial(ctx_, 1, outer, seq, heads, d, bad, x.data(),
                                y.data(), 0, 1e4f, 0),
              TXRT_ERROR_INVALID_ARGUMENT)
        << "rotary_dim " << bad;
}

} // namespace
