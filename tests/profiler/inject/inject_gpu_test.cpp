// Injection capture on a GPU: a small CUDA program the tests build, a PyTorch script, a launcher
// with two CUDA workers, a CUDA-graph replay and a crashing program, each captured into a session
// through libfusionscope_inject.so. Kernel counts match what the programs launch, and each
// kernel's captured duration agrees with the program's own CUDA events within 5%. Also: a capture
// limited by --delay/--duration, torchrun's two ranks, DataLoader workers forked before and after
// CUDA, torch.compile's whole-module kernels mapped to ops, and the injected counters pass's DRAM
// bytes of PyTorch's kernels against Nsight Compute.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
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
#include "fusionscope/profiler/process_capture.h"
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
// The tests' Python scripts: FUSIONSCOPE_INJECT_SCRIPTS (a folder), else beside this program,
// else in the source tree.
std::string script(const std::string& name) {
  if (const char* v = std::getenv("FUSIONSCOPE_INJECT_SCRIPTS"); v && *v)
    return (fs::path(v) / name).string();
  std::error_code ec;
  const fs::path beside = fs::read_symlink("/proc/self/exe", ec).parent_path() / name;
  if (!ec && fs::exists(beside, ec)) return beside.string();
  return (fs::path(FUSIONSCOPE_INJECT_SCRIPTS_DIR) / name).string();
}

int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

nlohmann::json read_json(const fs::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
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
                 bool counters = false, lab::ProgramCaptureRequest request = {}) {
  storage::SessionInfo info;
  info.name = "inject gpu test";
  auto store = storage::SessionStore::create(dir / "s.fsdb", info);
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
  // `fusionscope capture`'s defaults, so that a kept session (FUSIONSCOPE_TEST_KEEP_SESSION) is
  // what `capture --preset geglu-post --variants torch-eager,torch-compile,gated-gemm --counters`
  // writes.
  job.warmup = 5;
  job.iterations = 20;
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
    EXPECT_TRUE(o.kernel_counters.starts_with("ok")) << o.kernel_counters;
    const storage::RunData run = store.load_run(o.run_id);
    // The traced run's own timing, not the counters pass's (its kernels are replayed): the
    // median pass is the traced passes' median span, first kernel to first kernel. (A bound of
    // 1 ms failed once where a traced torch.compile pass waited on the host: 1.14 ms.)
    std::vector<double> spans;
    const auto first_start = [&](long it) {
      int64_t t = INT64_MAX;
      for (uint32_t i : analysis::iteration_kernels(run, it))
        t = std::min(t, run.kernels[i].start_ns);
      return t;
    };
    for (long it = job.warmup; it + 1 < job.warmup + job.iterations; ++it) {
      const int64_t a = first_start(it), b = first_start(it + 1);
      if (a != INT64_MAX && b != INT64_MAX) spans.push_back(static_cast<double>(b - a) * 1e-6);
    }
    ASSERT_GE(spans.size(), static_cast<size_t>(job.iterations / 2)) << run.info.name;
    std::sort(spans.begin(), spans.end());
    const double span = spans[spans.size() / 2];
    EXPECT_NEAR(o.result.median_ms, span, 0.25 * span + 0.05) << lab::run_name(job.runs[v]);
    const std::vector<uint32_t> first = analysis::iteration_kernels(run, job.warmup);
    EXPECT_EQ(first.size(), expected[v]) << run.info.name;
    bool fused = false;
    std::set<uint32_t> with_dram;
    for (const auto& m : run.kernel_metrics)
      if (run.str(m.name) == "dram__bytes_read.sum") with_dram.insert(m.correlation_id);
    EXPECT_NE(o.kernel_counters.find("L2 swept before each kernel"), std::string::npos)
        << o.kernel_counters;
    std::set<uint32_t> with_flops;
    for (const auto& m : run.kernel_metrics)
      if (run.str(m.name) == "fusionscope/flops") with_flops.insert(m.correlation_id);
    for (uint32_t i : first) {
      const auto& k = run.kernels[i];
      EXPECT_TRUE(with_dram.count(k.correlation_id)) << run.str(k.name);
      EXPECT_TRUE(with_flops.count(k.correlation_id)) << run.str(k.name) << ": no FLOPs";
      EXPECT_NE(k.op, storage::kNoString) << run.str(k.name) << " has no op";
      if (run.str(k.name).find("triton_poi_fused") != std::string::npos &&
          run.str(k.name).find("gelu") != std::string::npos)
        fused = true;
    }
    EXPECT_EQ(fused, v == 1) << run.info.name;
  }
}

