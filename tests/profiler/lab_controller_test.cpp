// The live lab's controller without a GPU: stand-ins for the runner, the tracer and the device.
// A job runs on the worker into the session and hands over its finished runs; bad requests are
// refused before anything runs; cancel stops the run in progress; a sweep records its runs in the
// session's properties; runs left "running" by a crash are marked interrupted.
#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "fusionscope/lab/lab_controller.h"
#include "fusionscope/storage/run_writer.h"
#include "test_paths.h"

namespace fusionscope::lab {
namespace {

using kernels::Variant;
using storage::RunStatus;

// Iterates like the runner (progress per iteration, cancel checked between them). With
// `hold_until_cancelled`, its first run waits in its first timed iteration until cancelled.
class SteppingExecutor : public Executor {
 public:
  explicit SteppingExecutor(bool hold_until_cancelled = false) : hold_(hold_until_cancelled) {}
  kernels::RunResult execute(const kernels::MlpConfig& config, Variant variant,
                             const kernels::RunOptions& o) override {
    ++calls;
    kernels::RunResult r;
    r.config = config;
    r.variant = variant;
    if (variant == fail_variant) {
      r.error = "CUDA error: an illegal memory access was encountered";
      return r;
    }
    for (int i = 0; i < o.warmup_iterations; ++i)
      if (o.on_progress)
        o.on_progress({kernels::RunProgress::Phase::kWarmup, i, o.warmup_iterations});
    for (int i = 0; i < o.timed_iterations; ++i) {
      if (o.on_progress)
        o.on_progress({kernels::RunProgress::Phase::kTimed, i, o.timed_iterations});
      while (hold_ && !(o.cancel && o.cancel->load()))
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (o.cancel && o.cancel->load()) {
        r.cancelled = true;
        r.error = "cancelled";
        return r;
      }
    }
    r.ok = true;
    r.median_ms = 0.2;
    r.wall_ms = 1.0;
    return r;
  }
  std::atomic<int> calls{0};
  Variant fail_variant = Variant::kFullyFused;

 private:
  bool hold_;
};

DeviceFacts fake_gpu(uint64_t free_bytes = uint64_t{80} << 30) {
  DeviceFacts d;
  d.available = true;
  d.name = "Fake GPU";
  d.free_bytes = free_bytes;
  d.total_bytes = free_bytes;
  return d;
}

struct Fixture {
  SteppingExecutor* executor = nullptr;
  std::unique_ptr<LabController> controller;
};

Fixture make(DeviceFacts device = fake_gpu(), bool hold = false,
             Variant fail_variant = Variant::kFullyFused) {
  Fixture f;
  auto executor = std::make_unique<SteppingExecutor>(hold);
  executor->fail_variant = fail_variant;
  f.executor = executor.get();
  auto shared = std::make_shared<std::unique_ptr<SteppingExecutor>>(std::move(executor));
  f.controller = std::make_unique<LabController>(
      [shared] {
        return std::make_unique<Lab>(std::move(*shared), make_no_capture("no tracer in tests"));
      },
      [device] { return device; });
  f.controller->wait_for_device();
  return f;
}

LabRequest geglu_request(std::vector<Variant> variants) {
  LabRequest r;
  r.job.runs = expand({*kernels::find_preset("geglu-post")}, variants);
  r.job.warmup = 1;
  r.job.iterations = 3;
  return r;
}

std::filesystem::path new_session(const std::string& name) {
  const auto path = testing::scratch_dir() / name;
  storage::SessionStore::create(path, {});
  return path;
}

TEST(LabController, RunsAJobIntoTheSessionAndHandsOverTheFinishedRuns) {
  Fixture f = make();
  const auto path = new_session("job.fsdb");
  std::string why;
  ASSERT_TRUE(
      f.controller->start(path, geglu_request({Variant::kEager, Variant::kGatedGemm}), &why))
      << why;
  f.controller->wait();
  const LabStatus s = f.controller->status();
  EXPECT_EQ(s.state, LabStatus::State::kDone);
  EXPECT_FALSE(s.busy());
  EXPECT_TRUE(s.error.empty()) << s.error;
  EXPECT_FALSE(s.cancelled);
  ASSERT_EQ(s.finished.size(), 2u);
  EXPECT_EQ(s.finished[1].name, "geglu-post / gated-gemm");
  EXPECT_EQ(s.finished[1].status, RunStatus::kOk);
  EXPECT_EQ(s.summary(), "2 runs: 2 ok");
  EXPECT_EQ(s.trace_unavailable, "no tracer in tests");
  EXPECT_EQ(s.run_ids.size(), 2u);
  EXPECT_EQ(s.progress.stage, Progress::Stage::kFinished);
  EXPECT_EQ(s.describe_progress(), "run 2 of 2: geglu-post / gated-gemm, ok");

  const std::vector<int64_t> ids = f.controller->take_finished_runs();
  EXPECT_EQ(ids, s.run_ids);
  EXPECT_TRUE(f.controller->take_finished_runs().empty());  // handed over once
  const auto store = storage::SessionStore::open(path);
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].status, RunStatus::kOk);
  EXPECT_EQ(runs[0].iterations, 3);

