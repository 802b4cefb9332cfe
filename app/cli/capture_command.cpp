// `fusionscope capture`: runs configurations x variants on the GPU under capture and writes a
// session, headless (no window, no display). The job comes from a file (--config) or a preset.
#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "capture_program.h"
#include "command_line.h"
#include "commands.h"
#include "fusionscope/lab/job_file.h"
#include "fusionscope/lab/lab.h"
#include "fusionscope/profiler/device_info.h"
#include "fusionscope/storage/session_store.h"
#include "session_output.h"

namespace fusionscope::cli {
namespace {

struct CaptureOptions {
  std::string config;
  std::string preset;
  std::string variants;
  std::string out;
  int iterations = -1;
  int warmup = -1;
  bool graph = false;
  bool verify = false;
  bool append = false;
  bool no_trace = false;
  int device = 0;
  bool counters = false;
  bool pm_sampling = false;
  int pm_interval_us = -1;
  int rounds = 0;  // 0: the job file's, else 1
  // `capture [options] -- COMMAND`: a program captured through injection.
  std::vector<std::string> command;
  std::string name;
  std::string cwd;
  std::vector<std::string> env;
  std::string iteration_range;
  std::string capture_range;
  double delay_s = 0;
  double duration_s = 0;
  bool no_driver_api = false;
  std::string kernel_filter;
  int kernel_limit = 0;
};

int run_command_capture(const CaptureOptions& o) {
  std::string clash;
  if (!o.config.empty()) clash = "--config";
  if (!o.preset.empty()) clash = "--preset";
  if (!o.variants.empty()) clash = "--variants";
  if (o.iterations >= 0) clash = "--iters";
  if (o.graph) clash = "--graph";
  if (o.verify) clash = "--verify";
  if (o.no_trace) clash = "--no-trace";
  if (o.rounds > 0) clash = "--rounds";
  if (!clash.empty()) {
    std::fprintf(stderr,
                 "fusionscope capture: %s runs fusionscope's own configurations; it does not go "
                 "with a command to capture (after --)\n",
                 clash.c_str());
    return 2;
  }
  ProgramCaptureCli p;
  p.command = o.command;
  p.out = o.out;
  p.append = o.append;
  p.name = o.name;
  p.cwd = o.cwd;
  p.env = o.env;
  p.iteration_range = o.iteration_range;
  p.warmup = std::max(0, o.warmup);
  p.capture_range = o.capture_range;
  p.delay_s = o.delay_s;
  p.duration_s = o.duration_s;
  p.no_driver_api = o.no_driver_api;
  p.counters = o.counters;
  p.kernel_filter = o.kernel_filter;
  p.kernel_limit = o.kernel_limit;
  p.pm_sampling = o.pm_sampling;
  if (o.pm_interval_us > 0) p.pm_interval_us = o.pm_interval_us;
  p.device = o.device;
  return run_program_capture(p);
}

std::atomic<bool> g_cancel{false};
extern "C" void on_interrupt(int) {
  g_cancel = true;
}

std::string preset_names() {
  std::string names;
  for (const auto& p : kernels::presets()) names += (names.empty() ? "" : ", ") + p.name;
  return names;
}

lab::JobFile make_job(const CaptureOptions& o) {
  lab::JobFile file;
  if (!o.config.empty()) {
    file = lab::load_job_file(o.config);
    if (!o.variants.empty()) {
      // --variants narrows a job file's runs to the variants named.
      const auto keep = lab::parse_variant_list(o.variants);
      std::erase_if(file.job.runs, [&](const lab::RunSpec& r) {
        return std::find(keep.begin(), keep.end(), r.variant) == keep.end();
      });
    }
  } else {
    auto preset = kernels::find_preset(o.preset);
    if (!preset)
      throw kernels::ConfigError("no preset named \"" + o.preset +
                                 "\" (presets: " + preset_names() + ")");
    const auto variants = lab::parse_variant_list(o.variants.empty() ? "all" : o.variants);
    file.job.runs = lab::expand({*preset}, variants, &file.skipped);
  }
  file.job.runs = lab::in_rounds(file.job.runs, o.rounds > 0 ? o.rounds : file.rounds);
  if (o.iterations >= 0) file.job.iterations = o.iterations;
  if (o.warmup >= 0) file.job.warmup = o.warmup;
  if (o.graph) file.job.cuda_graph = true;
  if (o.verify) file.job.verify = true;
  if (o.counters) file.job.counters = true;
  if (o.pm_sampling) file.job.pm_sampling = true;
  if (o.pm_interval_us > 0)
    file.job.pm_interval_ns = static_cast<uint64_t>(o.pm_interval_us) * 1000;
  file.job.device = o.device;
  if (file.job.runs.empty())
    throw kernels::ConfigError("nothing to run: no configuration supports the variants asked for");
  return file;
}

std::string stage_line(const lab::Progress& p) {
  const std::string status(storage::to_string(p.status));
  char line[512];
  if (p.status == storage::RunStatus::kOk) {
    std::snprintf(line, sizeof line, "%s  %.1f us/iter, %zu kernels traced", status.c_str(),
                  p.median_ms * 1e3, p.kernels_traced);
  } else {
    std::snprintf(line, sizeof line, "%s", status.c_str());
  }
  std::string s = line;
  if (!p.message.empty())
    s += (p.status == storage::RunStatus::kOk ? "  (trace: " : ": ") + p.message +
         (p.status == storage::RunStatus::kOk ? ")" : "");
  if (!p.counters.empty()) s += "; " + p.counters;
  return s;
}

int run_capture(const CaptureOptions& o) {
  if (!o.command.empty()) return run_command_capture(o);
  const bool program_only = !o.name.empty() || !o.cwd.empty() || !o.env.empty() ||
                            !o.iteration_range.empty() || !o.capture_range.empty() ||
                            o.delay_s > 0 || o.duration_s > 0 || o.no_driver_api ||
                            !o.kernel_filter.empty() || o.kernel_limit > 0;
  if (program_only) {
    std::fprintf(stderr,
                 "fusionscope capture: --name, --cwd, --env, --iteration-range, --capture-range, "
                 "--delay, --duration, --no-driver-api, --kernel-filter and --kernel-limit apply "
                 "to a command captured after --\n");
    return 2;
  }
  if (o.config.empty() == o.preset.empty()) {
    std::fprintf(stderr,
                 "fusionscope capture: give either --config FILE or --preset NAME (presets: %s)\n",
                 preset_names().c_str());
    return 2;
  }
  lab::JobFile file;
  try {
    file = make_job(o);
  } catch (const kernels::ConfigError& e) {
    std::fprintf(stderr, "fusionscope capture: %s\n", e.what());
    return 2;
  }
  for (const auto& s : file.skipped) std::fprintf(stderr, "skipping %s\n", s.c_str());

  const std::filesystem::path out = o.out;
  if (std::filesystem::exists(out) && !o.append) {
    std::fprintf(stderr,
                 "fusionscope capture: %s already exists (use --append to add runs to it)\n",
                 out.c_str());
    return 2;
  }
  if (std::string why = profiler::gpu_unavailable_reason(); !why.empty()) {
    std::fprintf(stderr, "fusionscope capture: no GPU to run on: %s; nothing was captured\n",
                 why.c_str());
    return 1;
  }

  const std::unique_ptr<storage::SessionStore> store =
      open_capture_output(out, file.session_name.empty() ? out.stem().string() : file.session_name);
  if (!store) return 1;

  lab::Lab lab(lab::make_runner_executor(),
               o.no_trace ? lab::make_no_capture("tracing was turned off (--no-trace)")
                          : lab::make_cupti_capture());
  if (!lab.tracing() && !o.no_trace)
    std::fprintf(stderr, "warning: runs will be stored without a trace: %s\n",
                 lab.tracing_unavailable_reason().c_str());

  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  const std::size_t width = std::to_string(file.job.runs.size()).size();
  auto progress = [&](const lab::Progress& p) {
    if (p.stage == lab::Progress::Stage::kStarting) {
      std::fprintf(stderr, "[%*zu/%zu] %s ... ", static_cast<int>(width), p.run_index + 1,
                   p.run_count, p.run_name.c_str());
      std::fflush(stderr);
    } else if (p.stage == lab::Progress::Stage::kFinished) {
      std::fprintf(stderr, "%s\n", stage_line(p).c_str());
    }
  };
  lab::JobResult result;
  try {
    result = lab.run(*store, file.job, progress, &g_cancel);
  } catch (const storage::StoreError& e) {
    std::fprintf(stderr, "\nfusionscope capture: writing the session failed: %s\n", e.what());
    return 1;
  }
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);

