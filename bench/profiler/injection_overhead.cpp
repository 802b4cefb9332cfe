// What injection capture costs a PyTorch program, next to what torch.profiler costs it: the same
// script (scripts/torch_mlp.py, the post's GeGLU by default) run plainly, under torch.profiler
// (CPU + CUDA activities, in the script) and under `fusionscope capture` (the injection library,
// records streamed into a session), alternately, several rounds. Each run reports its own GPU time
// per timed iteration (median of CUDA events) and the wall time of its timed loop; the process's
// wall time is measured here. Medians over the rounds, and each mode's addition over the plain run.
//
//   fusionscope_injection_overhead [--rounds 5] [--warmup 20] [--iters 500]
//                                  [--preset geglu-post] [--variant torch-eager]
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "fusionscope/kernels/config.h"
#include "fusionscope/lab/program_capture.h"
#include "fusionscope/lab/torch_variants.h"
#include "fusionscope/storage/session_store.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Sample {
  double gpu_ms = 0;   // median CUDA-event time per timed iteration
  double loop_ms = 0;  // wall time of the timed loop
  double process_s = 0;
};

int run_plain(const std::vector<std::string>& argv) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execvp(a[0], a.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

bool read_result(const fs::path& file, Sample& s) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  try {
    const auto j = nlohmann::json::parse(text.str());
    if (!j.value("ok", false)) {
      std::fprintf(stderr, "run failed: %s\n", j.value("error", std::string("?")).c_str());
      return false;
    }
    s.gpu_ms = j["median_ms"].get<double>();
    s.loop_ms = j["wall_ms"].get<double>();
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "no result in %s: %s\n", file.c_str(), e.what());
    return false;
  }
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5, warmup = 20, iters = 500;
  std::string preset = "geglu-post", variant = "torch-eager";
  CLI::App app{
      "fusionscope_injection_overhead: what injection capture costs a PyTorch program, next to "
      "torch.profiler"};
  app.add_option("--rounds", rounds, "Rounds of each way of running")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "Warm-up iterations per run")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--iters", iters, "Timed iterations per run")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--preset", preset, "Preset to run")->capture_default_str();
  app.add_option("--variant", variant, "torch-eager or torch-compile")
      ->capture_default_str()
      ->check(CLI::IsMember({"torch-eager", "torch-compile"}));
  CLI11_PARSE(app, argc, argv);
  const auto config = fusionscope::kernels::find_preset(preset);
  if (!config) {
    std::fprintf(stderr, "no preset %s\n", preset.c_str());
    return 2;
  }
  if (const std::string why = fusionscope::lab::torch_unavailable_reason(); !why.empty()) {
    std::fprintf(stderr, "cannot run PyTorch: %s\n", why.c_str());
    return 1;
  }
  const fs::path dir =
      fs::temp_directory_path() / ("fusionscope-overhead-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path result = dir / "r.json";
  std::vector<std::string> base = {fusionscope::lab::torch_python(),
                                   fusionscope::lab::torch_script_path(),
                                   "--config",
                                   fusionscope::kernels::to_json(*config),
                                   "--variant",
                                   variant,
                                   "--warmup",
                                   std::to_string(warmup),
                                   "--iters",
                                   std::to_string(iters),
                                   "--out",
                                   result.string()};
  const char* modes[] = {"plain", "torch.profiler", "fusionscope capture"};
  std::map<std::string, std::vector<Sample>> samples;
  std::printf("%s %s, %d warm-up + %d timed iterations, %d rounds\n", preset.c_str(),
              variant.c_str(), warmup, iters, rounds);
  for (int r = 0; r < rounds; ++r) {
    for (const char* mode : modes) {
      fs::remove(result);
      Sample s;
      const auto t0 = Clock::now();
      const std::string m = mode;
      if (m == "plain") {
        run_plain(base);
      } else if (m == "torch.profiler") {
        auto argv2 = base;
        argv2.push_back("--torch-profiler");
        run_plain(argv2);
      } else {
        const fs::path session = dir / ("s" + std::to_string(r) + ".fsdb");
        fs::remove(session);
        auto store = fusionscope::storage::SessionStore::create(session, {});
        fusionscope::lab::ProgramCaptureRequest req;
        req.process.command = base;
        req.warmup = warmup;
        const auto out = fusionscope::lab::capture_program(store, req);
        if (out.status != fusionscope::storage::RunStatus::kOk)
          std::fprintf(stderr, "capture: %s %s\n", out.error.c_str(),
                       out.traced.trace.status.c_str());
        else if (r == 0)
          std::printf("  (capture: %zu kernels, %zu API calls, %zu ranges recorded)\n",
                      out.traced.trace.kernels, out.traced.trace.api_calls,
                      out.traced.trace.ranges);
      }
      s.process_s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (read_result(result, s)) samples[m].push_back(s);
    }
  }
  auto med = [&](const std::string& m, double Sample::*field) {
    std::vector<double> v;
    for (const auto& s : samples[m]) v.push_back(s.*field);
    return median(v);
  };
  const double g0 = med("plain", &Sample::gpu_ms), l0 = med("plain", &Sample::loop_ms),
               p0 = med("plain", &Sample::process_s);
  std::printf("\n%-20s %14s %9s %16s %9s %13s %9s\n", "mode", "GPU/iter (us)", "added",
              "timed loop (ms)", "added", "process (s)", "added");
  for (const char* mode : modes) {
    const double g = med(mode, &Sample::gpu_ms), l = med(mode, &Sample::loop_ms),
                 p = med(mode, &Sample::process_s);
    std::printf("%-20s %14.2f %+8.2f%% %16.2f %+8.2f%% %13.2f %+8.2f%%\n", mode, g * 1e3,
                100 * (g / g0 - 1), l, 100 * (l / l0 - 1), p, 100 * (p / p0 - 1));
  }
  std::printf("(medians of %d rounds; GPU/iter: the script's CUDA events per timed iteration)\n",
              rounds);
  std::error_code ec;
  fs::remove_all(dir, ec);
  return 0;
}