  // The next job goes into the same session.
  ASSERT_TRUE(f.controller->start(path, geglu_request({Variant::kEpilogue}), &why)) << why;
  f.controller->wait();
  EXPECT_EQ(storage::SessionStore::open(path).runs().size(), 3u);
  EXPECT_EQ(f.executor->calls.load(), 3);
}

TEST(LabController, RefusesBadRequestsBeforeAnythingRuns) {
  const DeviceFacts gpu = fake_gpu(uint64_t{64} << 20);  // 64 MiB free
  Fixture f = make(gpu);
  const auto path = new_session("refused.fsdb");
  // The code of the only refusal of a request.
  auto code = [&](const LabRequest& r) {
    const std::vector<Refusal> refusals = check_request(r, gpu);
    EXPECT_EQ(refusals.size(), 1u) << messages(refusals);
    return refusals.empty() ? RefusalCode::kProbing : refusals.front().code;
  };
  auto refusal = [&](LabRequest r) {
    std::string why;
    EXPECT_FALSE(f.controller->start(path, std::move(r), &why));
    return why;
  };
  LabRequest zero = geglu_request({Variant::kEager});
  zero.job.runs[0].config.rows = 0;
  EXPECT_NE(refusal(zero).find("rows must be positive"), std::string::npos);
  EXPECT_EQ(code(zero), RefusalCode::kInvalidConfig);

  LabRequest odd = geglu_request({Variant::kEager});
  odd.job.runs[0].config.widths[1] = 3000 + 1;
  EXPECT_NE(refusal(odd).find("multiple of 8"), std::string::npos);
  EXPECT_EQ(code(odd), RefusalCode::kInvalidConfig);

  // The post's GeGLU needs more than 64 MiB.
  EXPECT_NE(refusal(geglu_request({Variant::kEager})).find("of device memory"), std::string::npos);
  EXPECT_EQ(code(geglu_request({Variant::kEager})), RefusalCode::kDeviceMemory);

  LabRequest unsupported;
  unsupported.job.runs = {{*kernels::find_preset("linear-post"), Variant::kGatedGemm}};
  EXPECT_NE(refusal(unsupported).find("gated-gemm: applies to gated MLPs only"), std::string::npos);
  EXPECT_EQ(code(unsupported), RefusalCode::kInvalidConfig);

  LabRequest none = geglu_request({});
  EXPECT_NE(refusal(none).find("at least one variant"), std::string::npos);
  EXPECT_EQ(code(none), RefusalCode::kNoVariant);

  LabRequest iters = geglu_request({Variant::kEager});
  iters.job.runs[0].config.widths = {64, 64};
  iters.job.runs[0].config.rows = 64;
  iters.job.iterations = 0;
  EXPECT_NE(refusal(iters).find("Timed iterations"), std::string::npos);
  EXPECT_EQ(code(iters), RefusalCode::kIterations);

  EXPECT_EQ(f.executor->calls.load(), 0);
  EXPECT_TRUE(storage::SessionStore::open(path).runs().empty());
}

