// counters_replay_probe: which way of running the counters pass gives each kernel's DRAM bytes as
// Nsight Compute counts them (docs/counters.md, "How DRAM bytes are measured"), and how PM
// sampling holds up over a long run.
//
//   counters_replay_probe plain PRESET VARIANT [--timed N] [--sweep none|clean|empty]
//       one warm-up and N (1) timed forward passes, no counters (run it under ncu for
//       reference); with --sweep, the L2 sweep before each kernel, leaving the L2 full of clean
//       lines or empty (its lines discarded), and the sweep's own time printed first (run it
//       under `ncu --cache-control none` to count the kernels after our sweep with ncu); only
//       the timed passes run between cudaProfilerStart() and cudaProfilerStop()
//   counters_replay_probe modes PRESET VARIANT...   the counters pass in each measurement mode:
//       replay K (CUPTI kernel replay) or U (user replay: the runner runs the forward pass once
//       per hardware pass), metric set "full" (the default, 6 passes on GH100) or "dram"
//       (dram_kernel_metrics(), 1 pass), with or without the L2 sweep before each kernel
//       ("+sweep": the L2 left full of the sweep's clean lines; "+sweep+discard": its lines
//       discarded, an empty L2; the sweeps' ranges are dropped).
//       PROBE_MODES=name,name picks some.
//   PROBE_SWEEP_MULTIPLE=X sizes the sweep buffer at X times the L2 (3 unless set).
//   counters_replay_probe pm INTERVAL_US SECONDS BUFFER_MB SAMPLES_PER_IMAGE oldest|latest THREADS
//       PM sampling over a copy loop of SECONDS: samples kept, gaps, overflow, where time went
//       (PM_METRICS=dram: DRAM bytes alone).
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "fusionscope/counters/calibration.h"
#include "fusionscope/counters/kernel_counters.h"
#include "fusionscope/counters/l2_flush.h"
#include "fusionscope/counters/metric_names.h"
#include "fusionscope/counters/pm_sampler.h"
#include "fusionscope/kernels/plan.h"
#include "fusionscope/kernels/runner.h"

namespace fc = fusionscope::counters;
namespace fk = fusionscope::kernels;
namespace m = fusionscope::counters::metric;

