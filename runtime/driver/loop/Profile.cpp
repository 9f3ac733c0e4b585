//===- Profile.cpp - where an entry's time goes, by spec line -------------===//
#include "loop/Profile.h"
#include "core/Error.h"
#include "core/ModelInfo.h"
#include "formats/FileIO.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <set>
#include <sstream>

namespace txrt::driver {

namespace {

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  return buffer;
}

std::string padLeft(const std::string &text, size_t width) {
  return text.size() >= width ? text
                              : std::string(width - text.size(), ' ') + text;
}

std::string padRight(const std::string &text, size_t width) {
  return text.size() >= width ? text
                              : text + std::string(width - text.size(), ' ');
}

/// "txrt_linear_fwd" -> "linear_fwd".
std::string shortKernel(const std::string &kernel) {
  return kernel.rfind("txrt_", 0) == 0 ? kernel.substr(5) : kernel;
}

/// "examples/gpt/model.tx:21:19" -> "model.tx:21".
std::string shortLoc(const std::string &loc) {
  std::string text = loc;
  size_t slash = text.rfind('/');
  if (slash != std::string::npos)
    text = text.substr(slash + 1);
  size_t lastColon = text.rfind(':');
  if (lastColon != std::string::npos &&
      text.find(':') != lastColon) // file:line:col -> file:line
    text = text.substr(0, lastColon);
  return text;
}

struct Row {
  std::string label, where;
  int64_t calls = 0, ns = 0;
  double flops = 0.0;
  bool countsFlops = false;
};

void printRows(std::ostream &os, std::vector<Row> rows, int64_t total,
               size_t maxRows, const std::string &whereHeader) {
  std::sort(rows.begin(), rows.end(),
            [](const Row &a, const Row &b) { return a.ns > b.ns; });
  size_t shown = maxRows ? std::min(maxRows, rows.size()) : rows.size();
  size_t labelWidth = 4;
  for (size_t i = 0; i < shown; ++i)
    labelWidth = std::max(labelWidth, rows[i].label.size());
  labelWidth = std::min<size_t>(labelWidth, 60);
  os << "  " << padLeft("share", 7) << " " << padLeft("ms", 9) << " "
     << padLeft("calls", 6) << " " << padLeft("GFLOP/s", 8) << "  "
     << padRight("op", labelWidth) << "  " << whereHeader << "\n";
  for (size_t i = 0; i < shown; ++i) {
    const Row &r = rows[i];
    double share = total > 0 ? 100.0 * double(r.ns) / double(total) : 0.0;
    std::string gflops =
        r.countsFlops && r.ns > 0 ? fixed(r.flops / double(r.ns), 1) : "-";
    os << "  " << padLeft(fixed(share, 1) + " %", 7) << " "
       << padLeft(fixed(double(r.ns) / 1e6, 2), 9) << " "
       << padLeft(std::to_string(r.calls), 6) << " " << padLeft(gflops, 8)
       << "  " << padRight(r.label, labelWidth) << "  " << r.where << "\n";
  }
  if (shown < rows.size()) {
    int64_t rest = 0;
    for (size_t i = shown; i < rows.size(); ++i)
      rest += rows[i].ns;
    os << "  "
       << padLeft(
              fixed(total > 0 ? 100.0 * double(rest) / double(total) : 0.0, 1) +
                  " %",
              7)
       << " " << padLeft(fixed(double(rest) / 1e6, 2), 9) << "  ("
       << rows.size() - shown << " more rows)\n";
  }
}

} // namespace

std::map<int64_t, SiteInfo> parseSiteTable(std::string_view metadataJson) {
  std::map<int64_t, SiteInfo> sites;
  nlohmann::json root = nlohmann::json::parse(metadataJson, nullptr, false);
  if (root.is_discarded() || !root.is_object() || !root.contains("sites"))
    return sites;
  const nlohmann::json &table = root["sites"];
  if (!table.is_array())
    throw ModelError("model metadata: \"sites\" is not an array");
  for (const nlohmann::json &item : table) {
    if (!item.is_object() || !item.contains("site") ||
        !item["site"].is_number_integer())
      throw ModelError("model metadata: a \"sites\" item has no integer "
                       "\"site\"");
    SiteInfo info;
    auto text = [&](const char *key) {
      return item.contains(key) && item[key].is_string()
                 ? item[key].get<std::string>()
                 : std::string();
    };
    info.entry = text("entry");
    info.op = text("op");
    info.loc = text("loc");
    info.scope = text("scope");
    if (item.contains("fused") && item["fused"].is_array())
      for (const nlohmann::json &name : item["fused"])
        if (name.is_string())
          info.fused.push_back(name.get<std::string>());
    // A site listed twice is a forward op and its backward (they share
    // the random stream's id): both kept, each call labelled by its kernel
    // (the backward's row replaced the forward's, and every forward
    // dropout and attention call was labelled as its backward).
    auto [it, inserted] = sites.try_emplace(item["site"].get<int64_t>(), info);
    if (!inserted) {
      std::string_view op = info.op;
      bool grad = op.size() > 5 && op.substr(op.size() - 5) == "_grad";
      if (grad)
        it->second.gradOp = info.op;
      else {
        it->second.gradOp = it->second.op;
        it->second.op = info.op;
      }
    }
  }
  return sites;
}