TEST(InjectGpu, DelayAndDurationRecordOnlyTheirWindow) {
  FUSIONSCOPE_REQUIRE_GPU();
  const fs::path dir = testing::scratch_dir();
  const fs::path times = dir / "times.txt";
  // 14 iterations 150 ms apart; recorded from 1.2 s after the start for 0.6 s.
  lab::ProgramCaptureRequest request;
  request.process.delay_s = 1.2;
  request.process.duration_s = 0.6;
  const int64_t before = monotonic_ns();
  const Captured c = capture(dir,
                             {cuda_target(), "--out", (dir / "e.jsonl").string(), "--iterations",
                              "14", "--gap-ms", "150", "--times", times.string()},
                             0, false, request);
  ASSERT_EQ(c.outcome.status, storage::RunStatus::kOk) << c.outcome.error;
  std::vector<int64_t> began;
  std::ifstream in(times);
  for (int64_t t; in >> t;) began.push_back(t);
  ASSERT_EQ(began.size(), 14u);
  // The command starts a few ms after `before`: an iteration that began 100 ms after the window
  // surely opened and ended (two kernels, ~3 ms) before it could close was recorded; one that
  // ended before it opened or began 100 ms after it closed was not.
  const int64_t open = before + 1'200'000'000, close = before + 1'800'000'000;
  const int64_t ms = 1'000'000;
  size_t surely = 0, possibly = 0;
  for (int64_t t : began) {
    if (t >= open + 100 * ms && t + 20 * ms <= close) ++surely;
    if (t + 20 * ms >= open && t <= close + 100 * ms) ++possibly;
  }
  ASSERT_GT(surely, 0u) << "the program's iterations did not span the window";
  EXPECT_GE(c.run.kernels.size(), 2 * surely);
  EXPECT_LE(c.run.kernels.size(), 2 * possibly);
  for (const auto& k : c.run.kernels) {
    const std::string name = c.run.str(k.name);
    EXPECT_TRUE(name == "fs_spin_long" || name == "fs_spin_short") << name;
  }
}

