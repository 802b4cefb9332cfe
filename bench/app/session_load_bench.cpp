// session_load_bench [--kernels N]... [--dir DIR] [--frames F]: opens a session of N kernels (by
// default 1,000,000 and 10,000,000) the way the app does, on its loading worker, while drawing the
// whole app every frame in a headless ImGui context (NewFrame to Render, no GPU), and prints
//   first frame   wall time from asking for the session to the end of the first frame;
//   loaded        wall time until the session is open and a frame has drawn it;
//   frame build   CPU time per frame with the run on the timeline, median and worst over F
//                 frames, zoomed out to everything, fitted to the timed iterations, and panned.
// The session is one run on one stream: kernels of an MLP's mix of lengths (2 to 80 us) with
// gaps, an NVTX range "iteration N" over every five, written once into DIR and reused.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <imgui.h>
#include <CLI/CLI.hpp>

#include "app.h"
#include "app_state.h"
#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/session_store.h"

namespace fs = std::filesystem;
using namespace fusionscope;

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Writes the session unless a complete one is there from an earlier run.
void make_session(const fs::path& path, size_t kernels) {
  std::error_code ec;
  if (fs::exists(path, ec)) {
    const storage::SessionStore store = storage::SessionStore::open(path);
    if (store.property("bench.complete") == std::to_string(kernels)) return;
    fs::remove(path, ec);
  }
  std::printf("writing %s (%zu kernels)...\n", path.c_str(), kernels);
  std::fflush(stdout);
  storage::SessionInfo info;
  info.name = "load benchmark";
  info.gpu_name = "NVIDIA H100 80GB HBM3";
  storage::SessionStore store = storage::SessionStore::create(path, info);
  storage::RunInfo run;
  run.name = std::to_string(kernels) + " kernels";
  run.kind = "mlp";
  run.variant = "eager";
  run.status = storage::RunStatus::kOk;
  run.warmup = 2;
  run.iterations = static_cast<int>(kernels / 5) - 2;
  storage::RunWriter writer(store, run);
  const char* names[] = {"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", "activation_kernel",
                         "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", "multiply_kernel",
                         "nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT"};
  const char* ops[] = {"gate", "gelu-tanh", "up", "mul", "down"};
  storage::StringId name_ids[5], op_ids[5];
  for (int i = 0; i < 5; ++i) {
    name_ids[i] = store.intern(names[i]);
    op_ids[i] = store.intern(ops[i]);
  }
  const double lengths_us[] = {61.3, 33.0, 62.4, 51.0, 55.1};
  std::mt19937_64 rng(42);
  std::vector<storage::KernelRecord> batch;
  std::vector<storage::RangeRecord> ranges;
  int64_t t = 1'000'000'000;
  const size_t kBatch = 100'000;
  for (size_t i = 0; i < kernels; ++i) {
    const size_t j = i % 5;
    if (j == 0) {
      storage::RangeRecord r;
      r.start_ns = t;
      r.name = store.intern("iteration " + std::to_string(i / 5));
      r.thread_id = 1;
      ranges.push_back(r);
    }
    storage::KernelRecord k;
    k.start_ns = t;
    const double jitter = 0.97 + 0.06 * static_cast<double>(rng() % 1000) / 1000.0;
    k.end_ns = t + static_cast<int64_t>(lengths_us[j] * jitter * 1000);
    k.stream = 7;
    k.correlation_id = static_cast<uint32_t>(i + 1);
    k.name = name_ids[j];
    k.op = op_ids[j];
    k.grid = {132, 1, 1};
    k.block = {384, 1, 1};
    batch.push_back(k);
    t = k.end_ns + 1000 + static_cast<int64_t>(rng() % 5000);
    if (j == 4) ranges.back().end_ns = t;
    if (batch.size() == kBatch) {
      writer.add_kernels(batch);
      batch.clear();
    }
    // Ranges leave in batches once closed: the last one is still open until its fifth kernel.
    if (j == 4 && ranges.size() == kBatch / 5) {
      writer.add_ranges(ranges);
      ranges.clear();
    }
  }
  if (!ranges.empty() && ranges.back().end_ns == 0) ranges.back().end_ns = t;
  writer.add_kernels(batch);
  writer.add_ranges(ranges);
  writer.commit();
  store.set_property("bench.complete", std::to_string(kernels));
}