const std::string &SiteInfo::opOf(std::string_view kernel) const {
  bool backward = kernel.find("_bwd") != std::string_view::npos ||
                  kernel.find("_grad") != std::string_view::npos;
  return backward && !gradOp.empty() ? gradOp : op;
}

std::string siteLocation(std::string_view metadataJson, int64_t site) {
  std::map<int64_t, SiteInfo> sites;
  try {
    sites = parseSiteTable(metadataJson);
  } catch (const std::exception &) {
    return ""; // the message this adds to must come out anyway
  }
  auto found = sites.find(site);
  if (found == sites.end() || found->second.loc.empty())
    return "";
  const SiteInfo &info = found->second;
  return " at " + info.loc + (info.op.empty() ? "" : " (" + info.op + ")");
}

void Profile::addEntryCall(const std::string &entry, int64_t startNs,
                           int64_t endNs, txrt_context *ctx) {
  EntryCall call{entry, startNs, endNs, {}};
  int64_t count = txrt_profile_event_count(ctx);
  const txrt_profile_event *events = txrt_profile_events(ctx);
  for (int64_t i = 0; i < count; ++i)
    call.calls.push_back({events[i].kernel ? events[i].kernel : "?",
                          events[i].site, events[i].start_ns,
                          events[i].duration_ns, events[i].flops});
  txrt_profile_clear(ctx);
  calls_.push_back(std::move(call));
  int64_t packed = 0, packedBytes = 0;
  txrt_context_packed_weights(ctx, &packed, &packedBytes);
  if (packedBytes > packedBytes_) {
    packedCount_ = packed;
    packedBytes_ = packedBytes;
  }
}

int64_t Profile::totalNs() const {
  int64_t total = 0;
  for (const EntryCall &call : calls_)
    total += call.endNs - call.startNs;
  return total;
}

void Profile::writeTable(std::ostream &os, size_t maxRows) const {
  int64_t total = totalNs();
  std::map<std::string, int64_t> perEntry;
  for (const EntryCall &call : calls_)
    ++perEntry[call.entry];
  os << "profile: ";
  bool first = true;
  for (const auto &[entry, n] : perEntry) {
    os << (first ? "" : ", ") << n << " call" << (n == 1 ? "" : "s")
       << " of entry '" << entry << "'";
    first = false;
  }
  os << ", " << fixed(double(total) / 1e6, 2) << " ms in all";
  if (calls_.size() > 1)
    os << " (" << fixed(double(total) / 1e6 / double(calls_.size()), 2)
       << " ms per call)";
  os << "\n";

  // By spec location: one row per (site's op and location, kernel). Rows
  // of one op kind, line and scope at two columns (`wte[ids] +
  // wpe[arange(T)]`: two gathers) show their columns: they were one row.
  std::map<std::string, std::set<std::string>> columnsOf;
  auto siteLabel = [&](const SiteInfo &s, const std::string &kernel) {
    std::string label = kernel;
    if (!s.fused.empty()) {
      label += " (fused:";
      for (size_t i = 0; i < s.fused.size(); ++i)
        label += (i ? ", " : " ") + s.fused[i];
      label += ")";
    }
    return label;
  };
  for (const EntryCall &call : calls_)
    for (const Call &c : call.calls)
      if (auto site = sites_.find(c.site); site != sites_.end())
        columnsOf[siteLabel(site->second, shortKernel(c.kernel)) + "\x1f" +
                  shortLoc(site->second.loc) + "\x1f" + site->second.scope]
            .insert(site->second.loc);
  std::map<std::string, Row> byLoc, byKind;
  int64_t generated = 0, generatedCalls = 0;
  for (const EntryCall &call : calls_) {
    int64_t inKernels = 0;
    for (const Call &c : call.calls) {
      inKernels += c.durationNs;
      auto site = sites_.find(c.site);
      std::string kernel = shortKernel(c.kernel);
      std::string label = kernel, where = "-";
      if (site != sites_.end()) {
        const SiteInfo &s = site->second;
        label = siteLabel(s, kernel);
        std::string at = shortLoc(s.loc);
        if (columnsOf[label + "\x1f" + at + "\x1f" + s.scope].size() > 1) {
          size_t slash = s.loc.rfind('/');
          at = slash == std::string::npos ? s.loc : s.loc.substr(slash + 1);
        }
        where = at + (s.scope.empty() ? "" : "  " + s.scope);
      }
      for (auto [map, key, rowLabel, rowWhere] :
           {std::tuple{&byLoc, label + "\x1f" + where, label, where},
            std::tuple{&byKind, kernel, kernel, std::string()}}) {
        Row &row = (*map)[key];
        row.label = rowLabel;
        row.where = rowWhere;
        ++row.calls;
        row.ns += c.durationNs;
        row.flops += c.flops;
        row.countsFlops = row.countsFlops || c.flops > 0;
      }
    }
    generated += std::max<int64_t>(0, (call.endNs - call.startNs) - inKernels);
    ++generatedCalls;
  }
  Row glue{"generated code (between runtime calls)",
           "-",
           generatedCalls,
           generated,
           0.0,
           false};
  std::vector<Row> locRows, kindRows;
  for (auto &[key, row] : byLoc)
    locRows.push_back(row);
  locRows.push_back(glue);
  for (auto &[key, row] : byKind)
    kindRows.push_back(row);
  kindRows.push_back(glue);
  os << "\nby spec location (runtime calls; time between them is the "
        "compiled code's own loops):\n";
  printRows(os, locRows, total, maxRows, "where (scope)");
  os << "\nby op kind:\n";
  printRows(os, kindRows, total, 0, "");
}

