// Injection capture on a GPU: a small CUDA program the tests build, a PyTorch script, a launcher
// with two CUDA workers, a CUDA-graph replay and a crashing program, each captured into a session
// through libfusionscope_inject.so. Kernel counts match what the programs launch, and each
// kernel's captured duration agrees with the program's own CUDA events within 5%.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fusionscope/analysis/iteration_kernels.h"
#include "fusionscope/analysis/metrics_status.h"
#include "fusionscope/kernels/config.h"
#include "fusionscope/lab/lab.h"
#include "fusionscope/lab/program_capture.h"
#include "fusionscope/lab/torch_variants.h"
#include "fusionscope/storage/session_store.h"
#include "gpu_guard.h"
#include "test_paths.h"

namespace fusionscope {
namespace {

namespace fs = std::filesystem;

// The variable, else the file beside this test program (a bundle carried to a GPU server), else
// where the build put it.
std::string locate(const char* variable, const char* file, const char* built) {
  if (const char* v = std::getenv(variable); v && *v) return v;
  std::error_code ec;
  const fs::path beside = fs::read_symlink("/proc/self/exe", ec).parent_path() / file;
  if (!ec && fs::exists(beside, ec)) return beside.string();
  return built;
}
std::string inject_library() {
  return locate("FUSIONSCOPE_INJECT_LIBRARY", "libfusionscope_inject.so",
                FUSIONSCOPE_INJECT_LIBRARY_BUILT);
}
std::string cuda_target() {
  return locate("FUSIONSCOPE_CUDA_TARGET", "cuda_target", FUSIONSCOPE_CUDA_TARGET_BUILT);
}

struct Timed {
  std::string name;
  double ms = 0;
};
std::vector<Timed> read_events(const fs::path& file) {
  std::vector<Timed> out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line);
    out.push_back({j["name"].get<std::string>(), j["ms"].get<double>()});
  }
  return out;
}

struct Captured {
  lab::ProgramCaptureOutcome outcome;
  storage::RunData run;
};

Captured capture(const fs::path& dir, std::vector<std::string> command, int warmup = 0,
                 bool counters = false) {
  storage::SessionInfo info;
  info.name = "inject gpu test";
  auto store = storage::SessionStore::create(dir / "s.fsdb", info);
  lab::ProgramCaptureRequest request;
  request.process.command = std::move(command);
  request.process.inject_library = inject_library();
  request.warmup = warmup;
  request.counters = counters;
  Captured c;
  c.outcome = lab::capture_program(store, request);
  if (c.outcome.run_id != 0) c.run = store.load_run(c.outcome.run_id);
  return c;
}

double ms(const storage::KernelRecord& k) {
  return static_cast<double>(k.end_ns - k.start_ns) / 1e6;
}

// Kernels of the run in start order, those launched inside iteration ranges only.
std::vector<const storage::KernelRecord*> iteration_kernels(const storage::RunData& run) {
  const std::vector<long> it = analysis::kernel_iterations(run);
  std::vector<const storage::KernelRecord*> out;
  for (size_t i = 0; i < run.kernels.size(); ++i)
    if (it[i] >= 0) out.push_back(&run.kernels[i]);
  std::sort(out.begin(), out.end(),
            [](const auto* a, const auto* b) { return a->start_ns < b->start_ns; });
  return out;
}

