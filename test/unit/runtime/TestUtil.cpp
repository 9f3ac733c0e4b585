//===- TestUtil.cpp - definitions for TestUtil.h --------------------------===//
#include "TestUtil.h"

txrt_context *txrt_test::RuntimeTest::ctx_ = nullptr;