TEST(LabController, WithoutAGpuItIsViewingOnly) {
  DeviceFacts none;
  none.reason = "CUDA driver version is insufficient";
  Fixture f = make(none);
  LabRequest small = geglu_request({Variant::kEager});
  small.job.runs[0].config.rows = 64;
  const auto refusals = check_request(small, none);
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_EQ(refusals[0].code, RefusalCode::kNoDevice);
  EXPECT_EQ(refusals[0].message,
            "no CUDA device: viewing only (CUDA driver version is insufficient)");
  std::string why;
  EXPECT_FALSE(f.controller->start(new_session("nogpu.fsdb"), small, &why));
  EXPECT_EQ(why, refusals[0].message);
  // Sizes are still checked, without a memory bound.
  small.job.runs[0].config.rows = -5;
  const auto both = check_request(small, none);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].code, RefusalCode::kInvalidConfig);
  EXPECT_EQ(both[1].code, RefusalCode::kNoDevice);
}

TEST(LabController, CancelStopsTheRunInProgressAndSkipsTheRest) {
  Fixture f = make(fake_gpu(), /*hold=*/true);
  const auto path = new_session("cancel.fsdb");
  std::atomic<bool> timing{false};
  f.controller->set_progress_hook([&](const Progress& p) {
    if (p.stage == Progress::Stage::kTimed) timing = true;
  });
  std::string why;
  ASSERT_TRUE(f.controller->start(
      path, geglu_request({Variant::kEager, Variant::kEpilogue, Variant::kGatedGemm}), &why));
  while (!timing) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(f.controller->busy());
  const LabStatus mid = f.controller->status();
  EXPECT_EQ(mid.describe_progress(), "run 1 of 3: geglu-post / eager, timed iteration 1 of 3");
  // A second job is refused while this one runs.
  EXPECT_FALSE(f.controller->start(path, geglu_request({Variant::kEager}), &why));
  EXPECT_NE(why.find("already running"), std::string::npos);

  f.controller->cancel();
  EXPECT_EQ(f.controller->status().state, LabStatus::State::kCancelling);
  f.controller->wait();
  const LabStatus s = f.controller->status();
  EXPECT_TRUE(s.cancelled);
  ASSERT_EQ(s.finished.size(), 1u);
  EXPECT_EQ(s.finished[0].status, RunStatus::kCancelled);
  EXPECT_EQ(s.summary(), "1 run: 0 ok, cancelled");
  EXPECT_EQ(f.executor->calls.load(), 1);
  const auto runs = storage::SessionStore::open(path).runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, RunStatus::kCancelled);
}

TEST(LabController, AFailedRunIsStoredWithItsMessageAndTheJobGoesOn) {
  Fixture f = make(fake_gpu(), false, Variant::kEager);
  const auto path = new_session("failed.fsdb");
  std::string why;
  ASSERT_TRUE(
      f.controller->start(path, geglu_request({Variant::kEager, Variant::kGatedGemm}), &why));
  f.controller->wait();
  const LabStatus s = f.controller->status();
  ASSERT_EQ(s.finished.size(), 2u);
  EXPECT_EQ(s.finished[0].status, RunStatus::kFailed);
  EXPECT_EQ(s.finished[0].message, "CUDA error: an illegal memory access was encountered");
  EXPECT_EQ(s.finished[1].status, RunStatus::kOk);
  EXPECT_EQ(s.summary(), "2 runs: 1 ok, 1 failed");
}