TEST(InjectGpu, TorchrunsTwoRanksAreTwoProcessesWithTheirOwnLanes) {
  FUSIONSCOPE_REQUIRE_GPU();
  if (const std::string why = lab::torch_unavailable_reason(); !why.empty())
    GTEST_SKIP() << "needs PyTorch: " << why;
  const fs::path dir = testing::scratch_dir();
  lab::ProgramCaptureRequest request;
  // Both ranks on GPU 0, gloo over the loopback interface.
  request.process.environment = {{"GLOO_SOCKET_IFNAME", "lo"}};
  const Captured c =
      capture(dir,
              {lab::torch_python(), "-m", "torch.distributed.run", "--standalone",
               "--nproc_per_node=2", script("torch_ranks.py"), (dir / "rank").string(), "3"},
              0, false, request);
  ASSERT_EQ(c.outcome.status, storage::RunStatus::kOk) << c.outcome.error;
  std::set<uint32_t> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.insert(read_json(dir / ("rank." + std::to_string(r)))["pid"].get<uint32_t>());
  ASSERT_EQ(ranks.size(), 2u);
  std::map<uint32_t, std::set<uint32_t>> streams;  // pid -> its GPU lanes' streams
  for (const auto& lane : c.run.gpu_lanes) streams[lane.pid].insert(lane.stream);
  for (uint32_t pid : ranks) {
    const auto p =
        std::find_if(c.outcome.traced.processes.begin(), c.outcome.traced.processes.end(),
                     [&](const auto& q) { return q.pid == pid; });
    ASSERT_NE(p, c.outcome.traced.processes.end()) << "rank " << pid << " was not captured";
    EXPECT_TRUE(p->ended_cleanly) << p->name;
    EXPECT_GT(p->kernels, 0u) << p->name;
    EXPECT_NE(p->name.find("torch_ranks.py"), std::string::npos) << p->name;
    EXPECT_FALSE(streams[pid].empty()) << "rank " << pid << " has GPU lanes of its own";
  }
  // Both ranks launch on their default stream: the same stream number, two lanes.
  std::vector<uint32_t> shared;
  const auto a = streams[*ranks.begin()], b = streams[*ranks.rbegin()];
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(shared));
  EXPECT_FALSE(shared.empty()) << "the ranks used different stream numbers";
  // Each rank's three iterations, each with its own kernels, counted per process.
  const std::vector<long> iteration = analysis::kernel_iterations(c.run);
  std::map<std::pair<uint32_t, long>, int> per;
  for (size_t i = 0; i < c.run.kernels.size(); ++i)
    if (iteration[i] >= 0) ++per[{c.run.kernels[i].pid, iteration[i]}];
  for (uint32_t pid : ranks)
    for (long it = 0; it < 3; ++it) EXPECT_GT((per[{pid, it}]), 0) << pid << " iteration " << it;
}

TEST(InjectGpu, DataLoaderWorkersForkedBeforeCudaAreProcessesOfTheirOwn) {
  FUSIONSCOPE_REQUIRE_GPU();
  if (const std::string why = lab::torch_unavailable_reason(); !why.empty())
    GTEST_SKIP() << "needs PyTorch: " << why;
  const fs::path dir = testing::scratch_dir();
  const Captured c = capture(dir, {lab::torch_python(), script("torch_loader.py"),
                                   (dir / "r.json").string(), "--workers-touch-cuda"});
  ASSERT_EQ(c.outcome.status, storage::RunStatus::kOk) << c.outcome.error;
  const auto r = read_json(dir / "r.json");
  EXPECT_TRUE(r["ok"].get<bool>());
  const auto workers = r["workers"].get<std::vector<uint32_t>>();
  ASSERT_EQ(workers.size(), 2u);
  const uint32_t main_pid = r["pid"].get<uint32_t>();
  std::map<uint32_t, const profiler::CapturedProcess*> by_pid;
  for (const auto& p : c.outcome.traced.processes) by_pid[p.pid] = &p;
  ASSERT_TRUE(by_pid.count(main_pid));
  EXPECT_TRUE(by_pid[main_pid]->ended_cleanly);
  for (uint32_t w : workers) {
    ASSERT_TRUE(by_pid.count(w)) << "worker " << w << " touched CUDA but was not captured";
    // A fork-started worker leaves through _exit, so what reached us came with the periodic
    // flush: each ran a kernel per item long before it ended.
    EXPECT_GT(by_pid[w]->kernels, 0u) << "worker " << w << ": " << c.run.info.trace_status;
    EXPECT_EQ(by_pid[w]->ppid, main_pid);
  }
  std::set<uint32_t> lane_pids;
  for (const auto& lane : c.run.gpu_lanes) lane_pids.insert(lane.pid);
  EXPECT_EQ(lane_pids.size(), 3u) << "the main process and each worker have their own GPU lanes";
}

