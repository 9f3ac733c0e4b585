//===- ProfileTest.cpp - profile tables and Chrome traces -----------------===//
#include "loop/Profile.h"
#include "core/Error.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>

using namespace txrt::driver;

namespace {

const char *kMetadata = R"({"version": 2, "sites": [
  {"site": 1, "entry": "train", "op": "linear", "loc": "m.tx:25:14",
   "scope": "encoder.layers.0", "fused": ["matmul", "add"]},
  {"site": 2, "entry": "train", "op": "layer_norm", "loc": "m.tx:30:3"}]})";

struct ContextGuard {
  txrt_context *ctx = nullptr;
  ContextGuard() { txrt_context_create_with_threads(1, &ctx); }
  ~ContextGuard() { txrt_context_destroy(ctx); }
};

TEST(ProfileTest, SiteTableFromMetadata) {
  std::map<int64_t, SiteInfo> sites = parseSiteTable(kMetadata);
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[1].op, "linear");
  EXPECT_EQ(sites[1].loc, "m.tx:25:14");
  EXPECT_EQ(sites[1].scope, "encoder.layers.0");
  EXPECT_EQ(sites[1].fused, (std::vector<std::string>{"matmul", "add"}));
  EXPECT_TRUE(sites[2].fused.empty());
  EXPECT_TRUE(parseSiteTable(R"({"version": 2})").empty());
  EXPECT_THROW(parseSiteTable(R"({"sites": 3})"), ModelError);
  EXPECT_THROW(parseSiteTable(R"({"sites": [{"op": "x"}]})"), ModelError);
}

/// Two real kernel calls recorded inside one fake entry call.
Profile profileOfOneCall(txrt_context *ctx, int64_t &entryNs) {
  Profile profile(parseSiteTable(kMetadata));
  txrt_context_set_profiling(ctx, 1);
  std::vector<float> x(64 * 64, 1.0f), w(64 * 64, 0.5f), y(64 * 64);
  std::vector<float> gamma(64, 1.0f), beta(64, 0.0f), mean(64), var(64);
  int64_t start = txrt_profile_clock_ns();
  EXPECT_EQ(txrt_linear_fwd(ctx, 1, 64, 64, 64, x.data(), w.data(), nullptr,
                            TXRT_ACTIVATION_NONE, nullptr, y.data()),
            TXRT_OK);
  EXPECT_EQ(txrt_layer_norm_fwd(ctx, 2, 64, 64, y.data(), gamma.data(),
                                beta.data(), 1e-5f, x.data(), mean.data(),
                                var.data()),
            TXRT_OK);
  int64_t end = txrt_profile_clock_ns();
  entryNs = end - start;
  profile.addEntryCall("train", start, end, ctx);
  EXPECT_EQ(txrt_profile_event_count(ctx), 0); // taken and cleared
  return profile;
}

TEST(ProfileTest, TableBySpecLocationAndKind) {
  ContextGuard guard;
  int64_t entryNs = 0;
  Profile profile = profileOfOneCall(guard.ctx, entryNs);
  EXPECT_EQ(profile.totalNs(), entryNs);
  std::ostringstream table;
  profile.writeTable(table);
  std::string text = table.str();
  EXPECT_NE(text.find("1 call of entry 'train'"), std::string::npos) << text;
  EXPECT_NE(text.find("linear_fwd (fused: matmul, add)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("m.tx:25  encoder.layers.0"), std::string::npos) << text;
  EXPECT_NE(text.find("layer_norm_fwd"), std::string::npos) << text;
  EXPECT_NE(text.find("m.tx:30"), std::string::npos) << text;
  EXPECT_NE(text.find("generated code (between runtime calls)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("by op kind:"), std::string::npos) << text;
}

TEST(ProfileTest, ChromeTraceHasTheRequiredFields) {
  ContextGuard guard;
  int64_t entryNs = 0;
  Profile profile = profileOfOneCall(guard.ctx, entryNs);
  std::ostringstream trace;
  profile.writeTrace(trace);
  nlohmann::json root = nlohmann::json::parse(trace.str());
  ASSERT_TRUE(root["traceEvents"].is_array());
  int complete = 0;
  for (const nlohmann::json &event : root["traceEvents"]) {
    // The trace-event format: every event has name, ph, pid, tid; complete
    // events ("X") have ts and dur in microseconds.
    for (const char *key : {"name", "ph", "pid", "tid"})
      EXPECT_TRUE(event.contains(key)) << key << " in " << event.dump();
    if (event["ph"] == "X") {
      ++complete;
      EXPECT_TRUE(event["ts"].is_number());
      EXPECT_TRUE(event["dur"].is_number());
      EXPECT_GE(event["dur"].get<double>(), 0.0);
    }
  }
  EXPECT_EQ(complete, 3); // the entry call and its two kernels
  EXPECT_EQ(root["traceEvents"][2]["args"]["loc"], "m.tx:25:14");
}

} // namespace
