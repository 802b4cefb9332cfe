#include "fusionscope/lab/torch_variants.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "fusionscope/lab/program_capture.h"
#include "fusionscope/storage/run_writer.h"

namespace fusionscope::lab {
namespace {

namespace fs = std::filesystem;

std::string run_and_read(const std::vector<std::string>& argv, int* status) {
  int out[2];
  if (pipe(out) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    ::close(out[0]);
    ::close(out[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(out[0]);
  int st = 0;
  if (pid > 0) waitpid(pid, &st, 0);
  *status = pid > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return text;
}

}  // namespace

std::string torch_script_path() {
  if (const char* v = std::getenv("FUSIONSCOPE_TORCH_SCRIPT"); v && *v) return v;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::vector<fs::path> candidates;
  if (!ec) {
    candidates.push_back(exe.parent_path() / "torch_mlp.py");
    candidates.push_back(exe.parent_path().parent_path() / "share" / "fusionscope" /
                         "torch_mlp.py");
  }
  candidates.push_back(fs::path(FUSIONSCOPE_SOURCE_DIR) / "scripts" / "torch_mlp.py");
  for (const auto& c : candidates)
    if (fs::exists(c, ec)) return c.string();
  return {};
}

std::string torch_python() {
  if (const char* v = std::getenv("FUSIONSCOPE_PYTHON"); v && *v) return v;
  return "python3";
}

std::string torch_unavailable_reason() {
  static std::once_flag once;
  static std::string reason;
  std::call_once(once, [] {
    const std::string script = torch_script_path();
    if (script.empty()) {
      reason = "the PyTorch variants' script torch_mlp.py was not found";
      return;
    }
    int status = -1;
    const std::string text = run_and_read(
        {torch_python(), script, "--check", "--config", "{}", "--variant", "torch-eager"}, &status);
    if (status == 127 || text.empty()) {
      reason = "no " + torch_python() + " to run PyTorch with";
      return;
    }
    try {
      const auto j = nlohmann::json::parse(text);
      if (!j.value("ok", false)) reason = j.value("why", std::string("PyTorch cannot run"));
    } catch (const std::exception&) {
      reason = torch_python() + " did not answer the PyTorch check: " + text.substr(0, 200);
    }
  });
  return reason;
}

RunOutcome run_torch_variant(storage::SessionStore& store, const RunSpec& spec,
                             const CaptureJob& job, const Progress& base,
                             const ProgressCallback& progress, const std::atomic<bool>* cancel) {
  RunOutcome outcome;
  outcome.result.config = spec.config;
  outcome.result.variant = spec.variant;
  auto report = [&](Progress p) {
    if (progress) progress(p);
  };

  storage::RunInfo info;
  info.name = run_name(spec);
  info.config_json = kernels::to_json(spec.config);
  info.kind = std::string(kernels::to_string(spec.config.kind));
  info.variant = std::string(kernels::to_string(spec.variant));
  info.dtype = std::string(kernels::to_string(spec.config.dtype));

  const std::string why = torch_unavailable_reason();
  if (!why.empty() || job.cuda_graph) {
    // Stored as a failed run that says why, as a native variant that cannot run is.
    info.warmup = job.warmup;
    info.iterations = job.iterations;
    info.status = storage::RunStatus::kFailed;
    info.error = !why.empty() ? std::string(kernels::to_string(spec.variant)) + ": " + why
                              : std::string(kernels::to_string(spec.variant)) +
                                    ": CUDA-graph replay is not offered for the PyTorch variants";
    info.trace_status = "not traced: the run did not start";
    storage::RunWriter failed(store, info);
    failed.commit();
    info.id = failed.id();
    outcome.run_id = info.id;
    outcome.status = info.status;
    outcome.result.error = info.error;
    Progress p = base;
    p.run_id = info.id;
    report(p);
    return outcome;
  }

  char tmpl[] = "/tmp/fusionscope-torch-XXXXXX";
  const int fd = mkstemp(tmpl);
  if (fd >= 0) ::close(fd);
  const std::string result_path = tmpl;

  ProgramCaptureRequest request;
  request.process.command = {torch_python(), torch_script_path(),
                             "--config",     kernels::to_json(spec.config),
                             "--variant",    std::string(kernels::to_string(spec.variant)),
                             "--warmup",     std::to_string(job.warmup),
                             "--iters",      std::to_string(job.iterations),
                             "--device",     std::to_string(job.device),
                             "--out",        result_path};
  // The counters pass writes its own (replayed, slower) timing elsewhere: the result is the
  // traced run's.
  request.counters_command = request.process.command;
  request.counters_command.back() = result_path + ".counters";
  request.process.iteration_range = "iteration";
  if (spec.variant == kernels::Variant::kTorchCompile) {
    // The module is compiled whole, as users compile it, so each iteration is one NVTX range and
    // its kernels take the plan's ops (that of pointwise-fused, Inductor's fusion) by launch order.
    for (const auto& l : kernels::make_plan(spec.config, spec.variant).launches)
      request.process.iteration_ops.push_back({l.op, l.kernel.find("GEMM") != std::string::npos});
  }
  request.warmup = job.warmup;
  request.info = info;
  request.counters = job.counters;
  request.pm_sampling = job.pm_sampling;
  request.pm_interval_ns = job.pm_interval_ns;
  request.device = job.device;

  Progress p = base;
  auto on_progress = [&](const ProgramCaptureProgress& q) {
    Progress r = p;
    r.stage = q.stage == ProgramCaptureProgress::Stage::kCounters  ? Progress::Stage::kCounters
              : q.stage == ProgramCaptureProgress::Stage::kTracing ? Progress::Stage::kTimed
                                                                   : Progress::Stage::kFinishing;
    r.message = q.line;
    report(r);
  };
  const ProgramCaptureOutcome c = capture_program(store, request, cancel, on_progress);
  outcome.run_id = c.run_id;
  outcome.status = c.status;
  outcome.trace = c.traced.trace;
  outcome.kernel_counters = c.kernel_counters;
  outcome.pm_sampling = c.pm_sampling;

  kernels::RunResult& r = outcome.result;
  r.plan = kernels::make_plan(spec.config, spec.variant);
  r.cancelled = c.traced.stopped;
  std::ifstream in(result_path);
  std::stringstream text;
  text << in.rdbuf();
  std::error_code ec;
  fs::remove(result_path, ec);
  fs::remove(result_path + ".counters", ec);
  try {
    const auto j = nlohmann::json::parse(text.str());
    r.ok = j.value("ok", false) && c.status == storage::RunStatus::kOk;
    r.error = j.value("error", std::string());
    if (j.contains("iteration_ms")) r.iteration_ms = j["iteration_ms"].get<std::vector<double>>();
    r.median_ms = j.value("median_ms", 0.0);
    r.min_ms = j.value("min_ms", 0.0);
    r.mean_ms = j.value("mean_ms", 0.0);
    r.wall_ms = j.value("wall_ms", 0.0);
    r.kernel_path = j.value("kernel_path", std::string());
    r.input_sets = j.value("input_sets", 1);
  } catch (const std::exception&) {
    r.ok = false;
    r.error = c.error.empty() ? "the PyTorch script wrote no result" : c.error;
  }
  if (c.run_id != 0) {
    // The script's own timing: the timed loop's wall time, as the runner reports it.
    if (auto stored = store.run(c.run_id)) {
      stored->wall_ns = static_cast<int64_t>(r.wall_ms * 1e6);
      stored->iterations = job.iterations;
      if (stored->status == storage::RunStatus::kOk && !r.ok) {
        stored->status = storage::RunStatus::kFailed;
        stored->error = r.error.empty() ? "the PyTorch script failed" : r.error;
      } else if (stored->status == storage::RunStatus::kFailed && !r.error.empty()) {
        stored->error = r.error + " (" + stored->error + ")";
      }
      store.update_run(*stored);
      outcome.status = stored->status;
      if (!stored->error.empty() && r.error.empty()) r.error = stored->error;
    }
  } else if (r.error.empty()) {
    r.error = c.error;
  }
  return outcome;
}

}  // namespace fusionscope::lab
