// The lab's bookkeeping with stand-ins for the runner and the tracer: run rows, their status and
// timing, trace records landing in the right run, progress and cancellation.
#include <algorithm>
#include <atomic>

#include <gtest/gtest.h>

#include "fusionscope/lab/lab.h"
#include "fusionscope/storage/session_store.h"
#include "test_paths.h"

namespace fusionscope::lab {
namespace {

using kernels::Variant;
using storage::RunStatus;

class FakeExecutor : public Executor {
 public:
  kernels::RunResult execute(const kernels::MlpConfig& config, Variant variant,
                             const kernels::RunOptions& options) override {
    ++calls;
    last_options = options;
    kernels::RunResult r;
    r.config = config;
    r.variant = variant;
    if (variant == fail_variant) {
      r.error = "out of device memory";
      return r;
    }
    if (options.on_progress) {
      for (int i = 0; i < options.warmup_iterations; ++i)
        options.on_progress({kernels::RunProgress::Phase::kWarmup, i, options.warmup_iterations});
      for (int i = 0; i < options.timed_iterations; ++i)
        options.on_progress({kernels::RunProgress::Phase::kTimed, i, options.timed_iterations});
    }
    r.ok = true;
    r.wall_ms = 1.5;
    r.median_ms = 0.25;
    return r;
  }
  int calls = 0;
  Variant fail_variant = Variant::kFullyFused;
  kernels::RunOptions last_options;
};

// Writes one kernel and its launch into whichever run is open, like a tracer would.
class FakeCapture : public Capture {
 public:
  bool available() const override { return true; }
  std::string unavailable_reason() const override { return {}; }
  void begin_run(profiler::TraceSink& sink) override { sink_ = &sink; }
  profiler::TraceOutcome end_run() override {
    storage::KernelRecord k;
    k.start_ns = 1000;
    k.end_ns = 3000;
    k.correlation_id = 5;
    k.name = sink_->intern("fake_kernel");
    sink_->insert_kernels(std::span(&k, 1));
    storage::ApiCallRecord a;
    a.start_ns = 500;
    a.end_ns = 600;
    a.thread_id = 1;
    a.correlation_id = 5;
    a.name = sink_->intern("cudaLaunchKernel");
    sink_->insert_api_calls(std::span(&a, 1));
    profiler::TraceOutcome out;
    out.traced = true;
    out.kernels = 1;
    out.dropped_records = dropped;
    out.status = dropped ? "CUPTI dropped records" : "";
    return out;
  }
  uint64_t dropped = 0;

 private:
  profiler::TraceSink* sink_ = nullptr;
};

CaptureJob geglu_job() {
  CaptureJob job;
  job.runs =
      expand({*kernels::find_preset("geglu-post")}, {Variant::kEager, Variant::kPointwiseFused});
  job.warmup = 2;
  job.iterations = 3;
  return job;
}

TEST(Lab, StoresOneRunPerConfigurationAndVariantWithItsTrace) {
  auto store = storage::SessionStore::create(testing::scratch_dir() / "lab.fsdb", {});
  auto executor = std::make_unique<FakeExecutor>();
  FakeExecutor* exec = executor.get();
  Lab lab(std::move(executor), std::make_unique<FakeCapture>());
  std::vector<Progress> seen;
  const JobResult result =
      lab.run(store, geglu_job(), [&](const Progress& p) { seen.push_back(p); });

  ASSERT_EQ(result.run_ids.size(), 2u);
  EXPECT_EQ(result.ok, 2u);
  EXPECT_EQ(result.failed, 0u);
  EXPECT_FALSE(result.cancelled);
  EXPECT_EQ(exec->calls, 2);
  EXPECT_EQ(exec->last_options.warmup_iterations, 2);
  EXPECT_EQ(exec->last_options.timed_iterations, 3);
  EXPECT_TRUE(exec->last_options.nvtx);
  EXPECT_FALSE(exec->last_options.check);

  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].name, "geglu-post / eager");
  EXPECT_EQ(runs[1].name, "geglu-post / pointwise-fused");
  EXPECT_EQ(runs[0].kind, "gated");
  EXPECT_EQ(runs[0].variant, "eager");
  EXPECT_EQ(runs[0].dtype, "bf16");
  EXPECT_EQ(runs[0].warmup, 2);
  EXPECT_EQ(runs[0].iterations, 3);
  EXPECT_EQ(runs[0].status, RunStatus::kOk);
  EXPECT_EQ(runs[0].wall_ns, 1500000);
  EXPECT_TRUE(runs[0].trace_status.empty());
  EXPECT_EQ(kernels::config_from_json(runs[0].config_json), *kernels::find_preset("geglu-post"));

  for (int64_t id : result.run_ids) {
    const auto data = store.load_run(id);
    ASSERT_EQ(data.kernels.size(), 1u);
    EXPECT_EQ(data.str(data.kernels[0].name), "fake_kernel");
    ASSERT_EQ(data.api_calls.size(), 1u);
  }

  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front().stage, Progress::Stage::kStarting);
  EXPECT_EQ(seen.front().run_count, 2u);
  EXPECT_EQ(seen.back().stage, Progress::Stage::kFinished);
  EXPECT_EQ(seen.back().run_index, 1u);
  EXPECT_EQ(seen.back().status, RunStatus::kOk);
  const auto timed = std::count_if(seen.begin(), seen.end(), [](const Progress& p) {
    return p.stage == Progress::Stage::kTimed;
  });
  EXPECT_EQ(timed, 6);
}

