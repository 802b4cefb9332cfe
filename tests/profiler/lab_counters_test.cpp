// The lab's hardware-counter work with stand-ins for the runner, the tracer and CUPTI: the
// counters pass's metrics keyed to the first timed iteration's kernels, PM sampling around the
// warm-up and timed iterations, and refusals (no permission, CUDA graphs, a kernel count that
// does not match) stored as the run's properties for the views.
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fusionscope/analysis/metrics_status.h"
#include "fusionscope/counters/metric_names.h"
#include "fusionscope/lab/hardware_counters.h"
#include "fusionscope/lab/job_file.h"
#include "fusionscope/lab/lab.h"
#include "fusionscope/lab/session_report.h"
#include "fusionscope/storage/session_store.h"
#include "test_paths.h"

namespace fusionscope::lab {
namespace {

using kernels::RunProgress;
using storage::RunStatus;
using Phase = kernels::RunProgress::Phase;

constexpr uint32_t kThread = 9;
constexpr int kKernelsPerPass = 3;

// Reports the runner's phases; remembers which phase each progress call came in.
class PhasedExecutor : public Executor {
 public:
  kernels::RunResult execute(const kernels::MlpConfig& config, kernels::Variant variant,
                             const kernels::RunOptions& o) override {
    ++calls;
    auto report = [&](Phase phase, int i, int n) {
      phases.push_back(phase);
      if (o.on_progress) o.on_progress(RunProgress{phase, i, n});
    };
    report(Phase::kSetup, 0, 1);
    for (int i = 0; i < o.warmup_iterations; ++i) report(Phase::kWarmup, i, o.warmup_iterations);
    for (int i = 0; i < o.timed_iterations; ++i) report(Phase::kTimed, i, o.timed_iterations);
    report(Phase::kDone, 0, 1);
    kernels::RunResult r;
    r.config = config;
    r.variant = variant;
    r.ok = true;
    r.median_ms = 0.25;
    return r;
  }
  int calls = 0;
  std::vector<Phase> phases;
};

// Writes `iterations` runner iterations of three kernels each, launched inside "iteration N"
// ranges, as the tracer records them; correlation ids count up from 100 per run.
class IterationCapture : public Capture {
 public:
  explicit IterationCapture(int iterations) : iterations_(iterations) {}
  bool available() const override { return true; }
  std::string unavailable_reason() const override { return {}; }
  void begin_run(profiler::TraceSink& sink) override {
    sink_ = &sink;
    open = true;
  }
  profiler::TraceOutcome end_run() override {
    open = false;
    std::vector<storage::KernelRecord> kernels;
    std::vector<storage::ApiCallRecord> calls;
    std::vector<storage::RangeRecord> ranges;
    int64_t t = 10'000;
    uint32_t corr = 100;
    const char* ops[kKernelsPerPass] = {"gate", "gelu-tanh", "down"};
    for (int it = 0; it < iterations_; ++it) {
      const int64_t start = t;
      for (const char* op : ops) {
        storage::ApiCallRecord a;
        a.start_ns = t;
        a.end_ns = t + 100;
        a.thread_id = kThread;
        a.correlation_id = ++corr;
        a.name = sink_->intern("cudaLaunchKernel");
        calls.push_back(a);
        storage::KernelRecord k;
        k.start_ns = t + 200;
        k.end_ns = t + 1200;
        k.correlation_id = corr;
        k.name = sink_->intern(std::string("kernel_") + op);
        k.op = sink_->intern(op);
        k.stream = 7;
        kernels.push_back(k);
        t += 1500;
      }
      storage::RangeRecord r;
      r.start_ns = start;
      r.end_ns = t;
      r.thread_id = kThread;
      r.name = sink_->intern("iteration " + std::to_string(it));
      ranges.push_back(r);
    }
    sink_->insert_kernels(kernels);
    sink_->insert_api_calls(calls);
    sink_->insert_ranges(ranges);
    profiler::TraceOutcome out;
    out.traced = true;
    out.kernels = kernels.size();
    return out;
  }

 private:
  int iterations_;
  profiler::TraceSink* sink_ = nullptr;