  std::fprintf(
      stderr,
      "wrote %zu run%s to %s (%zu ok, %zu failed%s); `fusionscope report %s` summarizes it\n",
      result.run_ids.size(), result.run_ids.size() == 1 ? "" : "s", out.c_str(), result.ok,
      result.failed, result.cancelled ? ", cancelled" : "", out.c_str());
  if (result.cancelled) return 130;
  return result.failed > 0 ? 1 : 0;
}

}  // namespace

void add_capture_command(CLI::App& app) {
  auto opt = std::make_shared<CaptureOptions>();
  auto* cmd = app.add_subcommand(
      "capture", "Run configurations on the GPU under capture and write a session (headless)");
  auto* config = cmd->add_option("--config", opt->config, "Job file (JSON, see docs/capture.md)")
                     ->check(CLI::ExistingFile);
  cmd->add_option("--preset", opt->preset, "Run a preset: " + preset_names())->excludes(config);
  cmd->add_option("--variants", opt->variants,
                  "Comma-separated variants, or all (default: every variant that applies)");
  cmd->add_option("--out", opt->out, "Session file to write (.fsdb)")->required();
  cmd->add_option("--iters", opt->iterations, "Timed iterations per run (default 20)")
      ->check(integer_in(1, 1000000));
  cmd->add_option("--warmup", opt->warmup,
                  "Warm-up iterations per run (default 5); with a command: its first N iteration "
                  "ranges count as warm-up (default 0)")
      ->check(integer_in(0, 100000));
  cmd->add_option("--rounds", opt->rounds,
                  "Run the job N times over, each round starting one run further along, the runs "
                  "named (round K): variants compared over rounds, not by when each ran (the "
                  "GPU's clock follows its power draw)")
      ->check(integer_in(1, 100));
  cmd->add_flag("--graph", opt->graph, "Replay each forward pass from a CUDA graph");
  cmd->add_flag("--verify", opt->verify, "Check each run's output against the fp32 reference");
  cmd->add_flag("--append", opt->append, "Add runs to an existing session");
  cmd->add_flag("--no-trace", opt->no_trace, "Time the runs without CUPTI");
  cmd->add_option("--device", opt->device, "CUDA device index")->check(integer_in(0, 1024));
  cmd->add_flag("--counters", opt->counters,
                "Per run, a counters pass after the timed one: DRAM bytes, FLOPs and activity per "
                "kernel (CUPTI range profiler; the forward pass repeated per pass, the L2 swept "
                "before each kernel: DRAM bytes as Nsight Compute counts them)");
  cmd->add_flag("--pm-sampling", opt->pm_sampling,
                "Sample DRAM read/write throughput and SM/tensor activity over each run (CUPTI PM "
                "sampling)");
  cmd->add_option("--pm-interval-us", opt->pm_interval_us,
                  "PM sampling interval in microseconds (default 10)")
      ->check(integer_in(1, 1000000));
  // A program of the user's, captured through the injection library: capture [options] -- CMD.
  cmd->add_option("command", opt->command,
                  "After --: a program to capture, with its arguments (its CUDA processes are "
                  "traced through fusionscope's injection library)");
  cmd->add_option("--name", opt->name, "Command capture: the run's name (default: the command)");
  cmd->add_option("--cwd", opt->cwd, "Command capture: working directory of the command")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--env", opt->env, "Command capture: KEY=VALUE set for the command (repeatable)");
  cmd->add_option("--iteration-range", opt->iteration_range,
                  "Command capture: NVTX ranges whose name starts with this mark iterations "
                  "(default: ProfilerStep#, else iteration)");
  cmd->add_option("--capture-range", opt->capture_range,
                  "Command capture: nvtx:NAME records only inside the first NVTX range NAME of "
                  "each process");
  cmd->add_option("--delay", opt->delay_s, "Command capture: start recording S seconds in")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--duration", opt->duration_s, "Command capture: record for S seconds")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_flag("--no-driver-api", opt->no_driver_api,
                "Command capture: record runtime API calls only, not driver API calls");
  cmd->add_option("--kernel-filter", opt->kernel_filter,
                  "Command capture with --counters: profile kernels whose name matches REGEX");
  cmd->add_option("--kernel-limit", opt->kernel_limit,
                  "Command capture with --counters: profile at most N kernels")
      ->check(integer_in(1, 1000000));
  cmd->callback([opt] { exit_code() = run_capture(*opt); });
}

}  // namespace fusionscope::cli
