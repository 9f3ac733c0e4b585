//===- ErrorTest.cpp - the driver's error lines ---------------------------===//
#include "core/Error.h"

#include <gtest/gtest.h>

using namespace txrt::driver;

namespace {

TEST(ErrorTest, EachLineIsAnErrorAndAClosingNoteIsANote) {
  EXPECT_EQ(errorLines("a.tsv:2: bad\na.tsv:3: bad"),
            "error: a.tsv:2: bad\nerror: a.tsv:3: bad\n");
  // "error: note: ..." read as one more error.
  EXPECT_EQ(errorLines("a.tsv:2: bad\nnote: fix it", "rank 1: "),
            "error: rank 1: a.tsv:2: bad\nnote: rank 1: fix it\n");
}

} // namespace