struct Frames {
  Frames() {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(1920, 1080);
    unsigned char* pixels = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
  }
  ~Frames() { ImGui::DestroyContext(); }
  // One frame of the whole app; its CPU time.
  double frame(ui::AppState& app) {
    const double c0 = cpu_seconds();
    ImGui::GetIO().DeltaTime = 1.0f / 60;
    ImGui::NewFrame();
    ui::draw_app(app);
    ImGui::Render();
    return cpu_seconds() - c0;
  }
};

struct Spread {
  double median = 0, worst = 0;
};

Spread spread_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? Spread{} : Spread{v[v.size() / 2], v.back()};
}

void bench(size_t kernels, const fs::path& dir, int frames_per_view) {
  const fs::path path = dir / ("fusionscope-load-" + std::to_string(kernels) + ".fsdb");
  make_session(path, kernels);
  Frames frames;
  ui::AppState app;
  app.theme = ui::make_theme(1.0f);
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_seconds();
  ui::begin_open_session(app, path);
  frames.frame(app);
  const double first = since(t0);
  size_t frames_while_loading = 1;
  // Frames at 60 a second while the worker loads, as the window draws them (a busy loop would
  // take the worker's core on a small machine).
  while (app.loading) {
    std::this_thread::sleep_for(std::chrono::microseconds(16'667));
    frames.frame(app);
    ++frames_while_loading;
  }
  if (!app.session) {
    std::fprintf(stderr, "could not open %s: %s\n", path.c_str(), app.error.message.c_str());
    std::exit(1);
  }
  frames.frame(app);  // the first frame that draws the session
  const double loaded = since(t0);
  const double loaded_cpu = cpu_seconds() - cpu0;
  std::printf(
      "%12zu kernels: first frame %7.1f ms, loaded %7.3f s (%.3f s CPU, both threads; %zu frames "
      "drawn while loading)\n",
      kernels, first * 1e3, loaded, loaded_cpu, frames_while_loading);
  // Where the load's time goes: reading the records, and deriving what the views need.
  {
    const storage::SessionStore store = storage::SessionStore::open(path);
    const int64_t run = store.runs().front().id;
    const double c0 = cpu_seconds();
    auto w0 = std::chrono::steady_clock::now();
    storage::RunData data = store.load_run(run);
    const double read_wall = since(w0), read_cpu = cpu_seconds() - c0;
    const double c1 = cpu_seconds();
    w0 = std::chrono::steady_clock::now();
    const std::unique_ptr<ui::LoadedRun> prepared = ui::prepare_run(std::move(data));
    std::printf(
        "    of which reading the records %.3f s (%.3f s CPU), deriving %.3f s (%.3f s CPU)\n",
        read_wall, read_cpu, since(w0), cpu_seconds() - c1);
  }
  ui::TimelineState& t = app.timeline.timeline;
  struct View {
    const char* name;
    ui::FitRequest fit;
    bool pan;
  };
  for (const View& v : {View{"zoomed out to everything", ui::FitRequest::kAll, false},
                        View{"fitted to the timed iterations", ui::FitRequest::kIterations, false},
                        View{"1 ms window, panned", ui::FitRequest::kNone, true}}) {
    t.fit = v.fit;
    if (v.pan) {
      t.view_begin = 0;
      t.view_end = 1e6;
    }
    frames.frame(app);  // applies the fit
    std::vector<double> cpu;
    for (int i = 0; i < frames_per_view; ++i) {
      if (v.pan) {
        t.view_begin += 3e5;
        t.view_end += 3e5;
      }
      cpu.push_back(frames.frame(app));
    }
    const Spread s = spread_of(cpu);
    std::printf("    frame build, %-32s %7.2f ms median, %7.2f ms worst CPU\n", v.name,
                s.median * 1e3, s.worst * 1e3);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<size_t> sizes;
  std::string dir = fs::temp_directory_path().string();
  int frames = 100;
  CLI::App cli{"session_load_bench: time to the first frame and to a loaded N-kernel session"};
  cli.add_option("--kernels", sizes, "Kernels in the session (repeatable; default 1M and 10M)")
      ->check(CLI::PositiveNumber);
  cli.add_option("--dir", dir, "Where the sessions are written once and reused");
  cli.add_option("--frames", frames, "Frames timed per view")->check(CLI::Range(1, 100000));
  CLI11_PARSE(cli, argc, argv);
  if (sizes.empty()) sizes = {1'000'000, 10'000'000};
  std::printf(
      "session load benchmark: the whole app drawn headless at 1920x1080, %d frames a view\n",
      frames);
  try {
    for (size_t n : sizes) bench(n, dir, frames);
  } catch (const storage::StoreError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
