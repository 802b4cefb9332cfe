// The fusion advisor's rules on the sample session (captured on an H100, with counters) and on
// PyTorch's own traces (the fixtures): each fires where its pattern is and stays quiet where it
// is not; the JSON keeps its schema.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "fixture_json.h"
#include "fusionscope/analysis/advisor.h"
#include "fusionscope/interchange/torch_trace_import.h"
#include "fusionscope/storage/session_store.h"
#include "test_paths.h"

namespace fusionscope::analysis {
namespace {

using storage::RunData;
using storage::SessionStore;

struct Sample {
  SessionStore store = SessionStore::open(testing::source_dir() / "assets" / "sample.fsdb");
  AdviceContext context;
  Sample() {
    context.session = store.session();
    for (const auto& info : store.runs()) {
      context.peers.push_back({info, gpu_time_per_iteration(store.load_run(info.id))});
    }
  }
  std::vector<Advice> advice(int64_t run) const { return advise(store.load_run(run), context); }
  // Runs added to the sample after the first 21 are found by name, not by place.
  int64_t id(const std::string& name) const {
    for (const auto& info : store.runs()) {
      if (info.name == name) return info.id;
    }
    ADD_FAILURE() << "the sample session has no run named " << name;
    return 0;
  }
};

const Sample& sample() {
  static const Sample s;
  return s;
}

const Advice* find(const std::vector<Advice>& advice, const std::string& rule) {
  for (const auto& a : advice) {
    if (a.rule == rule) return &a;
  }
  return nullptr;
}

std::vector<Advice> fixture_advice(const char* stem) {
  const auto trace = interchange::read_torch_trace(testing::fixture_path(stem));
  AdviceContext context;
  context.session = trace.session;
  return advise(interchange::to_run_data(trace), context);
}

// Sample runs by id: 1-3 linear-post (tiny), 4-6 swiglu-post, 7-10 geglu-large, 18-21
// geglu-post (eager, epilogue, pointwise-fused, gated-gemm); then PyTorch's variants and
// CUDA-graph replays, looked up by name.

TEST(Advisor, GluIntermediateCitesTheGatedGemmRunOfTheSameShape) {
  const auto advice = sample().advice(18);  // geglu-post / eager
  const Advice* a = find(advice, "glu-intermediate");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->cites_run, 21);  // geglu-post / gated-gemm
  // Counters: the gate and up outputs and the pointwise kernels' traffic, about 300 MB.
  EXPECT_GT(a->figure("bytes_saved"), 200e6);
  EXPECT_LT(a->figure("bytes_saved"), 400e6);
  EXPECT_GT(a->figure("time_saved_ns"), 0);
  EXPECT_NEAR(a->figure("time_saved_ns"),
              a->figure("this_run_time_ns") - a->figure("gated_run_time_ns"), 1e-6);
  EXPECT_EQ(a->figure("pointwise_kernels"), 2);
  ASSERT_EQ(a->kernels.size(), 4u);  // gate and up GEMMs, gelu, mul
  const RunData run = sample().store.load_run(18);
  for (const auto& k : a->kernels) {
    ASSERT_LT(k.index, run.kernels.size());
    EXPECT_EQ(run.str(run.kernels[k.index].name), k.name);
  }
  // The variants that still write the intermediate fire; the gated GEMM does not.
  for (int64_t id : {19, 20, 7, 8, 9, 4, 5}) {
    EXPECT_NE(find(sample().advice(id), "glu-intermediate"), nullptr) << "run " << id;
  }
  for (int64_t id : {21, 10, 6, 11, 14, 1}) {
    EXPECT_EQ(find(sample().advice(id), "glu-intermediate"), nullptr) << "run " << id;
  }
  // PyTorch's own kernels, captured by injection, write it too, torch.compile's included.
  for (const char* name : {"geglu-post / torch-eager", "geglu-post / torch-compile"}) {
    EXPECT_NE(find(sample().advice(sample().id(name)), "glu-intermediate"), nullptr) << name;
  }
}

TEST(Advisor, GluIntermediateInPyTorchTraces) {
  const auto eager_all = fixture_advice(testing::kGegluEager);
  const Advice* eager = find(eager_all, "glu-intermediate");
  ASSERT_NE(eager, nullptr);
  EXPECT_EQ(eager->figure("pointwise_kernels"), 2);  // gelu and mul
  EXPECT_EQ(eager->cites_run, 0);
  EXPECT_TRUE(std::isnan(eager->figure("bytes_saved")));  // no counters in a PyTorch trace
  const auto compiled_all = fixture_advice(testing::kGegluCompile);
  const Advice* compiled = find(compiled_all, "glu-intermediate");
  ASSERT_NE(compiled, nullptr);
  EXPECT_EQ(compiled->figure("pointwise_kernels"), 1);  // triton's fused gelu * mul
  EXPECT_EQ(find(fixture_advice(testing::kLinearEager), "glu-intermediate"), nullptr);
}

TEST(Advisor, ShortKernelsAreThoseShorterThanTheirLaunch) {
  const auto tiny_all = sample().advice(1);
  const Advice* tiny = find(tiny_all, "short-kernels");  // linear-post / eager
  ASSERT_NE(tiny, nullptr);
  EXPECT_EQ(tiny->figure("share"), 1.0);
  EXPECT_GT(tiny->figure("median_launch_ns"), 1000);
  EXPECT_EQ(tiny->severity, "warning");
  EXPECT_NE(tiny->summary.find("CUDA graph"), std::string::npos);
  // Replayed from a graph already: only fusion is left to suggest.
  const auto graph_all = sample().advice(sample().id("linear-post / eager (graph)"));
  const Advice* graph = find(graph_all, "short-kernels");
  ASSERT_NE(graph, nullptr);
  EXPECT_EQ(graph->summary.find("CUDA graph"), std::string::npos) << graph->summary;
  EXPECT_EQ(find(sample().advice(7), "short-kernels"), nullptr);  // millisecond GEMMs
  EXPECT_NE(find(fixture_advice(testing::kLinearEager), "short-kernels"), nullptr);
  EXPECT_EQ(find(fixture_advice(testing::kGegluEager), "short-kernels"), nullptr);
}

TEST(Advisor, LaunchBoundWhenTheGpuIdlesBetweenKernels) {
  const auto tiny_all = sample().advice(1);
  const Advice* tiny = find(tiny_all, "launch-bound");
  ASSERT_NE(tiny, nullptr);
  EXPECT_GT(tiny->figure("idle_share"), 0.5);
  EXPECT_FALSE(tiny->kernels.empty());
  for (int64_t id : {7, 18, 21}) {
    EXPECT_EQ(find(sample().advice(id), "launch-bound"), nullptr) << "run " << id;
  }
  const auto linear_all = fixture_advice(testing::kLinearEager);
  const Advice* linear = find(linear_all, "launch-bound");
  ASSERT_NE(linear, nullptr);
  EXPECT_GT(linear->figure("idle_share"), 0.9);  // one tiny GEMM per profiler step
}

TEST(Advisor, BelowRooflineNeedsCountersAndNamesTheKernel) {
  const auto a_all = sample().advice(3);
  const Advice* a = find(a_all, "below-roofline");  // the fully fused tiny MLP
  ASSERT_NE(a, nullptr);
  EXPECT_LT(a->figure("of_bound"), 1.0 / 3);
  EXPECT_GT(a->figure("measured_ns"), a->figure("bound_ns"));
  ASSERT_EQ(a->kernels.size(), 1u);
  // Large GEMMs run near their roofline; PyTorch traces have no counters.
  EXPECT_EQ(find(sample().advice(7), "below-roofline"), nullptr);
  EXPECT_EQ(find(fixture_advice(testing::kGegluEager), "below-roofline"), nullptr);
}

// A run of `names` back to back on one stream, in one timed iteration.
RunData synthetic_run(const std::vector<std::pair<std::string, int64_t>>& kernels) {
  RunData run;
  run.info.id = 1;
  run.info.iterations = 1;
  run.strings = {"", "cudaLaunchKernel", "iteration 0"};
  storage::RangeRecord iteration{0, 1'000'000, 1, 2, storage::RangeKind::kNvtx};
  run.ranges.push_back(iteration);
  int64_t t = 10'000;
  uint32_t corr = 1;
  for (const auto& [name, dur] : kernels) {
    run.strings.push_back(name);
    const auto id = static_cast<storage::StringId>(run.strings.size() - 1);
    storage::ApiCallRecord call{t - 5000, t - 4000, 1, corr, 1, storage::ApiDomain::kRuntime};
    run.api_calls.push_back(call);
    storage::KernelRecord k;
    k.start_ns = t;
    k.end_ns = t + dur;
    k.correlation_id = corr++;
    k.name = id;
    run.kernels.push_back(k);
    t += dur + 500;
  }
  storage::arrange_run(run);
  return run;
}

TEST(Advisor, PointwiseChainOfKernelsInARow) {
  const RunData run = synthetic_run({{"gemm_kernel", 50'000},
                                     {"add_bias_kernel", 20'000},
                                     {"relu_kernel", 20'000},
                                     {"scale_mul_kernel", 20'000},
                                     {"gemm_kernel", 50'000}});
  const auto advice = advise(run, {});
  const Advice* a = find(advice, "pointwise-chain");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->figure("kernels"), 3);
  EXPECT_EQ(a->figure("launches_saved"), 2);
  EXPECT_EQ(a->figure("chain_time_ns"), 60'000);
  ASSERT_EQ(a->kernels.size(), 3u);
  EXPECT_EQ(a->kernels[0].name, "add_bias_kernel");
  // One pointwise kernel between GEMMs is no chain; neither the sample nor the fixtures have one.
  EXPECT_EQ(
      find(advise(synthetic_run(
                      {{"gemm_kernel", 50'000}, {"relu_kernel", 20'000}, {"gemm_kernel", 50'000}}),
                  {}),
           "pointwise-chain"),
      nullptr);
  for (const auto& info : sample().store.runs()) {
    EXPECT_EQ(find(sample().advice(info.id), "pointwise-chain"), nullptr) << info.name;
  }
  EXPECT_EQ(find(fixture_advice(testing::kGegluEager), "pointwise-chain"), nullptr);
}

TEST(Advisor, JsonKeepsItsSchema) {
  const auto info = *sample().store.run(18);
  const std::string text = advice_json({{info, sample().advice(18)}});
  const nlohmann::json doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["schema"], "fusionscope.advice/1");
  EXPECT_EQ(doc["rules"].size(), advice_rules().size());
  ASSERT_EQ(doc["runs"].size(), 1u);
  const auto& run = doc["runs"][0];
  EXPECT_EQ(run["id"], 18);
  ASSERT_FALSE(run["advice"].empty());
  for (const auto& a : run["advice"]) {
    for (const char* key : {"rule", "severity", "summary", "figures", "kernels", "cites_run"}) {
      EXPECT_TRUE(a.contains(key)) << key;
    }
    for (const auto& [name, f] : a["figures"].items()) {
      EXPECT_TRUE(f.contains("value") && f.contains("unit")) << name;
    }
    for (const auto& k : a["kernels"]) {
      for (const char* key : {"index", "name", "correlation_id", "start_ns", "duration_ns"}) {
        EXPECT_TRUE(k.contains(key)) << key;
      }
    }
  }
  EXPECT_EQ(run["advice"][0]["rule"], "glu-intermediate");
  EXPECT_EQ(run["advice"][0]["cites_run"], 21);
}

}  // namespace
}  // namespace fusionscope::analysis