namespace {

constexpr double kMB = 1e6;
constexpr const char* kGpuDramPct = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed";
constexpr const char* kDramBytesPct = "dram__bytes.sum.pct_of_peak_sustained_elapsed";

std::vector<std::string> with_throughputs(std::vector<std::string> v) {
  v.push_back(kGpuDramPct);
  v.push_back(kDramBytesPct);
  return v;
}

// PROBE_SWEEP_MULTIPLE: the sweep buffer in L2 sizes (3 unless set).
double sweep_multiple() {
  const char* e = std::getenv("PROBE_SWEEP_MULTIPLE");
  return e ? std::stod(e) : 3.0;
}

struct Mode {
  std::string name;
  fc::ReplayMode replay;
  bool dram_only;
  bool sweep;
  fc::L2SweepEnd end = fc::L2SweepEnd::kCleanLines;
};

std::vector<Mode> all_modes() {
  using R = fc::ReplayMode;
  constexpr auto kEmpty = fc::L2SweepEnd::kEmpty;
  return {
      {"K-full", R::kKernel, false, false},
      {"K-full+sweep", R::kKernel, false, true},
      {"K-dram", R::kKernel, true, false},
      {"K-dram+sweep", R::kKernel, true, true},
      {"K-dram+sweep+discard", R::kKernel, true, true, kEmpty},
      {"U-full", R::kUser, false, false},
      {"U-full+sweep", R::kUser, false, true},
      {"U-full+sweep+discard", R::kUser, false, true, kEmpty},
      {"U-dram+sweep", R::kUser, true, true},
      {"U-dram+sweep+discard", R::kUser, true, true, kEmpty},
  };
}

void run_mode(const fk::MlpConfig& config, fk::Variant variant, const Mode& mode) {
  const std::string tag = config.name + "/" + std::string(fk::to_string(variant)) + " " + mode.name;
  fc::CounterPassOptions po;
  po.replay = mode.replay;
  po.metrics =
      with_throughputs(mode.dram_only ? fc::dram_kernel_metrics() : fc::default_kernel_metrics());
  po.flush_l2 = mode.sweep;
  po.l2_sweep_end = mode.end;
  po.l2_sweep_multiple = sweep_multiple();
  fc::KernelCounterSession session(po);
  const bool user = mode.replay == fc::ReplayMode::kUser;
  fc::CounterStatus begun{fc::CounterAvailability::kFailed, "not begun"};
  if (user) begun = session.begin();
  if (user && !begun.ok()) {
    std::printf("== %s: %s\n", tag.c_str(), begun.describe().c_str());
    return;
  }
  fc::CounterPassResult pass;
  fk::RunOptions o;
  o.warmup_iterations = 2;
  o.timed_iterations = user ? static_cast<int>(session.passes()) : 1;
  o.check = false;
  o.nvtx = false;
  o.input_sets = 1;
  o.before_launch = [&](void* stream) { session.before_kernel(stream); };
  o.on_progress = [&](const fk::RunProgress& p) {
    using P = fk::RunProgress::Phase;
    if (p.phase == P::kTimed) {
      if (user) {
        session.begin_pass();
      } else if (p.iteration == 0) {
        begun = session.begin();
      }
    } else if (p.phase == P::kCheck || p.phase == P::kDone) {
      if (session.active()) pass = session.end();
    }
  };
  const auto t0 = std::chrono::steady_clock::now();
  const fk::RunResult run = fk::run(config, variant, o);
  if (session.active()) pass = session.end();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("== %s: %.2f s, %zu passes\n", tag.c_str(), secs, pass.passes);
  if (!run.ok) {
    std::printf("   run failed: %s\n", run.error.c_str());
    return;
  }
  if (!begun.ok() || !pass.status.ok()) {
    std::printf("   %s\n", (!begun.ok() ? begun : pass.status).describe().c_str());
    return;
  }
  const auto& plan = run.plan.launches;
  if (pass.kernels.size() != plan.size())
    std::printf("   %zu kernels, plan has %zu launches\n", pass.kernels.size(), plan.size());
  double tr = 0, tw = 0;
  for (size_t i = 0; i < pass.kernels.size(); ++i) {
    const size_t k = i;
    const double r = pass.value(k, m::kDramRead), w = pass.value(k, m::kDramWrite);
    tr += r;
    tw += w;
    std::printf(
        "ROW %s %s %s %zu %s read %.2f write %.2f l2write %.2f dur_us %.1f dramtp %.1f "
        "gpudramtp %.1f dramby %.1f\n",
        mode.name.c_str(), config.name.c_str(), std::string(fk::to_string(variant)).c_str(), i,
        i < plan.size() ? plan[i].op.c_str() : "?", r / kMB, w / kMB,
        pass.value(k, m::kL2WriteBytes) / kMB, pass.value(k, m::kDuration) * 1e-3,
        pass.value(k, m::kDramThroughputPct), pass.value(k, kGpuDramPct),
        pass.value(k, kDramBytesPct));
  }
  std::printf("TOTAL %s %s %s read %.1f write %.1f\n", mode.name.c_str(), config.name.c_str(),
              std::string(fk::to_string(variant)).c_str(), tr / kMB, tw / kMB);
}

// The sweep's own time, mean of `n` back to back on the default stream (CUDA events).
double sweep_us(fc::L2Flusher& flusher, int n) {
  cudaEvent_t a{}, b{};
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a);
  for (int i = 0; i < n; ++i) flusher.flush(nullptr);
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms * 1e3 / n;
}

