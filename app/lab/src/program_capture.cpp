#include "fusionscope/lab/program_capture.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <utility>

#include "fusionscope/analysis/iteration_kernels.h"
#include "fusionscope/analysis/metrics_status.h"
#include "fusionscope/counters/pm_sampler.h"
#include "fusionscope/counters/store_records.h"
#include "fusionscope/profiler/device_info.h"
#include "fusionscope/profiler/trace_sink.h"
#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/utc_time.h"

namespace fusionscope::lab {
namespace {

using storage::RunStatus;

// The counters pass writes no records: its sink is never called.
class NoRecords final : public profiler::TraceSink {
 public:
  storage::StringId intern(std::string_view) override { return storage::kNoString; }
  void insert_kernels(std::span<const storage::KernelRecord>) override {}
  void insert_api_calls(std::span<const storage::ApiCallRecord>) override {}
  void insert_ranges(std::span<const storage::RangeRecord>) override {}
  void insert_memops(std::span<const storage::MemopRecord>) override {}
};

// "iteration N" ranges: how many a process had (the largest N + 1 among them).
int count_iterations(const storage::RunData& run) {
  long most = -1;
  for (const auto& r : run.ranges) {
    const std::string& name = run.str(r.name);
    if (!name.starts_with("iteration ")) continue;
    try {
      most = std::max(most, std::stol(name.substr(10)));
    } catch (...) {
    }
  }
  return static_cast<int>(most + 1);
}

std::string micros(uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g us", static_cast<double>(ns) / 1e3);
  return buf;
}

std::string store_samples(storage::RunWriter& writer, counters::PmSamplingResult& r,
                          const storage::RunData& run) {
  if (!r.status.ok()) return r.status.describe();
  const size_t taken = r.samples.size();
  if (run.end_ns > run.begin_ns) {
    const int64_t margin = 2 * static_cast<int64_t>(r.interval_ns);
    std::erase_if(r.samples, [&](const counters::PmSample& x) {
      const int64_t t = x.start_ns + (x.end_ns - x.start_ns) / 2;
      return t < run.begin_ns - margin || t > run.end_ns + margin;
    });
  }
  if (r.samples.empty())
    return "counters: failed: no PM sample fell within the run's records" +
           std::string(r.hardware_overflow ? " (the sampler's hardware buffer filled early)" : "");
  writer.add_samples(
      counters::to_sample_records(r, [&](std::string_view s) { return writer.intern(s); }));
  std::string text = std::string(analysis::kMetricsOk) + ": " + std::to_string(r.samples.size()) +
                     " samples every " + micros(r.interval_ns) + " within the run's records (" +
                     std::to_string(taken - r.samples.size()) + " outside it dropped; " +
                     r.clock_mapping + ")";
  if (r.hardware_overflow) text += "; the hardware buffer filled, so the series may end early";
  return text;
}

// Matches each process's counters pass to the kernels it traced in the same window and stores
// the metrics. Returns the outcome in words.
std::string store_counters(storage::RunWriter& writer, const profiler::ProcessCaptureResult& traced,
                           const profiler::ProcessCaptureResult& pass, int warmup,
                           bool capture_range, const std::vector<std::string>& traced_command,
                           const std::vector<std::string>& counters_command) {
  // Arguments the counters pass's command changed (where it writes its results) read as the
  // traced command's, so that its processes find their twins.
  std::map<std::string, std::string> same;
  for (size_t i = 0; i < traced_command.size() && i < counters_command.size(); ++i)
    if (traced_command[i] != counters_command[i]) same[counters_command[i]] = traced_command[i];
  auto as_traced = [&](std::vector<std::string> argv) {
    for (auto& a : argv)
      if (auto it = same.find(a); it != same.end()) a = it->second;
    return argv;
  };
  const storage::RunData run = writer.store().load_run(writer.id());
  const std::vector<long> iteration = analysis::kernel_iterations(run);
  std::vector<storage::KernelMetricRecord> records;
  std::vector<std::string> problems;
  std::size_t kernels = 0, passes = 0, idle = 0;
  std::string chip, window, method;
  std::map<std::vector<std::string>, int> seen;  // argv -> processes of pass 2 so far
  for (const auto& p : pass.processes) {
    const std::vector<std::string> argv = as_traced(p.argv);
    const int ordinal = seen[argv]++;
    if (!p.counters) continue;
    const counters::CounterPassResult& c = *p.counters;
    window = p.counters_window;
    if (!c.status.ok()) {
      // A helper process (a compiler's worker) that used CUDA but never ran the window is
      // noted only when no process had counters.
      if (c.status.message.find("never opened") != std::string::npos) {
        ++idle;
      } else {
        problems.push_back(p.name + ": " + c.status.describe());
      }
      continue;
    }
    // The same process of the traced run: same command line, same position among its twins.
    const profiler::CapturedProcess* twin = nullptr;
    int k = 0;
    for (const auto& t : traced.processes)
      if (t.argv == argv && k++ == ordinal) twin = &t;
    if (twin == nullptr) {
      problems.push_back(p.name + ": no process of the traced run matches it");
      continue;
    }
    std::vector<const storage::KernelRecord*> in_window;
    for (size_t i = 0; i < run.kernels.size(); ++i) {
      const auto& kr = run.kernels[i];
      const uint32_t pid = kr.pid;  // 0: unknown
      if (pid != 0 && pid != twin->pid) continue;
      if (!capture_range && iteration[i] != warmup) continue;
      in_window.push_back(&kr);
    }
    std::sort(in_window.begin(), in_window.end(),
              [](const auto* a, const auto* b) { return a->correlation_id < b->correlation_id; });
    counters::CounterPassResult matched = c;
    matched.kernels.clear();
    std::vector<uint32_t> ids;
    std::size_t beyond = 0, renamed = 0;
    for (const auto& kc : c.kernels) {
      if (kc.index >= in_window.size()) {
        ++beyond;
        continue;
      }
      // Matched by launch order; a name that differs is counted, not dropped (CUPTI names a
      // launch by its symbol, which some launch paths leave empty).
      const storage::KernelRecord& kr = *in_window[kc.index];
      if (!kc.range_name.empty() && run.str(kr.name) != kc.range_name) ++renamed;
      matched.kernels.push_back(kc);
      ids.push_back(kr.correlation_id);
    }
    if (beyond > 0)
      problems.push_back(p.name + ": " + std::to_string(beyond) +
                         " profiled kernels have no traced kernel at their launch position (" +
                         std::to_string(in_window.size()) + " traced in the window)");
    if (renamed > 0)
      problems.push_back(p.name + ": " + std::to_string(renamed) +
                         " profiled kernels were named differently from the traced kernel at "
                         "their launch position");
    const auto part = counters::to_kernel_metric_records(
        matched, ids, [&](std::string_view s) { return writer.intern(s); });
    records.insert(records.end(), part.begin(), part.end());
    kernels += matched.kernels.size();
    passes = std::max(passes, c.passes);
    chip = c.chip;
    if (!p.counters_method.empty()) method = p.counters_method;
  }
  if (!records.empty()) writer.add_kernel_metrics(records);
  std::string text;
  if (kernels > 0) {
    text = std::string(analysis::kMetricsOk) + ": " + std::to_string(kernels) + " kernels of " +
           (window.empty() ? std::string("the window") : window) + " (" +
           (method.empty() ? std::to_string(passes) + " replay passes per kernel" : method) +
           ", on " + chip + ", a second run of the command)";
    if (idle > 0)
      text += " (" + std::to_string(idle) + " other process" + (idle == 1 ? "" : "es") +
              " of the command used CUDA but never ran the window)";
  } else {
    text = "counters: failed: no kernel was profiled";
    if (pass.processes.empty()) {
      text += ": the second run initialised no CUDA";
    } else if (idle > 0) {
      text += ": no process of the command ran " + (window.empty() ? "the window" : window);
    }
  }
  for (const auto& p : problems) text += "; " + p;
  return text;
}

}  // namespace

ProgramCaptureOutcome capture_program(storage::SessionStore& store,
                                      const ProgramCaptureRequest& request,
                                      const std::atomic<bool>* stop,
                                      const ProgramProgressCallback& progress) {
  ProgramCaptureOutcome out;
  auto say = [&](ProgramCaptureProgress::Stage stage, std::string line,
                 const profiler::ProcessCaptureProgress& p = {}) {
    if (!progress) return;
    ProgramCaptureProgress q;
    q.stage = stage;
    q.process = p;
    q.line = std::move(line);
    progress(q);
  };

  if (store.session().gpu_name.empty()) {
    storage::SessionInfo header = store.session();
    if (profiler::describe_device(request.device, header)) store.update_session(header);
  }

  storage::RunInfo info = request.info;
  info.name = !request.run_name.empty() ? request.run_name
              : !info.name.empty()      ? info.name
                                        : command_title(request.process.command);
  if (info.kind.empty()) info.kind = "program";
  if (info.variant.empty()) info.variant = "program";
  info.warmup = request.warmup;
  info.status = RunStatus::kRunning;
  info.created_utc = storage::utc_now();
  // The run is shown as being written until commit() at the end; if this function leaves early
  // (a store error, an exception of the capture) the writer removes it, and if the process dies
  // readers see it interrupted.
  storage::RunWriter writer(store, info);
  info.id = writer.id();
  out.run_id = info.id;

  std::unique_ptr<counters::PmSampler> sampler;
  counters::CounterStatus sampling_start;
  if (request.pm_sampling) {
    say(ProgramCaptureProgress::Stage::kTracing, "starting PM sampling of the device");
    counters::PmSamplingOptions o;
    o.device = request.device;
    o.interval_ns = request.pm_interval_ns;
    sampler = std::make_unique<counters::PmSampler>(std::move(o));
    sampling_start = sampler->start();
    if (!sampling_start.ok()) sampler.reset();
  }

  profiler::StoreTraceSink sink(writer);
  profiler::ProcessCaptureOptions trace_options = request.process;
  trace_options.counters = false;
  profiler::ProcessCapture capture(trace_options);
  std::exception_ptr store_error;
  try {
    out.traced = capture.run(sink, stop, [&](const profiler::ProcessCaptureProgress& p) {
      say(ProgramCaptureProgress::Stage::kTracing, p.event, p);
    });
  } catch (...) {
    store_error = std::current_exception();
  }
  std::optional<counters::PmSamplingResult> samples;
  if (sampler) samples = sampler->stop();
  if (store_error) std::rethrow_exception(store_error);  // the writer removes the partial run

  const profiler::ProcessCaptureResult& r = out.traced;
  if (!r.started) {
    writer.discard();
    out.run_id = 0;
    out.error = r.start_error;
    return out;
  }
  say(ProgramCaptureProgress::Stage::kStoring, {});
  if (r.stopped) {
    info.status = RunStatus::kCancelled;
    info.error = "stopped before the command ended" +
                 (r.ending() != "stopped" ? " (" + r.ending() + ")" : std::string());
  } else if (r.signal != 0) {
    info.status = RunStatus::kFailed;
    info.error = "the command was killed by " + profiler::signal_name(r.signal);
  } else if (r.exit_code != 0) {
    info.status = RunStatus::kFailed;
    info.error = "the command exited with status " + std::to_string(r.exit_code);
  } else {
    info.status = RunStatus::kOk;
  }
  info.wall_ns = static_cast<int64_t>(r.wall_s * 1e9);
  info.trace_status = r.trace.status;
  info.dropped_records = r.trace.dropped_records;
  const storage::RunData run = store.load_run(info.id);
  out.iterations = count_iterations(run);
  info.iterations = std::max(0, out.iterations - request.warmup);
  writer.set_info(info);
  out.status = info.status;
  out.error = info.error;

  if (request.pm_sampling) {
    out.pm_sampling = !sampling_start.ok() ? sampling_start.describe()
                      : samples            ? store_samples(writer, *samples, run)
                                           : "counters: failed: sampling did not stop";
    store.set_property(analysis::pm_sampling_property(info.id), out.pm_sampling);
  }

  if (request.counters) {
    if (r.stopped) {
      out.kernel_counters = "skipped: the capture was stopped";
    } else if (!r.trace.traced || r.trace.kernels == 0) {
      out.kernel_counters = "skipped: the run has no traced kernels to key the counters to";
    } else {
      say(ProgramCaptureProgress::Stage::kCounters,
          "counters pass: running the command again, each kernel of the window replayed "
          "under the range profiler (slow)");
      profiler::ProcessCaptureOptions o = request.process;
      if (!request.counters_command.empty()) o.command = request.counters_command;
      o.counters = true;
      o.warmup = request.warmup;
      o.kernel_filter = request.kernel_filter;
      o.kernel_limit = request.kernel_limit;
      o.delay_s = 0;
      o.duration_s = 0;
      NoRecords none;
      profiler::ProcessCapture second(o);
      const profiler::ProcessCaptureResult pass =
          second.run(none, stop, [&](const profiler::ProcessCaptureProgress& p) {
            say(ProgramCaptureProgress::Stage::kCounters, p.event, p);
          });
      if (!pass.started) {
        out.kernel_counters = "counters: failed: the second run did not start: " + pass.start_error;
      } else if (pass.stopped) {
        out.kernel_counters = "skipped: the counters pass was stopped";
      } else {
        out.kernel_counters =
            store_counters(writer, r, pass, request.warmup, !request.process.capture_range.empty(),
                           request.process.command, o.command);
        if (pass.signal != 0 || pass.exit_code != 0)
          out.kernel_counters += "; the second run " + pass.ending();
      }
    }
    store.set_property(analysis::kernel_counters_property(info.id), out.kernel_counters);
  }
  writer.commit();
  say(ProgramCaptureProgress::Stage::kDone, {});
  return out;
}

}  // namespace fusionscope::lab