 public:
  bool open = false;  // between begin_run() and end_run()
};

class FakeCounters : public HardwareCounters {
 public:
  explicit FakeCounters(const PhasedExecutor* executor) : executor_(executor) {}
  counters::CounterPassResult kernel_pass(Executor&, const kernels::MlpConfig&, kernels::Variant,
                                          const kernels::RunOptions& options) override {
    ++passes;
    pass_device = options.device;
    counters::CounterPassResult r;
    r.status = pass_status;
    if (!r.status.ok()) return r;
    r.chip = "GH100";
    r.passes = 6;
    r.metrics = {std::string(counters::metric::kDramRead),
                 std::string(counters::metric::kDramWrite)};
    r.units = {"byte", "byte"};
    for (int k = 0; k < kernels_profiled; ++k)
      r.kernels.push_back({static_cast<size_t>(k), std::to_string(k), {1e6 * (k + 1), 5e5}});
    return r;
  }
  counters::CounterStatus start_sampling(int, uint64_t interval_ns) override {
    start_phase = executor_->phases.empty() ? Phase::kDone : executor_->phases.back();
    interval = interval_ns;
    return sampling_status;
  }
  counters::PmSamplingResult stop_sampling() override {
    stop_phase = executor_->phases.empty() ? Phase::kSetup : executor_->phases.back();
    stopped_after_trace = trace_open != nullptr && !*trace_open;
    counters::PmSamplingResult r;
    r.metrics = {std::string(counters::metric::kSampleDramRead),
                 std::string(counters::metric::kSampleDramWrite)};
    r.interval_ns = interval;
    r.clock_mapping = "CUPTI clock";
    // Idle samples long before the first iteration, as while the sampler itself starts up.
    for (int i = 0; i < early_samples; ++i)
      r.samples.push_back({-2'000'000 + i * 10'000, -1'990'000 + i * 10'000, {0.0, 0.0}});
    for (int i = 0; i < 4; ++i)
      r.samples.push_back({10'000 + i * 10'000, 20'000 + i * 10'000, {1e12, 0.5e12}});
    r.gaps = gaps;
    r.hardware_overflow = !gaps.empty();
    return r;
  }

  counters::CounterStatus pass_status;
  counters::CounterStatus sampling_status;
  int kernels_profiled = kKernelsPerPass;
  int early_samples = 0;
  std::vector<counters::PmGap> gaps;
  bool stopped_after_trace = false;
  const bool* trace_open = nullptr;
  int passes = 0;
  int pass_device = -1;
  uint64_t interval = 0;
  Phase start_phase = Phase::kDone, stop_phase = Phase::kSetup;