int plain(const fk::MlpConfig& config, fk::Variant variant, int timed, const std::string& sweep) {
  std::unique_ptr<fc::L2Flusher> flusher;
  if (sweep != "none") {
    flusher = std::make_unique<fc::L2Flusher>(
        0, sweep_multiple(),
        sweep == "empty" ? fc::L2SweepEnd::kEmpty : fc::L2SweepEnd::kCleanLines);
    std::printf("SWEEP %s %.1f us (%.1f MB buffer)\n", sweep.c_str(), sweep_us(*flusher, 20),
                static_cast<double>(flusher->buffer_bytes()) / kMB);
  }
  fk::RunOptions o;
  o.warmup_iterations = 1;
  o.timed_iterations = timed;
  o.check = false;
  o.input_sets = 1;
  if (flusher) o.before_launch = [&](void* stream) { flusher->flush(stream); };
  o.profile_timed_only = true;  // for `ncu --profile-from-start off`
  const fk::RunResult r = fk::run(config, variant, o);
  if (!r.ok) {
    std::fprintf(stderr, "run failed: %s\n", r.error.c_str());
    return 1;
  }
  std::printf("PLAN %s %s %zu\n", config.name.c_str(), std::string(fk::to_string(variant)).c_str(),
              r.plan.launches.size());
  return 0;
}

// `pm`'s arguments as given (printed back with the figures).
struct PmArgs {
  std::string interval_us, seconds, buffer_mb;
  uint32_t samples_per_image = 0;
  std::string mode;  // oldest or latest
  uint32_t threads = 0;
};

