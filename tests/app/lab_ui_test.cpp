// The lab and session commands of the app without a window: new sessions, Save As, notes,
// renaming and deleting runs (file and views together), the sample refused as a target, runs the
// lab stores arriving in the open session, the panel's refusals and its guess next to the sample's
// measured runs, a sweep's chart from the session's properties, and the state probe's text.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "app.h"
#include "fusionscope/lab/sweep.h"
#include "fusionscope/storage/run_writer.h"
#include "lab_form_check.h"
#include "lab_panel.h"
#include "sample/sample_session.h"
#include "sample/session_writer.h"
#include "session_edit.h"
#include "sweep_chart.h"
#include "test_paths.h"
#include "ui_probe.h"

namespace fusionscope::ui {
namespace {

namespace fs = std::filesystem;

fs::path synthetic_session(const fs::path& dir, const std::string& name = "synthetic.fsdb") {
  const fs::path p = dir / name;
  sample::write_session(sample::make_sample_session(), p);
  return p;
}

int64_t id_named(const Session& s, const std::string& name) {
  for (const auto& r : s.runs)
    if (r->data.info.name == name) return r->data.info.id;
  return -1;
}

TEST(SessionEdit, ANewSessionIsCreatedOpenedAndWritable) {
  AppState app;
  const fs::path path = fusionscope::testing::scratch_dir() / "new.fsdb";
  ASSERT_TRUE(create_and_open_session(app, path));
  ASSERT_TRUE(app.session);
  EXPECT_TRUE(app.session->runs.empty());
  EXPECT_EQ(app.session->info.name, "new");
  EXPECT_TRUE(session_writable(*app.session));
  // A second one at the same path is refused, and the open session stays.
  EXPECT_FALSE(create_and_open_session(app, path));
  EXPECT_TRUE(app.error.open_requested);
  EXPECT_NE(app.error.message.find("already exists"), std::string::npos) << app.error.message;
  EXPECT_TRUE(same_file(app.session->path, path));
}

TEST(SessionEdit, TheSampleIsReadOnlyAndSaveAsMakesAWritableCopy) {
  AppState app;
  ASSERT_TRUE(open_session_file(app, FUSIONSCOPE_SAMPLE));  // marked sample by its path
  std::string why;
  EXPECT_FALSE(session_writable(*app.session, &why));
  EXPECT_NE(why.find("sample session is read-only"), std::string::npos) << why;
  const int64_t first = app.session->runs.front()->data.info.id;
  EXPECT_FALSE(rename_run(app, first, "mine", &why));
  EXPECT_NE(why.find("read-only"), std::string::npos);
  EXPECT_FALSE(set_session_notes(app, "notes", &why));

  const fs::path copy = fusionscope::testing::scratch_dir() / "copy.fsdb";
  const size_t runs = app.session->runs.size();
  ASSERT_TRUE(save_session_as(app, copy));
  EXPECT_TRUE(same_file(app.session->path, copy));
  EXPECT_FALSE(app.session->is_sample);
  EXPECT_TRUE(session_writable(*app.session));
  EXPECT_EQ(app.session->runs.size(), runs);
  EXPECT_TRUE(rename_run(app, first, "mine", &why)) << why;
}

TEST(SessionEdit, RenameDeleteAndNotesChangeTheFileAndTheViews) {
  AppState app;
  const fs::path path = synthetic_session(fusionscope::testing::scratch_dir());
  ASSERT_TRUE(open_session_file(app, path));
  const int64_t eager = id_named(*app.session, "geglu-post / eager");
  const int64_t fused = id_named(*app.session, "geglu-post / pointwise-fused");
  ASSERT_GT(eager, 0);
  ASSERT_GT(fused, 0);
  app.runs.selected = {eager, fused};
  app.comparison.a = eager;
  app.comparison.b = fused;
  app.stats.run = fused;

  std::string why;
  ASSERT_TRUE(rename_run(app, eager, "GeGLU eager, 20 iterations", &why)) << why;
  EXPECT_EQ(app.session->find_run(eager)->data.info.name, "GeGLU eager, 20 iterations");
  EXPECT_FALSE(rename_run(app, eager, "", &why));
  EXPECT_FALSE(rename_run(app, 9999, "x", &why));
  ASSERT_TRUE(set_session_notes(app, "GeGLU on the lab's H100\nsecond line", &why)) << why;

  ASSERT_TRUE(delete_runs(app, {fused}, &why)) << why;
  EXPECT_EQ(app.session->find_run(fused), nullptr);
  EXPECT_EQ(app.runs.selected, std::vector<int64_t>{eager});
  EXPECT_EQ(app.comparison.b, -1);
  EXPECT_EQ(app.stats.run, -1);

  const auto store = storage::SessionStore::open(path);
  EXPECT_EQ(store.run(eager)->name, "GeGLU eager, 20 iterations");
  EXPECT_FALSE(store.run(fused).has_value());
  EXPECT_EQ(store.session().notes, "GeGLU on the lab's H100\nsecond line");
  EXPECT_EQ(store.runs().size(), app.session->runs.size());
}

TEST(SessionEdit, RunsStoredByTheLabArriveInTheOpenSessionInIdOrder) {
  const fs::path path = synthetic_session(fusionscope::testing::scratch_dir());
  auto session = open_session(path);
  const size_t before = session->runs.size();
  int64_t added = 0;
  {
    auto store = storage::SessionStore::open(path, storage::OpenMode::kReadWrite);
    storage::RunInfo info;
    info.name = "geglu-post / gated-gemm";
    info.status = storage::RunStatus::kRunning;
    storage::RunWriter run(store, info);
    run.commit();
    added = run.id();
    store.set_property("lab.sweep.1", "{}");
  }
  EXPECT_EQ(load_runs_into(*session, {added}), 1u);
  ASSERT_EQ(session->runs.size(), before + 1);
  EXPECT_EQ(session->runs.back()->data.info.id, added);
  EXPECT_EQ(session->runs.back()->data.info.status, storage::RunStatus::kRunning);
  EXPECT_EQ(session->properties.size(), 1u);
  {
    auto store = storage::SessionStore::open(path, storage::OpenMode::kReadWrite);
    storage::RunInfo info = *store.run(added);
    info.status = storage::RunStatus::kOk;
    store.update_run(info);
  }
  EXPECT_EQ(load_runs_into(*session, {added, 424242}), 1u);  // a missing id is skipped
  EXPECT_EQ(session->runs.size(), before + 1);               // replaced, not added twice
  EXPECT_EQ(session->runs.back()->data.info.status, storage::RunStatus::kOk);
}

// A GPU as the probe would describe one, for checking forms without a device.
lab::DeviceFacts h100() {
  lab::DeviceFacts gpu;
  gpu.available = true;
  gpu.name = "NVIDIA H100 80GB HBM3";
  gpu.total_bytes = gpu.free_bytes = uint64_t{80} << 30;
  return gpu;
}

TEST(LabPanel, RunningIntoTheSampleOffersANewSessionInstead) {
  AppState app;
  ASSERT_TRUE(open_session_file(app, FUSIONSCOPE_SAMPLE));
  const LabFormCheck check = check_lab_form(app.lab, h100());
  ASSERT_TRUE(check.request.has_value());
  EXPECT_TRUE(check.refusals.empty()) << lab::messages(check.refusals);
  // geglu-post in every variant that applies: fully-fused does not.
  EXPECT_EQ(check.request->job.runs.size(), 4u);
  start_lab_run(app, *check.request);
  EXPECT_TRUE(app.edit.pending.offer_requested);
  EXPECT_TRUE(app.edit.pending.request.has_value());
  EXPECT_NE(app.edit.pending.why_read_only.find("read-only"), std::string::npos);
  EXPECT_FALSE(app.lab.controller->busy());
}

TEST(LabPanel, RefusalsCarryTheirCodes) {
  using lab::RefusalCode;
  AppState app;
  app.lab.form.rows = 0;
  LabFormCheck check = check_lab_form(app.lab, h100());
  EXPECT_FALSE(check.request.has_value());
  EXPECT_FALSE(check.config.has_value());
  ASSERT_EQ(check.refusals.size(), 1u);
  EXPECT_EQ(check.refusals[0].code, RefusalCode::kInvalidConfig);
  EXPECT_NE(check.refusals[0].message.find("rows must be positive"), std::string::npos);

  // Without the probe's answer the request is built but waits for it.
  app.lab.form.rows = 8192;
  check = check_lab_form(app.lab, std::nullopt);
  EXPECT_TRUE(check.request.has_value());
  ASSERT_EQ(check.refusals.size(), 1u);
  EXPECT_EQ(check.refusals[0].code, RefusalCode::kProbing);

  // Without a device: viewing only, and a bad size is still named.
  lab::DeviceFacts none;
  none.reason = "no driver";
  app.lab.form.hidden = 3001;
  check = check_lab_form(app.lab, none);
  EXPECT_TRUE(lab::has(check.refusals, RefusalCode::kInvalidConfig));
  EXPECT_TRUE(lab::has(check.refusals, RefusalCode::kNoDevice));

  app.lab.form.hidden = 3072;
  app.lab.iterations = 0;
  app.lab.warmup = -1;
  check = check_lab_form(app.lab, h100());
  EXPECT_TRUE(lab::has(check.refusals, RefusalCode::kIterations));
  EXPECT_TRUE(lab::has(check.refusals, RefusalCode::kWarmup));
  app.lab.iterations = 20;
  app.lab.warmup = 5;

  app.lab.variants = {false, false, false, false, true};  // fully-fused alone: not for GeGLU
  check = check_lab_form(app.lab, h100());
  ASSERT_EQ(check.refusals.size(), 1u);
  EXPECT_EQ(check.refusals[0].code, RefusalCode::kNoVariant);
  app.lab.variants = {true, true, true, true, true};

  app.lab.sweep_on = true;
  app.lab.sweep.from = 8192;
  app.lab.sweep.to = 256;
  check = check_lab_form(app.lab, h100());
  EXPECT_FALSE(check.request.has_value());
  EXPECT_TRUE(lab::has(check.refusals, RefusalCode::kSweep));
  EXPECT_NE(check.refusals.at(0).message.find("must go up"), std::string::npos);
}

TEST(LabPanel, TheFormIsCheckedOncePerEditAndTheProbeSaysTheCodes) {
  AppState app;
  app.lab.form.hidden = 3001;
  update_lab_rows(app);
  const std::string key = app.lab.check_key;
  ASSERT_FALSE(app.lab.check.refusals.empty());
  EXPECT_EQ(app.lab.check.refusals[0].code, lab::RefusalCode::kInvalidConfig);
  EXPECT_FALSE(app.lab.run_enabled);
  // A frame with nothing edited keeps the check it has.
  app.lab.check.refusals.push_back({lab::RefusalCode::kSweep, "marker"});
  update_lab_rows(app);
  EXPECT_EQ(app.lab.check_key, key);
  EXPECT_TRUE(lab::has(app.lab.check.refusals, lab::RefusalCode::kSweep));
  // An edit checks again.
  app.lab.form.hidden = 3072;
  update_lab_rows(app);
  EXPECT_NE(app.lab.check_key, key);
  EXPECT_FALSE(lab::has(app.lab.check.refusals, lab::RefusalCode::kInvalidConfig));
  EXPECT_FALSE(lab::has(app.lab.check.refusals, lab::RefusalCode::kSweep));
  app.lab.form.hidden = 3001;
  update_lab_rows(app);
  const std::string probe = ui_probe_text(app);
  EXPECT_NE(probe.find("lab.refusal_codes=invalid-config"), std::string::npos) << probe;
  EXPECT_NE(probe.find("lab.refusals=" + app.lab.check.refusals[0].message), std::string::npos);
  EXPECT_NE(probe.find("lab.run_enabled=0"), std::string::npos);
}

TEST(LabPanel, TheGuessSitsNextToTheSamplesMeasuredRuns) {
  AppState app;
  ASSERT_TRUE(open_session_file(app, synthetic_session(fusionscope::testing::scratch_dir())));
  update_lab_rows(app);  // geglu-post, every variant: fusionscope's five, then PyTorch's two
  ASSERT_EQ(app.lab.rows.size(), 7u);
  EXPECT_EQ(app.lab.rows[5].variant, kernels::Variant::kTorchEager);
  EXPECT_EQ(app.lab.rows[6].variant, kernels::Variant::kTorchCompile);
  // Until python3 has answered (and wherever it has no PyTorch) they say why they cannot run.
  for (size_t i = 5; i < 7; ++i) {
    if (!app.lab.rows[i].supported) {
      EXPECT_FALSE(app.lab.rows[i].why_not.empty());
    }
  }
  EXPECT_EQ(app.lab.peaks.source.rfind("NVIDIA H100 80GB HBM3: ", 0), 0u) << app.lab.peaks.source;
  const LabVariantRow& eager = app.lab.rows[0];
  ASSERT_TRUE(eager.prediction.has_value());
  EXPECT_EQ(eager.prediction->kernels(), 5u);
  ASSERT_TRUE(eager.outcome.has_value());
  EXPECT_EQ(eager.run_name, "geglu-post / eager");
  EXPECT_TRUE(eager.outcome->measured);
  EXPECT_DOUBLE_EQ(eager.outcome->measured_kernels, 5.0);
  EXPECT_FALSE(eager.outcome->has(analysis::SurpriseKind::kKernelCount));
  ASSERT_TRUE(eager.outcome->roofline_fraction.has_value());
  EXPECT_GT(*eager.outcome->roofline_fraction, 0.3);
  EXPECT_LT(*eager.outcome->roofline_fraction, 1.0);
  // gated-gemm has no run in the synthetic session; fully-fused does not apply.
  EXPECT_FALSE(app.lab.rows[3].outcome.has_value());
  EXPECT_FALSE(app.lab.rows[4].supported);
  EXPECT_NE(app.lab.rows[4].why_not.find("fully-fused"), std::string::npos);
  // Without a probed device the run waits; the guess is shown all the same.
  EXPECT_FALSE(app.lab.run_enabled);
}

// Runs like the runner, slowly enough for the app to draw frames while the job is under way.
class SlowExecutor : public lab::Executor {
 public:
  kernels::RunResult execute(const kernels::MlpConfig& config, kernels::Variant variant,
                             const kernels::RunOptions& o) override {
    kernels::RunResult r;
    r.config = config;
    r.variant = variant;
    for (int i = 0; i < o.timed_iterations; ++i) {
      if (o.on_progress)
        o.on_progress({kernels::RunProgress::Phase::kTimed, i, o.timed_iterations});
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    r.ok = true;
    r.median_ms = 0.25;
    return r;
  }
};

// Writes a kernel and its launch inside an "iteration 0" range, as a traced timed iteration.
class OneKernelCapture : public lab::Capture {
 public:
  bool available() const override { return true; }
  std::string unavailable_reason() const override { return {}; }
  void begin_run(profiler::TraceSink& sink) override { sink_ = &sink; }
  profiler::TraceOutcome end_run() override {
    storage::RangeRecord it;
    it.start_ns = 0;
    it.end_ns = 10000;
    it.thread_id = 1;
    it.kind = storage::RangeKind::kNvtx;
    it.name = sink_->intern("iteration 0");
    sink_->insert_ranges(std::span(&it, 1));
    storage::ApiCallRecord a;
    a.start_ns = 100;
    a.end_ns = 200;
    a.thread_id = 1;
    a.correlation_id = 9;
    a.name = sink_->intern("cudaLaunchKernel");
    sink_->insert_api_calls(std::span(&a, 1));
    storage::KernelRecord k;
    k.start_ns = 1000;
    k.end_ns = 3000 + 1000 * static_cast<int64_t>(++runs_);
    k.correlation_id = 9;
    k.name = sink_->intern("k");
    sink_->insert_kernels(std::span(&k, 1));
    profiler::TraceOutcome out;
    out.traced = true;
    out.kernels = 1;
    return out;
  }