 private:
  const PhasedExecutor* executor_;
};

struct Bench {
  explicit Bench(storage::SessionStore s) : store(std::move(s)) {}
  storage::SessionStore store;
  PhasedExecutor* executor = nullptr;
  FakeCounters* counters = nullptr;
  std::unique_ptr<Lab> lab;
};

Bench make_bench(const std::string& file, int warmup, int iterations) {
  Bench b(storage::SessionStore::create(testing::scratch_dir() / file, {}));
  auto executor = std::make_unique<PhasedExecutor>();
  b.executor = executor.get();
  auto capture = std::make_unique<IterationCapture>(warmup + iterations);
  const bool* trace_open = &capture->open;
  b.lab = std::make_unique<Lab>(std::move(executor), std::move(capture));
  auto counters = std::make_unique<FakeCounters>(b.executor);
  counters->trace_open = trace_open;
  b.counters = counters.get();
  b.lab->set_hardware_counters(std::move(counters));
  return b;
}

CaptureJob job_of(int warmup, int iterations, int runs = 1) {
  CaptureJob job;
  const auto config = *kernels::find_preset("geglu-post");
  for (int i = 0; i < runs; ++i) job.runs.push_back({config, kernels::Variant::kEager});
  job.warmup = warmup;
  job.iterations = iterations;
  job.device = 0;
  return job;
}

TEST(LabCounters, MetricsAreKeyedToTheKernelsOfTheFirstTimedIteration) {
  Bench b = make_bench("counters.fsdb", 2, 3);
  CaptureJob job = job_of(2, 3);
  job.counters = true;
  std::vector<Progress::Stage> stages;
  const JobResult result =
      b.lab->run(b.store, job, [&](const Progress& p) { stages.push_back(p.stage); });
  ASSERT_EQ(result.runs.size(), 1u);
  EXPECT_EQ(b.counters->passes, 1);
  EXPECT_EQ(b.executor->calls, 1);  // the stand-in pass does not run the executor

  const storage::RunData run = b.store.load_run(result.run_ids[0]);
  // Iteration 2 (the first timed one) launched correlation ids 107, 108, 109.
  std::vector<uint32_t> ids;
  for (const auto& m : run.kernel_metrics) ids.push_back(m.correlation_id);
  EXPECT_EQ(ids, (std::vector<uint32_t>{107, 107, 108, 108, 109, 109}));
  EXPECT_EQ(run.str(run.kernel_metrics[0].name), counters::metric::kDramRead);
  EXPECT_DOUBLE_EQ(run.kernel_metrics[0].value, 1e6);
  EXPECT_DOUBLE_EQ(run.kernel_metrics[4].value, 3e6);
  EXPECT_EQ(run.str(run.kernel_metrics[0].unit), "byte");

  const auto property = b.store.property(analysis::kernel_counters_property(result.run_ids[0]));
  ASSERT_TRUE(property.has_value());
  EXPECT_EQ(*property, result.runs[0].kernel_counters);
  EXPECT_EQ(property->rfind("ok: 3 kernels of timed iteration 2", 0), 0u) << *property;
  EXPECT_FALSE(b.store.property(analysis::pm_sampling_property(result.run_ids[0])).has_value());
  // The counters pass is announced before the run's final report.
  ASSERT_GE(stages.size(), 2u);
  EXPECT_EQ(stages[stages.size() - 2], Progress::Stage::kCounters);
  EXPECT_EQ(stages.back(), Progress::Stage::kFinished);
}

TEST(LabCounters, SamplingCoversWarmupAndTimedIterationsOnly) {
  Bench b = make_bench("sampling.fsdb", 2, 3);
  CaptureJob job = job_of(2, 3);
  job.pm_sampling = true;
  job.pm_interval_ns = 20'000;
  std::string words;
  const JobResult result = b.lab->run(b.store, job, [&](const Progress& p) {
    if (p.stage == Progress::Stage::kFinished) words = p.counters;
  });
  // Started when the first warm-up iteration is announced (before it runs), stopped after the
  // run (and its trace) ended.
  EXPECT_EQ(b.counters->start_phase, Phase::kWarmup);
  EXPECT_EQ(b.counters->stop_phase, Phase::kDone);
  EXPECT_TRUE(b.counters->stopped_after_trace);
  EXPECT_EQ(b.counters->interval, 20'000u);
  EXPECT_EQ(b.counters->passes, 0);
  const storage::RunData run = b.store.load_run(result.run_ids[0]);
  // 4 samples x (read, write, and their sum).
  EXPECT_EQ(run.samples.size(), 12u);
  const auto property = b.store.property(analysis::pm_sampling_property(result.run_ids[0]));
  ASSERT_TRUE(property.has_value());
  EXPECT_EQ(property->rfind("ok: 4 samples every 20 us", 0), 0u) << *property;
  EXPECT_EQ(words, "4 samples");
}

TEST(LabCounters, SamplesOutsideTheIterationsAreDropped) {
  Bench b = make_bench("early.fsdb", 1, 1);
  b.counters->early_samples = 50;
  CaptureJob job = job_of(1, 1);
  job.pm_sampling = true;
  job.pm_interval_ns = 20'000;  // the iterations' samples lie within two intervals of them
  const JobResult result = b.lab->run(b.store, job);
  const storage::RunData run = b.store.load_run(result.run_ids[0]);
  EXPECT_EQ(run.samples.size(), 12u);
  for (const auto& s : run.samples) EXPECT_GT(s.t_ns, 0);
  const std::string p = result.runs[0].pm_sampling;
  EXPECT_EQ(p.rfind("ok: 4 samples", 0), 0u) << p;
  EXPECT_NE(p.find("50 taken before or after them dropped"), std::string::npos) << p;
}

TEST(LabCounters, SamplesLostWithinTheIterationsAreSaidExactly) {
  Bench b = make_bench("gaps.fsdb", 2, 3);
  // The iterations run from 10 us to 32.5 us; 3 us of them and 1 ms after them have no samples.
  b.counters->gaps = {{12'000, 15'000}, {40'000, 1'040'000}};
  CaptureJob job = job_of(2, 3);
  job.pm_sampling = true;
  job.pm_interval_ns = 20'000;
  const JobResult result = b.lab->run(b.store, job);
  const std::string p = result.runs[0].pm_sampling;
  EXPECT_EQ(p.rfind("ok: ", 0), 0u) << p;
  EXPECT_NE(p.find("no samples for 3 us of the iterations in 1 gap(s), the first 2 us after"),
            std::string::npos)
      << p;
}

TEST(LabCounters, WithoutWarmupSamplingStartsAtSetup) {
  Bench b = make_bench("sampling0.fsdb", 0, 2);
  CaptureJob job = job_of(0, 2);
  job.pm_sampling = true;
  b.lab->run(b.store, job);
  EXPECT_EQ(b.counters->start_phase, Phase::kSetup);
}

TEST(LabCounters, RefusedCountersAreStoredAndNotAskedForAgain) {
  Bench b = make_bench("refused.fsdb", 1, 1);
  b.counters->pass_status = {counters::CounterAvailability::kInsufficientPrivileges,
                             "the driver restricts GPU performance counters to administrators"};
  b.counters->sampling_status = b.counters->pass_status;
  CaptureJob job = job_of(1, 1, 2);
  job.counters = true;
  job.pm_sampling = true;
  const JobResult result = b.lab->run(b.store, job);
  ASSERT_EQ(result.run_ids.size(), 2u);
  EXPECT_EQ(result.ok, 2u);  // the runs themselves are fine
  EXPECT_EQ(b.counters->passes, 1);
  // The terminal report says it too.
  std::ostringstream report;
  write_report(b.store, report);
  EXPECT_NE(report.str().find("  counters: counters: not permitted"), std::string::npos)
      << report.str();
  for (int64_t id : result.run_ids) {
    const auto k = b.store.property(analysis::kernel_counters_property(id));
    const auto s = b.store.property(analysis::pm_sampling_property(id));
    ASSERT_TRUE(k.has_value());
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(*k, b.counters->pass_status.describe());
    EXPECT_NE(k->find("not permitted"), std::string::npos) << *k;
    EXPECT_EQ(*s, b.counters->pass_status.describe());
    const storage::RunData run = b.store.load_run(id);
    EXPECT_TRUE(run.kernel_metrics.empty());
    EXPECT_TRUE(run.samples.empty());
    // The view's sentence is the stored reason.
    const auto why = analysis::kernel_metrics_availability(run.info, false, k);
    EXPECT_FALSE(why.available);
    EXPECT_EQ(why.why, *k);
  }
}

TEST(LabCounters, GraphRunsAreNotProfiled) {
  Bench b = make_bench("graph.fsdb", 1, 1);
  CaptureJob job = job_of(1, 1);
  job.counters = true;
  job.cuda_graph = true;
  const JobResult result = b.lab->run(b.store, job);
  EXPECT_EQ(b.counters->passes, 0);
  const auto k = b.store.property(analysis::kernel_counters_property(result.run_ids[0]));
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->rfind("skipped: ", 0), 0u);
  EXPECT_NE(k->find("CUDA graph"), std::string::npos);
}

TEST(LabCounters, AKernelCountThatDiffersIsAFailureNotAGuess) {
  Bench b = make_bench("mismatch.fsdb", 1, 1);
  b.counters->kernels_profiled = 2;
  CaptureJob job = job_of(1, 1);
  job.counters = true;
  const JobResult result = b.lab->run(b.store, job);
  const auto k = b.store.property(analysis::kernel_counters_property(result.run_ids[0]));
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->rfind("counters: failed: ", 0), 0u) << *k;
  EXPECT_TRUE(b.store.load_run(result.run_ids[0]).kernel_metrics.empty());
}

TEST(LabCounters, NothingAskedNothingDone) {
  Bench b = make_bench("plain.fsdb", 1, 1);
  const JobResult result = b.lab->run(b.store, job_of(1, 1));
  EXPECT_EQ(b.counters->passes, 0);
  EXPECT_EQ(b.counters->interval, 0u);
  EXPECT_TRUE(b.store.properties().empty());
  EXPECT_TRUE(result.runs[0].kernel_counters.empty());
}

TEST(LabCounters, JobFileTakesTheCounterKeys) {
  const JobFile f = parse_job_file(
      R"({"counters": true, "pm_sampling": true, "pm_interval_us": 25,
          "configurations": ["geglu-post"]})");
  EXPECT_TRUE(f.job.counters);
  EXPECT_TRUE(f.job.pm_sampling);
  EXPECT_EQ(f.job.pm_interval_ns, 25'000u);
  EXPECT_THROW(parse_job_file(R"({"counters": 1, "configurations": ["geglu-post"]})"),
               kernels::ConfigError);
  EXPECT_FALSE(parse_job_file(R"({"configurations": ["geglu-post"]})").job.counters);
}

}  // namespace
}  // namespace fusionscope::lab