TEST(InjectGpu, DataLoaderWorkersForkedAfterCudaLeaveTheTraceAlone) {
  FUSIONSCOPE_REQUIRE_GPU();
  if (const std::string why = lab::torch_unavailable_reason(); !why.empty())
    GTEST_SKIP() << "needs PyTorch: " << why;
  const fs::path dir = testing::scratch_dir();
  const Captured c =
      capture(dir, {lab::torch_python(), script("torch_loader.py"), (dir / "r.json").string()});
  ASSERT_EQ(c.outcome.status, storage::RunStatus::kOk) << c.outcome.error;
  const auto r = read_json(dir / "r.json");
  EXPECT_TRUE(r["ok"].get<bool>());
  EXPECT_EQ(r["workers"].size(), 2u);
  // The forked copies inherit the stream's socket, but write nothing into it.
  ASSERT_EQ(c.outcome.traced.processes.size(), 1u);
  EXPECT_EQ(c.outcome.traced.processes[0].pid, r["pid"].get<uint32_t>());
  EXPECT_TRUE(c.outcome.traced.processes[0].ended_cleanly);
  EXPECT_EQ(c.run.info.trace_status, "");
  const std::vector<long> iteration = analysis::kernel_iterations(c.run);
  std::set<long> seen(iteration.begin(), iteration.end());
  for (long it = 0; it < r["batches"].get<long>(); ++it)
    EXPECT_TRUE(seen.count(it)) << "iteration " << it << " has no kernel";
}

TEST(InjectGpu, TorchCompileOfTheWholeModuleMapsItsKernelsToThePlansOps) {
  FUSIONSCOPE_REQUIRE_GPU();
  if (const std::string why = lab::torch_unavailable_reason(); !why.empty())
    GTEST_SKIP() << "needs PyTorch: " << why;
  ::setenv("FUSIONSCOPE_INJECT_LIBRARY", inject_library().c_str(), 1);
  const fs::path dir = testing::scratch_dir();
  auto store = storage::SessionStore::create(dir / "lab.fsdb", {});
  lab::CaptureJob job;
  const auto config = kernels::find_preset("geglu-post");
  job.runs = {{*config, kernels::Variant::kTorchCompile}};
  job.warmup = 2;
  job.iterations = 5;
  lab::Lab lab(lab::make_runner_executor(), lab::make_cupti_capture());
  const lab::JobResult r = lab.run(store, job);
  ASSERT_EQ(r.runs.size(), 1u);
  ASSERT_EQ(r.runs[0].status, storage::RunStatus::kOk) << r.runs[0].result.error;
  const storage::RunData run = store.load_run(r.runs[0].run_id);
  // (Inductor's compile workers may be processes of the run too; what matters here is that every
  // iteration launched the plan's kernels.)
  EXPECT_EQ(run.info.trace_status.find("plan's kernels"), std::string::npos)
      << run.info.trace_status;
  for (long it = 0; it < 7; ++it) {
    const std::vector<uint32_t> idx = analysis::iteration_kernels(run, it);
    ASSERT_EQ(idx.size(), 4u) << "iteration " << it;
    std::vector<uint32_t> launch_order = idx;
    std::sort(launch_order.begin(), launch_order.end(), [&](uint32_t a, uint32_t b) {
      return run.kernels[a].correlation_id < run.kernels[b].correlation_id;
    });
    const char* expected[] = {"gate", "up", "gelu-tanh*mul", "down"};
    for (size_t k = 0; k < 4; ++k) {
      const auto& kr = run.kernels[launch_order[k]];
      EXPECT_EQ(run.str(kr.op), expected[k]) << run.str(kr.name) << " in iteration " << it;
    }
    EXPECT_NE(run.str(run.kernels[launch_order[2]].name).find("triton_poi_fused"),
              std::string::npos);
  }
  // torch.compile's own cost per iteration next to its kernel time, for the log. Not asserted: the
  // wall time per iteration follows the host's load (252-346 us per iteration for 229-231 us of
  // kernels in consecutive runs on one H100), and a test is no benchmark.
  double kernel_ns = 0;
  for (long it = 2; it < 7; ++it)
    for (uint32_t i : analysis::iteration_kernels(run, it))
      kernel_ns += static_cast<double>(run.kernels[i].end_ns - run.kernels[i].start_ns);
  const double kernel_ms = kernel_ns / 5 / 1e6;
  std::printf("torch-compile: %.1f us of kernels per iteration, %.1f us per iteration (events)\n",
              kernel_ms * 1e3, r.runs[0].result.median_ms * 1e3);
}