TEST(InjectGpu, ASmallCudaProgramKernelForKernel) {
  FUSIONSCOPE_REQUIRE_GPU();
  const fs::path dir = testing::scratch_dir();
  const fs::path events = dir / "events.jsonl";
  const Captured c = capture(dir, {cuda_target(), "--out", events.string(), "--iterations", "5"});
  ASSERT_EQ(c.outcome.status, storage::RunStatus::kOk) << c.outcome.error;
  EXPECT_EQ(c.run.info.trace_status, "") << c.run.info.trace_status;
  EXPECT_EQ(c.outcome.iterations, 5);
  // Two warm-up kernels outside any iteration, then two per iteration.
  EXPECT_EQ(c.run.kernels.size(), 12u);
  EXPECT_GE(c.run.memops.size(), 2u);
  EXPECT_GT(c.run.api_calls.size(), 12u);
  const auto kernels = iteration_kernels(c.run);
  const std::vector<Timed> timed = read_events(events);
  ASSERT_EQ(kernels.size(), 10u);
  ASSERT_EQ(timed.size(), 10u);
  for (size_t i = 0; i < kernels.size(); ++i) {
    EXPECT_EQ(c.run.str(kernels[i]->name), timed[i].name) << i;
    EXPECT_EQ(c.run.str(kernels[i]->op), i % 2 == 0 ? "long" : "short") << i;
    EXPECT_EQ(kernels[i]->grid, (storage::Dim3{4, 1, 1}));
    EXPECT_EQ(kernels[i]->block, (storage::Dim3{128, 1, 1}));
    EXPECT_NEAR(ms(*kernels[i]), timed[i].ms, 0.05 * timed[i].ms)
        << c.run.str(kernels[i]->name) << " #" << i;
  }
}

TEST(InjectGpu, TwoCudaWorkersOfALauncherAreEachTheirOwnProcess) {
  FUSIONSCOPE_REQUIRE_GPU();
  const fs::path dir = testing::scratch_dir();
  const fs::path events = dir / "events.jsonl";
  const Captured c = capture(
      dir, {cuda_target(), "--out", events.string(), "--iterations", "3", "--workers", "2"});
  ASSERT_EQ(c.outcome.status, storage::RunStatus::kOk) << c.outcome.error;
  ASSERT_EQ(c.outcome.traced.processes.size(), 2u) << "the launcher touches no CUDA";
  std::set<uint32_t> pids;
  for (const auto& p : c.outcome.traced.processes) {
    EXPECT_EQ(p.kernels, 8u) << p.name;
    EXPECT_TRUE(p.ended_cleanly) << p.name;
    pids.insert(p.pid);
  }
  EXPECT_EQ(pids.size(), 2u);
  EXPECT_EQ(c.run.kernels.size(), 16u);
  std::set<uint32_t> correlations;
  for (const auto& k : c.run.kernels) correlations.insert(k.correlation_id);
  EXPECT_EQ(correlations.size(), 16u) << "correlation ids stay unique across processes";
  // Each worker's own events against its own kernels, matched by duration order per name.
  std::vector<Timed> all;
  for (int w = 0; w < 2; ++w) {
    const auto t = read_events(dir / ("events.jsonl." + std::to_string(w)));
    all.insert(all.end(), t.begin(), t.end());
  }
  EXPECT_EQ(all.size(), 12u);
  EXPECT_EQ(iteration_kernels(c.run).size(), 12u);
}

TEST(InjectGpu, CudaGraphReplaysKeepTheirKernelsNamesAndOps) {
  FUSIONSCOPE_REQUIRE_GPU();
  const fs::path dir = testing::scratch_dir();
  const fs::path events = dir / "events.jsonl";
  const Captured c =
      capture(dir, {cuda_target(), "--out", events.string(), "--iterations", "4", "--graph"});
  ASSERT_EQ(c.outcome.status, storage::RunStatus::kOk) << c.outcome.error;
  EXPECT_EQ(c.run.kernels.size(), 2u + 8u);
  std::vector<const storage::KernelRecord*> replayed;
  for (const auto& k : c.run.kernels)
    if (k.op != storage::kNoString) replayed.push_back(&k);
  std::sort(replayed.begin(), replayed.end(),
            [](const auto* a, const auto* b) { return a->start_ns < b->start_ns; });
  ASSERT_EQ(replayed.size(), 8u) << "graph kernels take the op of the node that captured them";
  const std::vector<Timed> timed = read_events(events);
  ASSERT_EQ(timed.size(), 4u);
  for (size_t r = 0; r < 4; ++r) {
    const auto* a = replayed[2 * r];
    const auto* b = replayed[2 * r + 1];
    EXPECT_EQ(c.run.str(a->name), "fs_spin_long");
    EXPECT_EQ(c.run.str(b->name), "fs_spin_short");
    EXPECT_EQ(c.run.str(a->op), "long");
    EXPECT_EQ(c.run.str(b->op), "short");
    const double span = static_cast<double>(b->end_ns - a->start_ns) / 1e6;
    EXPECT_NEAR(span, timed[r].ms, 0.05 * timed[r].ms) << "replay " << r;
  }
}

