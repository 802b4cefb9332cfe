// Tracing overhead: each workload runs alternately untraced and traced (CUPTI activity capture
// into a session on disk, as `fusionscope capture` does), several rounds, and the medians of the
// runner's CUDA-event time per iteration (GPU time) and of its host wall time per iteration are
// compared. Untraced runs happen in the same process with the tracer idle (subscribed, no
// activity enabled), the state the app is in between captures.
//
//   fusionscope_capture_overhead [--rounds N] [--iters N] [--warmup N] [--graph]
//                                [--no-driver-api] [--no-nvtx] [--out DIR]
// --no-driver-api traces without CUDA driver API records, and --no-nvtx runs without the runner's
// NVTX ranges (traced and untraced alike), to see what each costs.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "fusionscope/kernels/runner.h"
#include "fusionscope/profiler/trace_sink.h"
#include "fusionscope/profiler/tracer.h"
#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/session_store.h"

namespace {

using namespace fusionscope;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

struct Sample {
  double gpu_us = 0;   // median CUDA-event time per iteration
  double wall_us = 0;  // host wall time per iteration
  size_t kernels = 0;
  uint64_t dropped = 0;
};

}  // namespace

int main(int argc, char** argv) {
  int rounds = 7, iters = 200, warmup = 20;
  bool graph = false;
  bool nvtx = true;
  profiler::TracerOptions tracer_options;
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "fusionscope-overhead";
  bool no_driver_api = false, no_nvtx = false;
  CLI::App app{
      "fusionscope_capture_overhead: what tracing costs, traced and untraced side by side"};
  app.add_option("--rounds", rounds, "Rounds of untraced then traced runs")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--iters", iters, "Timed iterations per run")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "Warm-up iterations per run")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--graph", graph, "Replay each forward pass from a CUDA graph");
  app.add_flag("--no-driver-api", no_driver_api, "Trace without CUDA driver API records");
  app.add_flag("--no-nvtx", no_nvtx, "Run without the runner's NVTX ranges");
  app.add_option("--out", dir, "Where the traced sessions go")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (no_driver_api) tracer_options.driver_api = false;
  nvtx = !no_nvtx;
  profiler::Tracer tracer(tracer_options);
  if (!tracer.available()) {
    std::fprintf(stderr, "cannot trace: %s\n", tracer.unavailable_reason().c_str());
    return 1;
  }
  std::filesystem::create_directories(dir);
  const auto path = dir / "overhead.fsdb";
  std::filesystem::remove(path);
  auto store = storage::SessionStore::create(path, {});

  struct Workload {
    const char* preset;
    kernels::Variant variant;
  };
  const Workload workloads[] = {{"geglu-post", kernels::Variant::kEager},
                                {"linear-post", kernels::Variant::kEager}};
  std::printf(
      "tracing overhead: %d rounds x (untraced, traced), %d warm-up + %d timed iterations%s%s%s\n",
      rounds, warmup, iters, graph ? ", CUDA graph" : "",
      tracer_options.driver_api ? "" : ", without driver API records",
      nvtx ? "" : ", without NVTX ranges");
  std::printf("%-24s %12s %12s %9s %12s %12s %9s %8s\n", "workload", "GPU untr.", "GPU traced",
              "GPU +%", "wall untr.", "wall traced", "wall +%", "kernels");
  for (const Workload& w : workloads) {
    const kernels::MlpConfig config = *kernels::find_preset(w.preset);
    kernels::RunOptions options;
    options.warmup_iterations = warmup;
    options.timed_iterations = iters;
    options.use_graph = graph;
    options.check = false;
    options.nvtx = nvtx;
    std::vector<double> gpu[2], wall[2];
    Sample traced_last;
    for (int r = 0; r < rounds; ++r) {
      for (int k = 0; k < 2; ++k) {
        const bool traced = (r % 2 == 0) ? k == 1 : k == 0;  // alternate which goes first
        storage::RunInfo info;
        info.name = std::string(w.preset) + (traced ? " traced" : " untraced");
        storage::RunWriter writer(store, info);
        profiler::StoreTraceSink sink(writer);
        if (traced) tracer.begin_run(sink);
        const kernels::RunResult result = kernels::run(config, w.variant, options);
        profiler::TraceOutcome out;
        if (traced) out = tracer.end_run();
        writer.commit();
        if (!result.ok) {
          std::fprintf(stderr, "%s failed: %s\n", w.preset, result.error.c_str());
          return 1;
        }
        gpu[traced].push_back(result.median_ms * 1e3);
        wall[traced].push_back(result.wall_ms * 1e3 / iters);
        if (traced) traced_last = {0, 0, out.kernels, out.dropped_records};
      }
    }
    const double g0 = median(gpu[0]), g1 = median(gpu[1]), w0 = median(wall[0]),
                 w1 = median(wall[1]);
    char name[64];
    std::snprintf(name, sizeof name, "%s/%s", w.preset,
                  std::string(kernels::to_string(w.variant)).c_str());
    std::printf("%-24s %9.2f us %9.2f us %+8.2f%% %9.2f us %9.2f us %+8.2f%% %8zu\n", name, g0, g1,
                100 * (g1 / g0 - 1), w0, w1, 100 * (w1 / w0 - 1), traced_last.kernels);
    std::printf("%-24s GPU per round untraced:", "");
    for (double v : gpu[0]) std::printf(" %.2f", v);
    std::printf("\n%-24s GPU per round traced:  ", "");
    for (double v : gpu[1]) std::printf(" %.2f", v);
    std::printf("\n");
    if (traced_last.dropped)
      std::printf("  (%llu records dropped)\n",
                  static_cast<unsigned long long>(traced_last.dropped));
  }
  std::filesystem::remove(dir / "overhead-copy.fsdb");
  store.save_as(dir / "overhead-copy.fsdb");  // a consistent single file, to size the traces
  std::printf("session written to %s (%.1f MB)\n", path.c_str(),
              static_cast<double>(std::filesystem::file_size(dir / "overhead-copy.fsdb")) / 1e6);
  return 0;
}
