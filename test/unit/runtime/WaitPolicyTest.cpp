//===- WaitPolicyTest.cpp - txrt_apply_default_wait_policy ----------------===//
//
// The default applies only where the environment names no wait policy, and
// then sets GOMP_SPINCOUNT to kDefaultSpinCount. (Whether libgomp obeys it is
// the executable's business: E2E/wait-policy.test.)
//
//===----------------------------------------------------------------------===//
#include "WaitPolicy.h"

#include "txrt/txrt.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace {

/// Saves an environment variable and restores it on destruction.
class SavedVariable {
public:
  explicit SavedVariable(const char *name) : name_(name) {
    if (const char *value = std::getenv(name))
      value_ = value;
  }
  ~SavedVariable() {
    if (value_)
      setenv(name_, value_->c_str(), 1);
    else
      unsetenv(name_);
  }

private:
  const char *name_;
  std::optional<std::string> value_;
};

TEST(WaitPolicyTest, SetsAShortSpinWhenTheEnvironmentHasNoPolicy) {
  SavedVariable policy("OMP_WAIT_POLICY"), spins("GOMP_SPINCOUNT");
  unsetenv("OMP_WAIT_POLICY");
  unsetenv("GOMP_SPINCOUNT");
  EXPECT_EQ(txrt_apply_default_wait_policy(), 1);
  ASSERT_NE(std::getenv("GOMP_SPINCOUNT"), nullptr);
  EXPECT_STREQ(std::getenv("GOMP_SPINCOUNT"), txrt::kDefaultSpinCount);
  EXPECT_EQ(std::getenv("OMP_WAIT_POLICY"), nullptr);
}

TEST(WaitPolicyTest, LeavesTheUsersPolicyAlone) {
  SavedVariable policy("OMP_WAIT_POLICY"), spins("GOMP_SPINCOUNT");
  unsetenv("GOMP_SPINCOUNT");
  setenv("OMP_WAIT_POLICY", "active", 1);
  EXPECT_EQ(txrt_apply_default_wait_policy(), 0);
  EXPECT_EQ(std::getenv("GOMP_SPINCOUNT"), nullptr);

  unsetenv("OMP_WAIT_POLICY");
  setenv("GOMP_SPINCOUNT", "infinite", 1);
  EXPECT_EQ(txrt_apply_default_wait_policy(), 0);
  EXPECT_STREQ(std::getenv("GOMP_SPINCOUNT"), "infinite");
}

} // namespace