TEST(InjectGpu, ACrashingProgramKeepsItsTraceAndSignal) {
  FUSIONSCOPE_REQUIRE_GPU();
  const fs::path dir = testing::scratch_dir();
  const Captured c = capture(
      dir, {cuda_target(), "--out", (dir / "e.jsonl").string(), "--iterations", "3", "--crash"});
  EXPECT_EQ(c.outcome.status, storage::RunStatus::kFailed);
  EXPECT_NE(c.run.info.error.find("SIGSEGV"), std::string::npos) << c.run.info.error;
  EXPECT_EQ(c.outcome.exit_status(), 128 + 11);
  ASSERT_EQ(c.outcome.traced.processes.size(), 1u);
  EXPECT_EQ(c.outcome.traced.processes[0].crash_signal, 11);
  EXPECT_EQ(c.run.kernels.size(), 8u) << "what ran before the crash was flushed";
}

TEST(InjectGpu, ACaptureRangeRecordsItsKernelsAndTheFilteredCounters) {
  FUSIONSCOPE_REQUIRE_GPU();
  const fs::path dir = testing::scratch_dir();
  auto store = storage::SessionStore::create(dir / "s.fsdb", {});
  lab::ProgramCaptureRequest request;
  request.process.command = {cuda_target(), "--out", (dir / "e.jsonl").string(), "--iterations",
                             "4"};
  request.process.inject_library = inject_library();
  request.process.capture_range = "iteration 2";
  request.counters = true;
  request.kernel_filter = "long";
  const lab::ProgramCaptureOutcome out = lab::capture_program(store, request);
  ASSERT_EQ(out.status, storage::RunStatus::kOk) << out.error;
  const storage::RunData run = store.load_run(out.run_id);
  ASSERT_EQ(run.kernels.size(), 2u) << "the range's two kernels, completed before tracing stopped";
  EXPECT_TRUE(out.kernel_counters.starts_with("ok: 1 kernels")) << out.kernel_counters;
  std::set<uint32_t> with_metrics;
  for (const auto& m : run.kernel_metrics) with_metrics.insert(m.correlation_id);
  ASSERT_EQ(with_metrics.size(), 1u);
  for (const auto& k : run.kernels)
    EXPECT_EQ(with_metrics.count(k.correlation_id) == 1, run.str(k.name) == "fs_spin_long");
}

TEST(InjectGpu, APyTorchScriptEagerOpForOpAgainstItsOwnEvents) {
  FUSIONSCOPE_REQUIRE_GPU();
  if (const std::string why = lab::torch_unavailable_reason(); !why.empty())
    GTEST_SKIP() << "needs PyTorch: " << why;
  const fs::path dir = testing::scratch_dir();
  const fs::path result = dir / "r.json";
  // The post's GeGLU at 4x the tokens: kernels of 130-230 us, so that an event's own microsecond
  // stays well inside the 5%.
  auto config = kernels::find_preset("geglu-post");
  ASSERT_TRUE(config);
  config->rows *= 4;
  const Captured c =
      capture(dir,
              {lab::torch_python(), lab::torch_script_path(), "--config", kernels::to_json(*config),
               "--variant", "torch-eager", "--warmup", "3", "--iters", "10", "--op-events",
               "--queue-ahead-ms", "200", "--out", result.string()},
              3);
  ASSERT_EQ(c.outcome.status, storage::RunStatus::kOk) << c.outcome.error;
  EXPECT_EQ(c.outcome.iterations, 13);
  std::ifstream in(result);
  const auto j = nlohmann::json::parse(in);
  ASSERT_TRUE(j["ok"].get<bool>());
  const auto ops = j["op_ms"];
  ASSERT_EQ(ops.size(), 50u);
  for (long it = 3; it < 13; ++it) {
    const std::vector<uint32_t> idx = analysis::iteration_kernels(c.run, it);
    ASSERT_EQ(idx.size(), 5u) << "iteration " << it << ": torch eager runs 5 kernels";
    for (size_t k = 0; k < 5; ++k) {
      const auto& kr = c.run.kernels[idx[k]];
      const auto& op = ops[static_cast<size_t>((it - 3) * 5) + k];
      EXPECT_EQ(c.run.str(kr.op), op["op"].get<std::string>());
      const double e = op["ms"].get<double>();
      EXPECT_NEAR(ms(kr), e, 0.05 * e) << c.run.str(kr.name) << " in iteration " << it;
    }
  }
}