// ncu's DRAM bytes of the last `count` kernels a command launches (its defaults: caches flushed
// and invalidated before each kernel).
struct NcuKernel {
  std::string name;
  double read = 0, write = 0;
};
std::vector<NcuKernel> ncu_last_kernels(const std::vector<std::string>& command, size_t count,
                                        std::string* error) {
  std::string ncu = "ncu";
  if (const char* e = std::getenv("FUSIONSCOPE_NCU"))
    ncu = e;
  else if (::access("/usr/local/cuda/bin/ncu", X_OK) == 0)
    ncu = "/usr/local/cuda/bin/ncu";
  std::string cmd = "'" + ncu +
                    "' --clock-control none --cache-control all --print-units base --csv "
                    "--metrics dram__bytes_read.sum,dram__bytes_write.sum";
  for (const auto& a : command) cmd += " '" + a + "'";
  cmd += " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(cmd.c_str(), "r"), ::pclose);
  std::vector<NcuKernel> all;
  std::map<std::string, size_t> index;
  std::vector<std::string> header;
  std::string text;
  std::array<char, 8192> buf{};
  auto fields = [](const std::string& line) {
    std::vector<std::string> out;
    std::string cur;
    bool quoted = false;
    for (char ch : line) {
      if (ch == '"')
        quoted = !quoted;
      else if (ch == ',' && !quoted)
        out.push_back(std::exchange(cur, {}));
      else if (ch != '\r' && ch != '\n')
        cur += ch;
    }
    out.push_back(cur);
    return out;
  };
  while (pipe && std::fgets(buf.data(), buf.size(), pipe.get())) {
    const std::string line = buf.data();
    if (line.empty() || line.front() != '"') {
      if (text.size() < 2000) text += line;
      continue;
    }
    const auto f = fields(line);
    if (header.empty()) {
      header = f;
      continue;
    }
    if (f.size() != header.size()) continue;
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < f.size(); ++i) row[header[i]] = f[i];
    auto [it, fresh] = index.emplace(row["ID"], all.size());
    if (fresh) all.push_back({row["Kernel Name"], 0, 0});
    std::string v = row["Metric Value"];
    v.erase(std::remove(v.begin(), v.end(), ','), v.end());
    const double value = v.empty() ? std::nan("") : std::stod(v);
    if (row["Metric Name"] == "dram__bytes_read.sum") all[it->second].read = value;
    if (row["Metric Name"] == "dram__bytes_write.sum") all[it->second].write = value;
  }
  if (all.size() < count) {
    *error = "ncu profiled " + std::to_string(all.size()) + " kernels: " + text;
    return {};
  }
  return std::vector<NcuKernel>(all.end() - static_cast<long>(count), all.end());
}

