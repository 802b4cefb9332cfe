#include "capture_program.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <regex>

#include "fusionscope/lab/program_capture.h"
#include "fusionscope/storage/session_store.h"
#include "session_output.h"

namespace fusionscope::cli {
namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) {
  g_stop = true;
}

// Checks that need nothing but the options; empty when they are fine.
std::string check(const ProgramCaptureCli& o, lab::ProgramCaptureRequest& request) {
  if (o.command.empty()) return "give the command to capture after --";
  request.process.command = o.command;
  request.process.working_directory = o.cwd;
  for (const auto& kv : o.env) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) return "--env takes KEY=VALUE (got \"" + kv + "\")";
    request.process.environment.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  if (!o.capture_range.empty()) {
    constexpr std::string_view kPrefix = "nvtx:";
    if (!std::string_view(o.capture_range).starts_with(kPrefix) ||
        o.capture_range.size() == kPrefix.size())
      return "--capture-range takes nvtx:NAME (the NVTX range whose first occurrence is captured)";
    if (o.delay_s > 0 || o.duration_s > 0)
      return "--capture-range does not go with --delay or --duration";
    request.process.capture_range = o.capture_range.substr(kPrefix.size());
  }
  if (o.delay_s < 0 || o.duration_s < 0) return "--delay and --duration must not be negative";
  if ((!o.kernel_filter.empty() || o.kernel_limit > 0) && !o.counters)
    return "--kernel-filter and --kernel-limit choose the kernels of the counters pass: add "
           "--counters";
  if (!o.kernel_filter.empty()) {
    try {
      std::regex re(o.kernel_filter, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return "--kernel-filter: not a valid regular expression: " + std::string(e.what());
    }
  }
  request.process.iteration_range = o.iteration_range;
  request.process.delay_s = o.delay_s;
  request.process.duration_s = o.duration_s;
  request.process.driver_api = !o.no_driver_api;
  request.run_name = o.name;
  request.warmup = o.warmup;
  request.counters = o.counters;
  request.kernel_filter = o.kernel_filter;
  request.kernel_limit = static_cast<std::size_t>(o.kernel_limit);
  request.pm_sampling = o.pm_sampling;
  request.pm_interval_ns = static_cast<uint64_t>(o.pm_interval_us) * 1000;
  request.device = o.device;
  return {};
}

}  // namespace

int run_program_capture(const ProgramCaptureCli& o) {
  lab::ProgramCaptureRequest request;
  if (std::string why = check(o, request); !why.empty()) {
    std::fprintf(stderr, "fusionscope capture: %s\n", why.c_str());
    return 2;
  }
  const std::filesystem::path out = o.out;
  if (std::filesystem::exists(out) && !o.append) {
    std::fprintf(stderr,
                 "fusionscope capture: %s already exists (use --append to add the run to it)\n",
                 out.c_str());
    return 2;
  }
  std::unique_ptr<storage::SessionStore> store = open_capture_output(out, out.stem().string());
  if (!store) return 1;

  // Ctrl-C stops the command (it runs in its own process group) and keeps what was traced.
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  auto progress = [](const lab::ProgramCaptureProgress& p) {
    if (p.line.empty()) return;
    std::fprintf(stderr, "[%7.1f s] %s\n", p.process.elapsed_s, p.line.c_str());
  };
  lab::ProgramCaptureOutcome result;
  try {
    result = lab::capture_program(*store, request, &g_stop, progress);
  } catch (const storage::StoreError& e) {
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    std::fprintf(stderr, "fusionscope capture: writing the session failed: %s\n", e.what());
    return 1;
  }
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);

  const auto& t = result.traced;
  if (!t.started) {
    std::fprintf(stderr, "fusionscope capture: %s; nothing was captured\n", t.start_error.c_str());
    if (std::filesystem::exists(out) && !o.append && store->runs().empty()) {
      store.reset();
      std::error_code ec;
      std::filesystem::remove(out, ec);
    }
    return 1;
  }
  for (const auto& p : t.processes) {
    std::fprintf(stderr,
                 "  process %u  %-40s %6zu kernels %7zu API calls %6zu ranges %5zu memops%s\n",
                 p.pid, p.name.c_str(), p.kernels, p.api_calls, p.ranges, p.memops,
                 p.no_trace ? "  (no trace)" : "");
  }
  if (!t.trace.status.empty()) std::fprintf(stderr, "trace: %s\n", t.trace.status.c_str());
  if (!result.kernel_counters.empty())
    std::fprintf(stderr, "counters: %s\n", result.kernel_counters.c_str());
  if (!result.pm_sampling.empty())
    std::fprintf(stderr, "PM sampling: %s\n", result.pm_sampling.c_str());
  const std::string ending = t.ending();
  std::fprintf(stderr,
               "wrote run %lld (%s, %zu process%s, %zu kernels, %d iteration%s) to %s%s%s; "
               "`fusionscope report %s` summarizes it\n",
               static_cast<long long>(result.run_id),
               std::string(storage::to_string(result.status)).c_str(), t.processes.size(),
               t.processes.size() == 1 ? "" : "es", t.trace.kernels, result.iterations,
               result.iterations == 1 ? "" : "s", out.c_str(),
               ending.empty() ? "" : "; the command ", ending.c_str(), out.c_str());
  return result.exit_status();
}

}  // namespace fusionscope::cli