TEST(InjectGpu, TheLabsPyTorchVariantsWithCounters) {
  FUSIONSCOPE_REQUIRE_GPU();
  if (const std::string why = lab::torch_unavailable_reason(); !why.empty())
    GTEST_SKIP() << "needs PyTorch: " << why;
  ::setenv("FUSIONSCOPE_INJECT_LIBRARY", inject_library().c_str(), 1);
  const fs::path dir = testing::scratch_dir();
  storage::SessionInfo info;
  auto store = storage::SessionStore::create(dir / "lab.fsdb", info);
  lab::CaptureJob job;
  const auto config = kernels::find_preset("geglu-post");
  // As the sample session has them: the post's GeGLU in PyTorch beside the gated GEMM.
  job.runs = {{*config, kernels::Variant::kTorchEager},
              {*config, kernels::Variant::kTorchCompile},
              {*config, kernels::Variant::kGatedGemm}};
  job.warmup = 2;
  job.iterations = 5;
  job.counters = true;
  lab::Lab lab(lab::make_runner_executor(), lab::make_cupti_capture());
  const lab::JobResult r = lab.run(store, job);
  if (const char* keep = std::getenv("FUSIONSCOPE_TEST_KEEP_SESSION"); keep && *keep)
    store.save_as(keep);
  ASSERT_EQ(r.runs.size(), 3u);
  EXPECT_EQ(r.runs[2].status, storage::RunStatus::kOk) << r.runs[2].result.error;
  const size_t expected[] = {5, 4};
  for (size_t v = 0; v < 2; ++v) {
    const lab::RunOutcome& o = r.runs[v];
    ASSERT_EQ(o.status, storage::RunStatus::kOk) << o.result.error << " " << o.trace.status;
    EXPECT_GT(o.result.median_ms, 0);
    // The traced run's own timing, not the counters pass's (its kernels are replayed).
    EXPECT_LT(o.result.median_ms, 1.0) << lab::run_name(job.runs[v]);
    EXPECT_TRUE(o.kernel_counters.starts_with("ok")) << o.kernel_counters;
    const storage::RunData run = store.load_run(o.run_id);
    const std::vector<uint32_t> first = analysis::iteration_kernels(run, 2);
    EXPECT_EQ(first.size(), expected[v]) << run.info.name;
    bool fused = false;
    std::set<uint32_t> with_dram;
    for (const auto& m : run.kernel_metrics)
      if (run.str(m.name) == "dram__bytes_read.sum") with_dram.insert(m.correlation_id);
    for (uint32_t i : first) {
      const auto& k = run.kernels[i];
      EXPECT_TRUE(with_dram.count(k.correlation_id)) << run.str(k.name);
      if (run.str(k.name).find("triton_poi_fused") != std::string::npos &&
          run.str(k.name).find("gelu") != std::string::npos)
        fused = true;
    }
    EXPECT_EQ(fused, v == 1) << run.info.name;
  }
}

}  // namespace
}  // namespace fusionscope