TEST(Lab, AFailedRunIsStoredWithItsErrorAndTheJobGoesOn) {
  auto store = storage::SessionStore::create(testing::scratch_dir() / "lab.fsdb", {});
  auto executor = std::make_unique<FakeExecutor>();
  executor->fail_variant = Variant::kEager;
  Lab lab(std::move(executor), std::make_unique<FakeCapture>());
  const JobResult result = lab.run(store, geglu_job());
  EXPECT_EQ(result.failed, 1u);
  EXPECT_EQ(result.ok, 1u);
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].status, RunStatus::kFailed);
  EXPECT_EQ(runs[0].error, "out of device memory");
  EXPECT_EQ(runs[1].status, RunStatus::kOk);
}

TEST(Lab, CancellingStopsAfterTheCurrentRun) {
  auto store = storage::SessionStore::create(testing::scratch_dir() / "lab.fsdb", {});
  Lab lab(std::make_unique<FakeExecutor>(), std::make_unique<FakeCapture>());
  std::atomic<bool> cancel{false};
  const JobResult result = lab.run(
      store, geglu_job(),
      [&](const Progress& p) {
        if (p.stage == Progress::Stage::kFinished) cancel = true;
      },
      &cancel);
  EXPECT_TRUE(result.cancelled);
  EXPECT_EQ(result.run_ids.size(), 1u);
  EXPECT_EQ(store.runs().size(), 1u);
}

TEST(Lab, WithoutATracerRunsAreStoredUntracedWithTheReason) {
  auto store = storage::SessionStore::create(testing::scratch_dir() / "lab.fsdb", {});
  Lab lab(std::make_unique<FakeExecutor>(), make_no_capture("another profiler is attached"));
  EXPECT_FALSE(lab.tracing());
  const JobResult result = lab.run(store, geglu_job());
  EXPECT_EQ(result.trace_unavailable, "another profiler is attached");
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].status, RunStatus::kOk);
  EXPECT_EQ(runs[0].trace_status, "another profiler is attached");
  EXPECT_TRUE(store.load_run(runs[0].id).kernels.empty());
}

TEST(Lab, DroppedRecordsAreStoredWithTheRun) {
  auto store = storage::SessionStore::create(testing::scratch_dir() / "lab.fsdb", {});
  auto capture = std::make_unique<FakeCapture>();
  capture->dropped = 17;
  Lab lab(std::make_unique<FakeExecutor>(), std::move(capture));
  lab.run(store, geglu_job());
  const auto runs = store.runs();
  EXPECT_EQ(runs[0].dropped_records, 17u);
  EXPECT_EQ(runs[0].trace_status, "CUPTI dropped records");
}

TEST(Lab, RunsInRoundsStartOneFurtherAlongEachRoundAndAreNamedByRound) {
  const CaptureJob one = geglu_job();  // eager, pointwise-fused
  EXPECT_EQ(in_rounds(one.runs, 1), one.runs);
  EXPECT_EQ(in_rounds(one.runs, 0), one.runs);
  EXPECT_TRUE(in_rounds({}, 3).empty());

  CaptureJob job = one;
  job.runs.push_back(RunSpec{*kernels::find_preset("geglu-post"), Variant::kGatedGemm});
  job.runs = in_rounds(job.runs, 3);
  ASSERT_EQ(job.runs.size(), 9u);
  const Variant order[] = {
      Variant::kEager,          Variant::kPointwiseFused, Variant::kGatedGemm,
      Variant::kPointwiseFused, Variant::kGatedGemm,      Variant::kEager,
      Variant::kGatedGemm,      Variant::kEager,          Variant::kPointwiseFused};
  for (std::size_t i = 0; i < job.runs.size(); ++i) {
    EXPECT_EQ(job.runs[i].variant, order[i]) << i;
    EXPECT_EQ(job.runs[i].round, static_cast<int>(i / 3) + 1) << i;
  }
  EXPECT_EQ(run_name(job.runs[3]), "geglu-post / pointwise-fused (round 2)");
  EXPECT_EQ(run_name(one.runs[0]), "geglu-post / eager");

  // Each round's runs are stored under their own names, in the job's order.
  auto store = storage::SessionStore::create(testing::scratch_dir() / "rounds.fsdb", {});
  Lab lab(std::make_unique<FakeExecutor>(), std::make_unique<FakeCapture>());
  const JobResult result = lab.run(store, job, [](const Progress&) {});
  EXPECT_EQ(result.ok, 9u);
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 9u);
  EXPECT_EQ(runs[0].name, "geglu-post / eager (round 1)");
  EXPECT_EQ(runs[5].name, "geglu-post / eager (round 2)");
  EXPECT_EQ(runs[8].name, "geglu-post / pointwise-fused (round 3)");
  EXPECT_EQ(runs[8].variant, "pointwise-fused");
}

TEST(Lab, ExpandLeavesOutVariantsThatDoNotApply) {
  std::vector<std::string> skipped;
  const auto runs =
      expand({*kernels::find_preset("linear-post")}, kernels::all_variants(), &skipped);
  EXPECT_FALSE(runs.empty());
  EXPECT_FALSE(skipped.empty());
  EXPECT_EQ(runs.size() + skipped.size(), kernels::all_variants().size());
  for (const auto& s : skipped) EXPECT_EQ(s.rfind("linear-post / ", 0), 0u) << s;
}

}  // namespace
}  // namespace fusionscope::lab
