// Our export of a native capture (the sample session, captured on an H100) as PyTorch's profiler
// writes traces: it imports back with its ops, iterations and per-iteration GPU time, and its
// events carry the fields PyTorch's own traces (the fixtures) carry for the same kinds.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "fixture_json.h"
#include "fusionscope/analysis/stats.h"
#include "fusionscope/interchange/chrome_trace_export.h"
#include "fusionscope/interchange/torch_trace_import.h"
#include "fusionscope/storage/session_store.h"
#include "test_paths.h"

namespace {

using fusionscope::storage::RunData;
using fusionscope::storage::SessionStore;
namespace interchange = fusionscope::interchange;
namespace t = fusionscope::testing;

SessionStore sample() {
  return SessionStore::open(t::source_dir() / "assets" / "sample.fsdb");
}

// GPU time of the timed iterations, per timed iteration, as `report` computes it.
double gpu_per_iteration(const RunData& run) {
  const std::vector<bool> timed = fusionscope::analysis::timed_kernel_mask(run);
  if (timed.empty() || run.info.iterations <= 0) return 0;
  int64_t sum = 0;
  for (size_t i = 0; i < run.kernels.size(); ++i) {
    if (timed[i]) sum += run.kernels[i].end_ns - run.kernels[i].start_ns;
  }
  return static_cast<double>(sum) / run.info.iterations;
}

std::map<std::string, int> ops_of(const RunData& run) {
  std::map<std::string, int> ops;
  for (const auto& k : run.kernels) ++ops[run.str(k.name) + " @ " + run.str(k.op)];
  return ops;
}

RunData reimport(const SessionStore& store, const RunData& run) {
  std::ostringstream out;
  interchange::write_chrome_trace(out, run, store.session());
  const interchange::TorchTrace trace = interchange::parse_torch_trace(out.str(), "export.json");
  return interchange::to_run_data(trace);
}

TEST(NativeExport, ReimportGivesBackOpsIterationsAndTimePerIteration) {
  const SessionStore store = sample();
  int checked = 0;
  for (const auto& info : store.runs()) {
    const RunData run = store.load_run(info.id);
    if (run.kernels.empty() || run.api_calls.empty()) continue;
    const RunData again = reimport(store, run);
    SCOPED_TRACE(info.name);
    EXPECT_EQ(again.kernels.size(), run.kernels.size());
    EXPECT_EQ(ops_of(again), ops_of(run));  // mangled names and ops, kernel by kernel
    EXPECT_EQ(again.info.warmup, run.info.warmup);
    EXPECT_EQ(again.info.iterations, run.info.iterations);
    const double before = gpu_per_iteration(run);
    EXPECT_GT(before, 0);
    EXPECT_DOUBLE_EQ(gpu_per_iteration(again), before);
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

TEST(NativeExport, KernelNamesAreDemangledWithTheMangledNameInArgs) {
  const SessionStore store = sample();
  const RunData run = store.load_run(18);  // geglu-post / eager: our pointwise kernels
  std::ostringstream out;
  interchange::write_chrome_trace(out, run, store.session());
  const nlohmann::json trace = nlohmann::json::parse(out.str());
  int demangled = 0;
  std::set<std::string> steps;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("cat", "") == "kernel" && e["args"].contains("mangled name")) {
      EXPECT_EQ(e["name"].get<std::string>().find("_Z"), std::string::npos);
      EXPECT_EQ(e["args"]["mangled name"].get<std::string>().rfind("_Z", 0), 0u);
      ++demangled;
    }
    if (e.value("cat", "") == "user_annotation") steps.insert(e.value("name", ""));
    EXPECT_NE(e.value("name", "").rfind("iteration ", 0), 0u) << e.dump();
  }
  EXPECT_GT(demangled, 0);
  EXPECT_TRUE(steps.contains("ProfilerStep#0"));
  EXPECT_TRUE(steps.contains("ProfilerStep#6"));
}

// The members of the first event of each (ph, cat), and of its args.
std::map<std::string, std::pair<std::set<std::string>, std::set<std::string>>> shapes(
    const nlohmann::json& trace) {
  std::map<std::string, std::pair<std::set<std::string>, std::set<std::string>>> out;
  for (const auto& e : trace["traceEvents"]) {
    const std::string key = e.value("ph", "") + " " + e.value("cat", "");
    if (out.contains(key)) continue;
    auto& [members, args] = out[key];
    for (const auto& [k, v] : e.items()) members.insert(k);
    if (e.contains("args") && e["args"].is_object()) {
      for (const auto& [k, v] : e["args"].items()) args.insert(k);
    }
  }
  return out;
}

TEST(NativeExport, EventsCarryTheFieldsPyTorchWrites) {
  const SessionStore store = sample();
  std::ostringstream out;
  interchange::write_chrome_trace(out, store.load_run(18), store.session());
  const auto ours = shapes(nlohmann::json::parse(out.str()));
  const auto torch = shapes(t::load_fixture_json(t::kGegluEager));
  // Args of PyTorch's that a native capture has no source for: Kineto's own bookkeeping.
  const std::set<std::string> not_captured = {"External id",
                                              "Record function id",
                                              "Ev Idx",
                                              "Concrete Inputs",
                                              "Input type",
                                              "Input Strides",
                                              "Input Dims",
                                              "cbid",
                                              "queued",
                                              "context",
                                              "blocks per SM",
                                              "warps per SM",
                                              "est. achieved occupancy %",
                                              "memory bandwidth (GB/s)"};
  for (const char* kind :
       {"X kernel", "X cuda_runtime", "X cpu_op", "X user_annotation", "s ac2g", "f ac2g"}) {
    SCOPED_TRACE(kind);
    ASSERT_TRUE(torch.contains(kind));
    ASSERT_TRUE(ours.contains(kind));
    for (const auto& member : torch.at(kind).first) {
      EXPECT_TRUE(ours.at(kind).first.contains(member)) << "member " << member;
    }
    for (const auto& arg : torch.at(kind).second) {
      if (not_captured.contains(arg)) continue;
      EXPECT_TRUE(ours.at(kind).second.contains(arg)) << "args." << arg;
    }
  }
}

}  // namespace
