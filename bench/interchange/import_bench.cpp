// Import speed and memory, side by side with Python's json.load on the same file in one run.
// Each contender runs in a child process of its own, so its peak resident memory is its own:
//   1. fusionscope: read_torch_trace (streaming parse) then write_torch_trace into a new session;
//   2. python3: json.load of the same file (through gzip.open when it is gzipped).
// Prints wall time, peak RSS and throughput of each, and the ratio.
//
//   import_bench TRACE.json[.gz] [--no-python] [--dir PATH]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>

#include "fusionscope/interchange/torch_trace_import.h"
#include "fusionscope/storage/session_store.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

struct Figures {
  double read_s = 0, write_s = 0;
  double read_cpu_s = 0, write_cpu_s = 0;  // process CPU time (every thread) of each phase
  uint64_t events = 0, kernels = 0, text_bytes = 0, records = 0;
};

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// CPU time of this process so far, user + system, every thread.
double process_cpu_s() {
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  auto secs = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return secs(u.ru_utime) + secs(u.ru_stime);
}

// Runs in the child: import into a fresh session, write the figures to `fd`.
int run_ours(const std::string& trace_path, const fs::path& session, int fd) {
  using namespace fusionscope;
  Figures f;
  const auto t0 = Clock::now();
  const double cpu0 = process_cpu_s();
  interchange::ImportOptions options;
  options.progress = [&f](const interchange::ImportProgress& p) { f.text_bytes = p.text_bytes; };
  const interchange::TorchTrace trace = interchange::read_torch_trace(trace_path, options);
  f.read_s = seconds_since(t0);
  const double cpu1 = process_cpu_s();
  f.read_cpu_s = cpu1 - cpu0;
  f.events = trace.stats.events;
  f.kernels = trace.kernels.size();
  f.records =
      trace.kernels.size() + trace.memops.size() + trace.api_calls.size() + trace.ranges.size();
  const auto t1 = Clock::now();
  {
    fs::remove(session);
    storage::SessionInfo info;
    info.name = "import_bench";
    auto store = storage::SessionStore::create(session, info);
    interchange::write_torch_trace(store, trace);
  }
  f.write_s = seconds_since(t1);
  f.write_cpu_s = process_cpu_s() - cpu1;
  fs::remove(session);
  return write(fd, &f, sizeof f) == static_cast<ssize_t>(sizeof f) ? 0 : 1;
}

struct Child {
  double wall_s = 0;
  double cpu_s = 0;  // user + system, every thread
  double peak_mb = 0;
  int status = 0;
};

template <typename Body>
Child in_child(Body&& body) {
  Child c;
  const auto t0 = Clock::now();
  const pid_t pid = fork();
  if (pid == 0) _exit(body());
  struct rusage usage {};
  wait4(pid, &c.status, 0, &usage);
  c.wall_s = seconds_since(t0);
  c.peak_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
  auto secs = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  c.cpu_s = secs(usage.ru_utime) + secs(usage.ru_stime);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  std::string trace;
  bool no_python = false;
  fs::path dir = fs::temp_directory_path();
  CLI::App app{"import_bench: a PyTorch trace imported into a session, next to Python's json.load"};
  app.add_option("trace", trace, "PyTorch profiler trace (.json or .json.gz)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_flag("--no-python", no_python, "Skip Python's json.load for comparison");
  app.add_option("--dir", dir, "Where the session goes")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const bool python = !no_python;
  std::error_code ec;
  const uint64_t file_bytes = fs::file_size(trace, ec);
  const fs::path session = dir / ("import-bench-" + std::to_string(getpid()) + ".fsdb");

  int pipe_fd[2];
  if (pipe(pipe_fd) != 0) return 1;
  const Child ours = in_child([&] {
    close(pipe_fd[0]);
    try {
      return run_ours(trace, session, pipe_fd[1]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fusionscope import failed: %s\n", e.what());
      return 1;
    }
  });
  close(pipe_fd[1]);
  Figures f;
  const bool got = read(pipe_fd[0], &f, sizeof f) == static_cast<ssize_t>(sizeof f);
  close(pipe_fd[0]);
  if (!got || ours.status != 0) return 1;

  Child py;
  double py_load_s = 0;
  if (python) {
    const std::string out_file = (dir / ("import-bench-py-" + std::to_string(getpid()))).string();
    const std::string script =
        "import gzip, json, sys, time\n"
        "path = sys.argv[1]\n"
        "t = time.perf_counter()\n"
        "f = gzip.open(path, 'rb') if path.endswith('.gz') else open(path, 'rb')\n"
        "d = json.load(f)\n"
        "n = len(d['traceEvents']) if isinstance(d, dict) else len(d)\n"
        "open(sys.argv[2], 'w').write('%f %d' % (time.perf_counter() - t, n))\n";
    py = in_child([&] {
      execlp("python3", "python3", "-c", script.c_str(), trace.c_str(), out_file.c_str(),
             static_cast<char*>(nullptr));
      return 127;
    });
    if (std::FILE* in = std::fopen(out_file.c_str(), "r")) {
      unsigned long long n = 0;
      if (std::fscanf(in, "%lf %llu", &py_load_s, &n) != 2) py_load_s = 0;
      std::fclose(in);
    }
    fs::remove(out_file, ec);
  }

  std::printf("trace   %s: %.1f MB on disk, %.1f MB of JSON text, %" PRIu64 " events, %" PRIu64
              " kernels, %" PRIu64 " records kept\n",
              trace.c_str(), static_cast<double>(file_bytes) / 1e6,
              static_cast<double>(f.text_bytes) / 1e6, f.events, f.kernels, f.records);
  double load[3] = {};
  getloadavg(load, 3);
  std::printf("machine %ld CPUs online, load average %.2f when done\n\n",
              sysconf(_SC_NPROCESSORS_ONLN), load[0]);
  std::printf("%-34s %9s %12s %12s %14s\n", "", "wall s", "peak RSS MB", "MB/s text", "events/s");
  auto row = [&](const char* what, double s, double rss) {
    std::printf("%-34s %9.2f %12.0f %12.0f %14.0f\n", what, s, rss,
                s > 0 ? static_cast<double>(f.text_bytes) / 1e6 / s : 0.0,
                s > 0 ? static_cast<double>(f.events) / s : 0.0);
  };
  row("fusionscope read (parse + link)", f.read_s, ours.peak_mb);
  std::printf("%-34s %9.2f\n", "fusionscope write into a session", f.write_s);
  row("fusionscope import (read + write)", f.read_s + f.write_s, ours.peak_mb);
  std::printf("%-34s %9.2f  (user + system, all threads; read %.2f, write %.2f)\n",
              "fusionscope process CPU s", ours.cpu_s, f.read_cpu_s, f.write_cpu_s);
  if (python) {
    if (py.status != 0 || py_load_s <= 0) {
      std::printf("python3 json.load failed (exit status %d)\n", py.status);
    } else {
      row("python3 json.load", py_load_s, py.peak_mb);
      std::printf("%-34s %9.2f\n", "python3 process CPU s", py.cpu_s);
      std::printf("\njson.load / fusionscope read:   %.1fx the time, %.1fx the memory\n",
                  py_load_s / f.read_s, py.peak_mb / ours.peak_mb);
      std::printf("json.load / fusionscope import: %.1fx the time\n",
                  py_load_s / (f.read_s + f.write_s));
    }
  }
  return 0;
}