int pm(const PmArgs& a) {
  fc::PmSamplingOptions o;
  o.interval_ns = static_cast<uint64_t>(std::stod(a.interval_us) * 1000);
  const double seconds = std::stod(a.seconds);
  o.hardware_buffer_bytes = static_cast<size_t>(std::stod(a.buffer_mb) * (1 << 20));
  o.samples_per_decode = a.samples_per_image;
  o.buffer_mode =
      a.mode == "latest" ? fc::PmBufferMode::kKeepLatest : fc::PmBufferMode::kKeepOldest;
  o.evaluate_threads = a.threads;
  // PM_METRICS=dram samples DRAM read and write bytes alone (smaller records than with the SM
  // and tensor activity of the default set).
  if (const char* which = std::getenv("PM_METRICS"); which && std::string(which) == "dram")
    o.metrics = fc::dram_sample_metrics();
  fc::CopyWorkload copy(size_t{1} << 30);
  copy.launch();
  fc::PmSampler sampler(o);
  const auto t0 = std::chrono::steady_clock::now();
  const fc::CounterStatus s = sampler.start();
  const double start_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!s.ok()) {
    std::printf("PM start failed: %s\n", s.describe().c_str());
    return 1;
  }
  const auto w0 = std::chrono::steady_clock::now();
  int copies = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count() < seconds) {
    for (int i = 0; i < 20; ++i, ++copies) copy.launch();
    cudaDeviceSynchronize();
  }
  const fc::PmSamplingResult r = sampler.stop();
  const double expected = seconds * 1e9 / static_cast<double>(o.interval_ns);
  int64_t first = r.samples.empty() ? 0 : r.samples.front().start_ns;
  int64_t last = r.samples.empty() ? 0 : r.samples.back().end_ns;
  double mean_bw = 0;
  const int rd = r.metric_index(m::kSampleDramRead), wr = r.metric_index(m::kSampleDramWrite);
  size_t busy = 0;
  for (const auto& x : r.samples) {
    if (rd < 0 || wr < 0) break;
    const double bw = x.values[static_cast<size_t>(rd)] + x.values[static_cast<size_t>(wr)];
    if (bw > 1e12) {
      mean_bw += bw;
      ++busy;
    }
  }
  std::printf(
      "PM interval %s us, %s s, buffer %s MB, %u/image, %s, %u threads: status %s; start %.2f s, "
      "stop %.2f s (decode in progress %.2f); %zu samples (%.0f expected for the workload) over "
      "%.3f s; overflow %d; "
      "%zu gaps, %.3f ms lost; images %zu, decode %.3f s in %zu calls (longest %.3f), evaluate "
      "%.3f s "
      "(%.1f us/sample); %d copies; busy mean %.0f GB/s\n",
      a.interval_us.c_str(), a.seconds.c_str(), a.buffer_mb.c_str(), o.samples_per_decode,
      a.mode.c_str(), o.evaluate_threads, r.status.describe().c_str(), start_s, r.times.stop_s,
      r.times.stop_join_s, r.samples.size(), expected, static_cast<double>(last - first) * 1e-9,
      r.hardware_overflow ? 1 : 0, r.gaps.size(), static_cast<double>(r.lost_ns()) * 1e-6,
      r.times.images, r.times.decode_s, r.times.decode_calls, r.times.decode_longest_s,
      r.times.evaluate_s,
      r.samples.empty() ? 0.0 : r.times.evaluate_s * 1e6 / static_cast<double>(r.samples.size()),
      copies, busy ? mean_bw / static_cast<double>(busy) / 1e9 : 0.0);
  for (size_t i = 0; i < r.gaps.size() && i < 5; ++i)
    std::printf("   gap %.3f ms after start, %.3f ms long\n",
                static_cast<double>(r.gaps[i].start_ns - first) * 1e-6,
                static_cast<double>(r.gaps[i].end_ns - r.gaps[i].start_ns) * 1e-6);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "counters_replay_probe: the counters pass's measurement modes; PM sampling held long"};
  app.require_subcommand(1);
  std::string preset, variant_name;
  std::vector<std::string> variant_names;
  auto* plain_cmd =
      app.add_subcommand("plain", "One warm-up and one timed forward pass, no counters");
  plain_cmd->add_option("preset", preset, "Preset")->required();
  plain_cmd->add_option("variant", variant_name, "Variant")->required();
  int timed = 1;
  std::string sweep = "none";
  plain_cmd->add_option("--timed", timed, "Timed forward passes")->check(CLI::PositiveNumber);
  plain_cmd->add_option("--sweep", sweep, "L2 sweep before each kernel, and what it leaves")
      ->check(CLI::IsMember({"none", "clean", "empty"}));
  auto* modes_cmd = app.add_subcommand("modes", "The counters pass in each measurement mode");
  modes_cmd->add_option("preset", preset, "Preset")->required();
  modes_cmd->add_option("variants", variant_names, "Variants")->required();
  PmArgs pm_args;
  auto* pm_cmd = app.add_subcommand("pm", "PM sampling over a copy loop");
  pm_cmd->add_option("interval_us", pm_args.interval_us, "Sampling interval (us)")->required();
  pm_cmd->add_option("seconds", pm_args.seconds, "Length of the copy loop (s)")->required();
  pm_cmd->add_option("buffer_mb", pm_args.buffer_mb, "Hardware buffer (MB)")->required();
  pm_cmd->add_option("samples_per_image", pm_args.samples_per_image, "Samples per decode")
      ->required();
  pm_cmd->add_option("mode", pm_args.mode, "Which samples a full buffer keeps")
      ->required()
      ->check(CLI::IsMember({"oldest", "latest"}));
  pm_cmd->add_option("threads", pm_args.threads, "Evaluation threads")->required();
  CLI11_PARSE(app, argc, argv);
  if (pm_cmd->parsed()) return pm(pm_args);
  const auto config = fk::find_preset(preset);
  if (!config) {
    std::fprintf(stderr, "no preset named %s\n", preset.c_str());
    return 2;
  }
  std::vector<fk::Variant> variants;
  if (plain_cmd->parsed()) variant_names = {variant_name};
  for (const std::string& name : variant_names) variants.push_back(fk::parse_variant(name));
  if (plain_cmd->parsed()) return plain(*config, variants.front(), timed, sweep);
  const char* only = std::getenv("PROBE_MODES");  // comma-separated mode names, optional
  for (const auto v : variants) {
    for (const Mode& mode : all_modes()) {
      if (only && ("," + std::string(only) + ",").find("," + mode.name + ",") == std::string::npos)
        continue;
      run_mode(*config, v, mode);
      std::fflush(stdout);
    }
  }
  return 0;
}