TEST(InjectGpu, PyTorchKernelsDramBytesAgreeWithNsightCompute) {
  FUSIONSCOPE_REQUIRE_GPU();
  if (const std::string why = lab::torch_unavailable_reason(); !why.empty())
    GTEST_SKIP() << "needs PyTorch: " << why;
  if (std::system("command -v ncu >/dev/null 2>&1 || test -x /usr/local/cuda/bin/ncu") != 0 &&
      std::getenv("FUSIONSCOPE_NCU") == nullptr)
    FUSIONSCOPE_GPU_TEST_CANNOT_RUN(std::string("Nsight Compute (ncu) is not installed here"));
  const fs::path dir = testing::scratch_dir();
  const auto config = kernels::find_preset("geglu-post");
  ASSERT_TRUE(config);
  // Two warm-up and two timed iterations: the counters pass profiles iteration 2 (DRAM, L2
  // swept) and 3 (the rest); ncu every kernel, of which the last ten are iterations 2 and 3.
  std::vector<std::string> command = {lab::torch_python(),
                                      lab::torch_script_path(),
                                      "--config",
                                      kernels::to_json(*config),
                                      "--variant",
                                      "torch-eager",
                                      "--warmup",
                                      "2",
                                      "--iters",
                                      "2",
                                      "--out",
                                      (dir / "r.json").string()};
  lab::ProgramCaptureRequest request;
  request.process.iteration_range = "iteration";
  const Captured c = capture(dir, command, 2, true, request);
  ASSERT_EQ(c.outcome.status, storage::RunStatus::kOk) << c.outcome.error;
  ASSERT_TRUE(c.outcome.kernel_counters.starts_with("ok")) << c.outcome.kernel_counters;
  EXPECT_NE(c.outcome.kernel_counters.find("L2 swept before each kernel"), std::string::npos)
      << c.outcome.kernel_counters;
  EXPECT_NE(c.outcome.kernel_counters.find("the other metrics in"), std::string::npos)
      << c.outcome.kernel_counters;
  const std::vector<uint32_t> idx = analysis::iteration_kernels(c.run, 2);
  ASSERT_EQ(idx.size(), 5u);
  std::map<uint32_t, std::map<std::string, double>> metrics;
  for (const auto& m : c.run.kernel_metrics) metrics[m.correlation_id][c.run.str(m.name)] = m.value;
  std::string error;
  command.back() = (dir / "ncu.json").string();
  const std::vector<NcuKernel> ref = ncu_last_kernels(command, 10, &error);
  if (error.find("ERR_NVGPUCTRPERM") != std::string::npos) FUSIONSCOPE_GPU_TEST_CANNOT_RUN(error);
  ASSERT_EQ(ref.size(), 10u) << error;
  std::printf("%-44s %9s %9s %9s %9s\n", "kernel", "ours rd", "ncu rd", "ours wr", "ncu wr");
  for (size_t k = 0; k < 5; ++k) {
    const auto& kr = c.run.kernels[idx[k]];
    const auto& mine = metrics[kr.correlation_id];
    ASSERT_TRUE(mine.count("dram__bytes_read.sum")) << c.run.str(kr.name);
    const double rd = mine.at("dram__bytes_read.sum"), wr = mine.at("dram__bytes_write.sum");
    // ncu's two iterations: the median of two is their mean.
    const double nrd = 0.5 * (ref[k].read + ref[k + 5].read);
    const double nwr = 0.5 * (ref[k].write + ref[k + 5].write);
    std::printf("%-44.44s %9.2f %9.2f %9.2f %9.2f\n", c.run.str(kr.name).c_str(), rd / 1e6,
                nrd / 1e6, wr / 1e6, nwr / 1e6);
    const double total = nrd + nwr;
    // As in CountersVsNsightCompute (counters_ncu_gpu_test.cpp): reads within 3%, writes within
    // 3% of the kernel's traffic (what the L2 still holds when a kernel's window closes varies).
    const double rdiff = std::fabs(rd - nrd), wdiff = std::fabs(wr - nwr);
    EXPECT_TRUE(rdiff <= 0.03 * nrd || (nrd < 0.1 * total && rdiff <= 0.03 * total))
        << c.run.str(kr.name) << " read " << rd << " vs ncu " << nrd;
    EXPECT_LE(wdiff, 0.03 * total) << c.run.str(kr.name) << " write " << wr << " vs ncu " << nwr;
    // The other window's metrics came too: the GEMMs' tensor FLOPs.
    if (c.run.str(kr.op) == "gate" || c.run.str(kr.op) == "up" || c.run.str(kr.op) == "down") {
      ASSERT_TRUE(mine.count("fusionscope/flops")) << c.run.str(kr.name);
      const double flops = 2.0 * 8192 * 768 * 3072;
      EXPECT_NEAR(mine.at("fusionscope/flops"), flops, 0.02 * flops) << c.run.str(kr.op);
    }
  }
}

}  // namespace
}  // namespace fusionscope