void Profile::writeTrace(std::ostream &os) const {
  nlohmann::json events = nlohmann::json::array();
  int64_t origin = calls_.empty() ? 0 : calls_.front().startNs;
  auto us = [&](int64_t ns) { return double(ns - origin) / 1000.0; };
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", 1},
                    {"tid", 1},
                    {"args", {{"name", "txc model"}}}});
  for (const EntryCall &call : calls_) {
    events.push_back({{"name", call.entry},
                      {"cat", "entry"},
                      {"ph", "X"},
                      {"ts", us(call.startNs)},
                      {"dur", double(call.endNs - call.startNs) / 1000.0},
                      {"pid", 1},
                      {"tid", 1}});
    for (const Call &c : call.calls) {
      nlohmann::json args = {{"site", c.site}};
      auto site = sites_.find(c.site);
      if (site != sites_.end()) {
        args["op"] = site->second.opOf(c.kernel);
        args["loc"] = site->second.loc;
        if (!site->second.scope.empty())
          args["scope"] = site->second.scope;
      }
      if (c.flops > 0)
        args["gflop"] = c.flops / 1e9;
      events.push_back({{"name", shortKernel(c.kernel)},
                        {"cat", "runtime"},
                        {"ph", "X"},
                        {"ts", us(c.startNs)},
                        {"dur", double(c.durationNs) / 1000.0},
                        {"pid", 1},
                        {"tid", 1},
                        {"args", args}});
    }
  }
  nlohmann::json root = {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  os << root.dump() << "\n";
}

void Profile::writeReport(std::ostream &os, const ModelInfo &model,
                          const ProfileOptions &options) const {
  writeTable(os, size_t(options.rows));
  writeArenas(os, model);
}

void Profile::writeTraceFile(std::ostream &os,
                             const ProfileOptions &options) const {
  if (!options.tracePath)
    return;
  std::ostringstream trace;
  writeTrace(trace);
  AtomicFileWriter writer(*options.tracePath);
  writer.write(trace.str());
  writer.commit();
  os << "wrote the Chrome trace to " << *options.tracePath << "\n";
}

void Profile::writeArenas(std::ostream &os, const ModelInfo &model) const {
  std::map<std::string, bool> seen;
  for (const EntryCall &call : calls_)
    seen[call.entry] = true;
  auto mib = [](int64_t bytes) { return fixed(double(bytes) / 1048576.0, 1); };
  os << "arenas (the static plan is the high-water mark): parameters "
     << mib(model.paramArenaBytes) << " MiB";
  for (const EntryInfo &entry : model.entries)
    if (seen.count(entry.name))
      os << ", activations of '" << entry.name << "' " << mib(entry.arenaBytes)
         << " MiB (" << mib(entry.tensorBytes) << " MiB unplanned)";
  if (packedCount_ > 0)
    os << "; weights packed for the products: " << packedCount_ << " ("
       << mib(packedBytes_) << " MiB)";
  os << "\n";
}

} // namespace txrt::driver