 private:
  profiler::TraceSink* sink_ = nullptr;
  int runs_ = 0;
};

TEST(LabPanel, FinishedRunsLandInTheOpenSessionWhileTheJobRunsAndTheViewsFollow) {
  AppState app;
  const fs::path path = fusionscope::testing::scratch_dir() / "live.fsdb";
  ASSERT_TRUE(create_and_open_session(app, path));
  lab::DeviceFacts gpu;
  gpu.available = true;
  gpu.name = "Test GPU";
  gpu.free_bytes = uint64_t{80} << 30;
  app.lab.controller = std::make_shared<lab::LabController>(
      [] {
        return std::make_unique<lab::Lab>(std::make_unique<SlowExecutor>(),
                                          std::make_unique<OneKernelCapture>());
      },
      [gpu] { return gpu; });
  app.lab.controller->wait_for_device();
  app.lab.iterations = 1;
  app.lab.warmup = 0;
  update_lab_rows(app);
  EXPECT_TRUE(app.lab.run_enabled) << lab::messages(app.lab.check.refusals);
  std::optional<lab::LabRequest> request = app.lab.check.request;
  ASSERT_TRUE(request.has_value());
  request->job.iterations = 20;  // 100 ms a run: the app sees the job under way
  start_lab_run(app, std::move(*request));
  ASSERT_TRUE(app.lab.controller->busy()) << app.lab.start_error;
  EXPECT_TRUE(lab_writing_session(app));
  std::string why;
  EXPECT_FALSE(set_session_notes(app, "busy", &why));  // edits wait for the job
  EXPECT_NE(why.find("lab job is writing"), std::string::npos);

  size_t seen_mid_job = 0;
  bool progress_shown = false;
  while (app.lab.controller->busy() || !app.lab.job_seen_done) {
    sync_lab(app);  // what every frame does
    if (app.lab.controller->busy()) {
      seen_mid_job = std::max(seen_mid_job, app.session->runs.size());
      progress_shown = progress_shown || app.status.rfind("Lab: run ", 0) == 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(seen_mid_job, 1u);  // runs arrived before the job ended
  EXPECT_TRUE(progress_shown);
  ASSERT_EQ(app.session->runs.size(), 4u);
  EXPECT_EQ(app.status, "Lab: 4 runs: 4 ok");
  EXPECT_EQ(app.session->info.gpu_name.empty(), true);  // no device description in a test
  // The views point at the job: eager against its fastest variant, its runs on the timeline.
  const int64_t eager = id_named(*app.session, "geglu-post / eager");
  EXPECT_EQ(app.comparison.a, eager);
  EXPECT_EQ(app.comparison.b, id_named(*app.session, "geglu-post / epilogue"));  // 4 us < 5, 6 us
  EXPECT_EQ(app.runs.selected.size(), 4u);
  // And the panel measures them against the guess: one kernel per iteration, not the plan's.
  update_lab_rows(app);
  ASSERT_TRUE(app.lab.rows[0].outcome.has_value());
  EXPECT_EQ(app.lab.rows[0].run_name, "geglu-post / eager");
  EXPECT_TRUE(app.lab.rows[0].outcome->has(analysis::SurpriseKind::kKernelCount));
}

TEST(SweepView, TheChartComesBackFromTheSessionsProperties) {
  const fs::path path = synthetic_session(fusionscope::testing::scratch_dir());
  auto session = open_session(path);
  const int64_t eager = id_named(*session, "geglu-post / eager");
  const int64_t fused = id_named(*session, "geglu-post / pointwise-fused");
  lab::SweepRecord r;
  r.key = "lab.sweep.1";
  r.spec.size = lab::SweepSize::kHidden;
  r.spec.from = 3072;
  r.spec.to = 3072;
  r.base = *kernels::find_preset("geglu-post");
  r.variants = {kernels::Variant::kEager, kernels::Variant::kPointwiseFused,
                kernels::Variant::kGatedGemm};
  r.points = {
      {3072, {{kernels::Variant::kEager, eager}, {kernels::Variant::kPointwiseFused, fused}}}};
  {
    auto store = storage::SessionStore::open(path, storage::OpenMode::kReadWrite);
    lab::save_sweep(store, r);
  }
  session = open_session(path);
  const auto sweeps = lab::load_sweeps(session->properties);
  ASSERT_EQ(sweeps.size(), 1u);
  const analysis::PredictionPeaks peaks = analysis::choose_peaks(&session->info, nullptr);
  const analysis::SweepChart chart = sweep_chart_of(*session, sweeps[0], peaks);
  ASSERT_EQ(chart.sizes, std::vector<double>{3072});
  ASSERT_EQ(chart.series.size(), 3u);
  EXPECT_EQ(chart.baseline, "eager");
  EXPECT_GT(chart.series[1].speedup[0], 1.0);           // the sample's fused run is faster
  EXPECT_TRUE(std::isnan(chart.series[2].time_ns[0]));  // no gated-gemm run: a gap
  EXPECT_GT(chart.series[2].bound_ns[0], 0);            // but its bound is known
}

}  // namespace
}  // namespace fusionscope::ui