TEST(LabController, ASweepKeepsWhichRunMeasuredEachPoint) {
  Fixture f = make();
  const auto path = new_session("sweep.fsdb");
  SweepSpec spec;
  spec.size = SweepSize::kHidden;
  spec.from = 512;
  spec.to = 2048;
  LabRequest r;
  r.sweep =
      plan_sweep(*kernels::find_preset("geglu-post"), {Variant::kEager, Variant::kGatedGemm}, spec);
  r.job.runs = r.sweep->runs;
  r.job.warmup = 0;
  r.job.iterations = 2;
  std::string why;
  ASSERT_TRUE(f.controller->start(path, r, &why)) << why;
  f.controller->wait();
  const LabStatus s = f.controller->status();
  EXPECT_EQ(s.sweep_key, "lab.sweep.1");
  EXPECT_EQ(s.finished.size(), 6u);

  const auto store = storage::SessionStore::open(path);
  const auto sweeps = load_sweeps(store.properties());
  ASSERT_EQ(sweeps.size(), 1u);
  const SweepRecord& rec = sweeps[0];
  ASSERT_EQ(rec.points.size(), 3u);
  EXPECT_EQ(rec.points[1].value, 1024);
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 6u);
  EXPECT_EQ(rec.run_for(1, Variant::kGatedGemm), runs[3].id);
  EXPECT_EQ(runs[3].name, "geglu-post hidden=1024 / gated-gemm");
  EXPECT_EQ(rec.run_for(2, Variant::kEager), runs[4].id);
}

TEST(LabController, AMissingSessionFileEndsTheJobWithTheStoresMessage) {
  Fixture f = make();
  std::string why;
  ASSERT_TRUE(f.controller->start(testing::scratch_dir() / "absent.fsdb",
                                  geglu_request({Variant::kEager}), &why));
  f.controller->wait();
  const LabStatus s = f.controller->status();
  EXPECT_EQ(s.state, LabStatus::State::kDone);
  EXPECT_NE(s.error.find("absent.fsdb"), std::string::npos) << s.error;
  EXPECT_EQ(f.executor->calls.load(), 0);
}

TEST(LabController, RunsLeftRunningByACrashAreMarkedInterrupted) {
  const auto path = new_session("crash.fsdb");
  {
    auto store = storage::SessionStore::open(path, storage::OpenMode::kReadWrite);
    storage::RunInfo crashed;
    crashed.name = "geglu-post / eager";
    crashed.status = RunStatus::kRunning;
    storage::RunWriter(store, crashed).commit();  // a run of an older file: complete, "running"
    storage::RunInfo ok;
    ok.status = RunStatus::kOk;
    storage::RunWriter(store, ok).commit();
    storage::RunWriter live(store, crashed);  // a live writer's run is left alone
    EXPECT_EQ(mark_interrupted_runs(store), 1u);
    EXPECT_EQ(mark_interrupted_runs(store), 0u);
  }
  const auto runs = storage::SessionStore::open(path).runs();
  EXPECT_EQ(runs[0].status, RunStatus::kFailed);
  EXPECT_EQ(runs[0].error.rfind("interrupted: ", 0), 0u);
  EXPECT_EQ(runs[1].status, RunStatus::kOk);
  EXPECT_EQ(runs.size(), 2u);  // the live writer's run was removed when it was not committed
}

TEST(LabController, DestroyingItWhileAJobRunsCancelsAndStoresTheRun) {
  const auto path = new_session("destroy.fsdb");
  {
    std::atomic<bool> timing{false};  // outlives the controller, whose worker sets it
    Fixture f = make(fake_gpu(), /*hold=*/true);
    f.controller->set_progress_hook([&](const Progress& p) {
      if (p.stage == Progress::Stage::kTimed) timing = true;
    });
    std::string why;
    ASSERT_TRUE(f.controller->start(path, geglu_request({Variant::kEager}), &why));
    while (!timing) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const auto runs = storage::SessionStore::open(path).runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, RunStatus::kCancelled);
}

}  // namespace
}  // namespace fusionscope::lab
