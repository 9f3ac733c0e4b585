//===- Profile.h - where an entry's time goes, by spec line -----*- C++ -*-===//
//
// `run ENTRY --profile` and `bench --profile`: the context records every
// runtime call (txrt_profile_*: kernel, call site, start, duration, FLOPs);
// the metadata's "sites" table (txc, SiteTable.cpp) says which spec op each
// site is. A Profile collects the records of each entry call and reports:
//  - a table grouped by spec location and op: calls, total ms, share of the
//    entry calls' time, GFLOP/s where the kernel counts FLOPs; the time
//    between runtime calls (the compiled code's own loops: glue, copies) is
//    its own row, "generated code";
//  - a Chrome trace-event JSON (chrome://tracing, Perfetto): one complete
//    event ("ph": "X") per entry call and per runtime call;
//  - the arenas: the planned activation arena of each entry profiled and
//    the parameter arena (the static plan is the high-water mark), and the
//    weights kept packed beside it (txrt_context_set_frozen_parameters).
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_PROFILE_H
#define TXRT_DRIVER_PROFILE_H

#include "txrt/txrt.h"

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace txrt::driver {

struct ModelInfo;

/// A runtime call site as the metadata describes it.
struct SiteInfo {
  std::string entry, op, loc, scope;
  std::vector<std::string> fused;
  /// A forward op's backward at the same site (dropout and attention share
  /// their random stream's id, the site, with their backward): its op.
  std::string gradOp;

  /// The op of a call of `kernel` at this site: the backward's for a
  /// backward kernel (`..._bwd`), else the forward's.
  const std::string &opOf(std::string_view kernel) const;
};

/// The metadata's "sites" table by site id (empty when absent); throws
/// ModelError on a malformed table.
std::map<int64_t, SiteInfo> parseSiteTable(std::string_view metadataJson);

/// " at m.tx:14:7 (cross_entropy)": where in the spec call site `site` of
/// the metadata's "sites" table is, for the error of an entry whose call
/// failed (txrt_last_error_site); "" when unknown.
std::string siteLocation(std::string_view metadataJson, int64_t site);

/// --profile, --profile-trace FILE, --profile-rows N of `run` and `bench`.
struct ProfileOptions {
  bool enabled = false;
  std::optional<std::string> tracePath;
  int64_t rows = 15; ///< rows of the by-location table (0: all)
  /// The metadata's call-site table (filled by the dispatcher when
  /// enabled).
  std::map<int64_t, SiteInfo> sites;
};

class Profile {
public:
  explicit Profile(std::map<int64_t, SiteInfo> sites)
      : sites_(std::move(sites)) {}

  /// Records one call of `entry` that took [startNs, endNs) and the
  /// runtime calls the context recorded meanwhile (then clears them).
  void addEntryCall(const std::string &entry, int64_t startNs, int64_t endNs,
                    txrt_context *ctx);

  /// The sum of the entry calls' durations, in ns.
  int64_t totalNs() const;
  bool empty() const { return calls_.empty(); }

  /// The table, at most `maxRows` rows by total time (0: all).
  void writeTable(std::ostream &os, size_t maxRows = 0) const;
  /// Chrome's trace-event format (a JSON object with "traceEvents").
  void writeTrace(std::ostream &os) const;
  /// The activation arenas of the entries profiled and the parameters.
  void writeArenas(std::ostream &os, const ModelInfo &model) const;
  /// The table (options.rows rows) and the arenas.
  void writeReport(std::ostream &os, const ModelInfo &model,
                   const ProfileOptions &options) const;
  /// The trace to options.tracePath (written atomically) when set, and a
  /// line saying so on `os`.
  void writeTraceFile(std::ostream &os, const ProfileOptions &options) const;

private:
  struct Call {
    std::string kernel;
    int64_t site, startNs, durationNs;
    double flops;
  };
  struct EntryCall {
    std::string entry;
    int64_t startNs, endNs;
    std::vector<Call> calls;
  };
  std::map<int64_t, SiteInfo> sites_;
  std::vector<EntryCall> calls_;
  /// The most packed weight copies the context held after a call.
  int64_t packedCount_ = 0, packedBytes_ = 0;
};

} // namespace txrt::driver

#endif // TXRT_DRIVER_PROFILE_H
