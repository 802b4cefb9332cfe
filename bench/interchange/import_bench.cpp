// Import speed and memory, side by side with Python's json.load on the same file in one run.
// Each contender runs in a child process of its own, so its peak resident memory is its own:
//   1. fusionscope import: import_torch_trace into a new session, as `fusionscope import` does
//      (the session written while the trace is read);
//   2. fusionscope read alone: read_torch_trace (parse and link, nothing written);
//   3. python3: json.load of the same file (through gzip.open when it is gzipped).
// Prints wall time, CPU time, peak RSS and throughput of each, and the ratios.
//
//   import_bench TRACE.json[.gz] [--no-python] [--no-read] [--dir PATH]
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
  double seconds = 0;
  double cpu_s = 0;  // process CPU time, every thread
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

// Runs in a child: import into a fresh session (or, with `read_only`, read alone), write the
// figures to `fd`.
int run_ours(const std::string& trace_path, const fs::path& session, bool read_only, int fd) {
  using namespace fusionscope;
  Figures f;
  const auto t0 = Clock::now();
  const double cpu0 = process_cpu_s();
  interchange::ImportOptions options;
  options.progress = [&f](const interchange::ImportProgress& p) {
    if (p.phase == interchange::ImportProgress::Phase::kReading) f.text_bytes = p.text_bytes;
  };
  if (read_only) {
    const interchange::TorchTrace trace = interchange::read_torch_trace(trace_path, options);
    f.events = trace.stats.events;
    f.kernels = trace.kernels.size();
    f.records =
        trace.kernels.size() + trace.memops.size() + trace.api_calls.size() + trace.ranges.size();
  } else {
    fs::remove(session);
    storage::SessionInfo info;
    info.name = "import_bench";
    auto store = storage::SessionStore::create(session, info);
    const interchange::ImportResult result =
        interchange::import_torch_trace(trace_path, store, {}, options);
    f.events = result.trace.stats.events;
    f.kernels = result.trace.stats.kernels;
    f.records = result.records;
  }
  f.seconds = seconds_since(t0);
  f.cpu_s = process_cpu_s() - cpu0;
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
  bool no_read = false;
  fs::path dir = fs::temp_directory_path();
  CLI::App app{"import_bench: a PyTorch trace imported into a session, next to Python's json.load"};
  app.add_option("trace", trace, "PyTorch profiler trace (.json or .json.gz)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_flag("--no-python", no_python, "Skip Python's json.load for comparison");
  app.add_flag("--no-read", no_read, "Skip the read alone (parse and link, nothing written)");
  app.add_option("--dir", dir, "Where the session goes")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const bool python = !no_python;
  const bool read_alone = !no_read;
  std::error_code ec;
  const uint64_t file_bytes = fs::file_size(trace, ec);
  const fs::path session = dir / ("import-bench-" + std::to_string(getpid()) + ".fsdb");

  // One of ours in a child of its own; false if it failed.
  auto ours = [&](bool read_only, Figures& f, Child& c) {
    int pipe_fd[2];
    if (pipe(pipe_fd) != 0) return false;
    c = in_child([&] {
      close(pipe_fd[0]);
      try {
        return run_ours(trace, session, read_only, pipe_fd[1]);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "fusionscope %s failed: %s\n", read_only ? "read" : "import",
                     e.what());
        return 1;
      }
    });
    close(pipe_fd[1]);
    const bool got = read(pipe_fd[0], &f, sizeof f) == static_cast<ssize_t>(sizeof f);
    close(pipe_fd[0]);
    return got && c.status == 0;
  };
  Figures f, r;
  Child imported, reading;
  if (!ours(false, f, imported)) return 1;
  if (read_alone && !ours(true, r, reading)) return 1;

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
  row("fusionscope import (read + write)", f.seconds, imported.peak_mb);
  std::printf("%-34s %9.2f  (user + system, all threads)\n", "  its CPU s", imported.cpu_s);
  if (read_alone) {
    row("fusionscope read alone (no write)", r.seconds, reading.peak_mb);
    std::printf("%-34s %9.2f\n", "  its CPU s", reading.cpu_s);
  }
  if (python) {
    if (py.status != 0 || py_load_s <= 0) {
      std::printf("python3 json.load failed (exit status %d)\n", py.status);
    } else {
      row("python3 json.load", py_load_s, py.peak_mb);
      std::printf("%-34s %9.2f\n", "  its CPU s", py.cpu_s);
      std::printf("\njson.load / fusionscope import: %.1fx the time, %.1fx the memory\n",
                  py_load_s / f.seconds, py.peak_mb / imported.peak_mb);
      if (read_alone) {
        std::printf("json.load / fusionscope read:   %.1fx the time\n", py_load_s / r.seconds);
      }
    }
  }
  return 0;
}
