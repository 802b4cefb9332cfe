#include "fusionscope/profiler/process_capture.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../inject/wire/inject_env.h"
#include "injected_stream.h"

extern char** environ;

namespace fusionscope::profiler {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::string errno_text(int e) {
  return std::strerror(e);
}

// A private directory holding the socket; removed with it.
class SocketDir {
 public:
  SocketDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/fusionscope-XXXXXX";
    // sun_path holds 108 bytes: fall back to /tmp when TMPDIR is deep.
    if (pattern.size() + 3 >= sizeof(sockaddr_un::sun_path)) pattern = "/tmp/fusionscope-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) != nullptr) dir_ = buf.data();
  }
  ~SocketDir() {
    if (dir_.empty()) return;
    ::unlink(path().c_str());
    ::rmdir(dir_.c_str());
  }
  bool ok() const { return !dir_.empty(); }
  std::string path() const { return dir_ + "/s"; }

 private:
  std::string dir_;
};

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    reset();
    fd_ = std::exchange(o.fd_, -1);
    return *this;
  }
  ~Fd() { reset(); }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

int listen_on(const std::string& path, std::string& error) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) {
    error = "the socket path " + path + " is too long";
    return -1;
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    error = "cannot create a socket: " + errno_text(errno);
    return -1;
  }
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd, 128) != 0) {
    error = "cannot listen on " + path + ": " + errno_text(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string nanoseconds(double seconds) {
  return std::to_string(static_cast<uint64_t>(std::max(0.0, seconds) * 1e9));
}

// This process's environment with the capture's variables and the caller's on top.
std::vector<std::string> child_environment(const ProcessCaptureOptions& o,
                                           const std::string& socket, const std::string& library,
                                           uint64_t t0) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string::npos) vars[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : o.environment) vars[k] = v;
  namespace env = inject::env;
  vars["CUDA_INJECTION64_PATH"] = library;
  // NVTX reaches CUPTI through the library too, which hands it on to the CUPTI it uses.
  vars["NVTX_INJECTION64_PATH"] = library;
  vars[env::kSocket] = socket;
  vars[env::kMode] = o.counters ? "counters" : "trace";
  vars[env::kDriverApi] = o.driver_api ? "1" : "0";
  vars[env::kBufferBytes] = std::to_string(o.buffer_bytes);
  vars[env::kStartNs] = std::to_string(t0);
  if (!o.capture_range.empty()) vars[env::kCaptureRange] = o.capture_range;
  if (o.delay_s > 0) vars[env::kDelayNs] = nanoseconds(o.delay_s);
  if (o.duration_s > 0) vars[env::kDurationNs] = nanoseconds(o.duration_s);
  if (!o.iteration_range.empty()) vars[env::kIterationRange] = o.iteration_range;
  vars[env::kWarmup] = std::to_string(o.warmup);
  if (!o.kernel_filter.empty()) vars[env::kKernelFilter] = o.kernel_filter;
  if (o.kernel_limit > 0) vars[env::kKernelLimit] = std::to_string(o.kernel_limit);
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [k, v] : vars) out.push_back(k + "=" + v);
  return out;
}

// Another CUPTI client would be injected instead of ours (a profiler that launched us, or the
// caller's own setting): say so rather than silently replace it.
std::string competing_injection(const ProcessCaptureOptions& o, const std::string& library) {
  std::string value;
  if (const char* v = std::getenv("CUDA_INJECTION64_PATH")) value = v;
  for (const auto& [k, v] : o.environment)
    if (k == "CUDA_INJECTION64_PATH") value = v;
  if (value.empty() || value == library) return {};
  return "another CUPTI client is set to be injected (CUDA_INJECTION64_PATH=" + value +
         ", as under Nsight Systems); CUPTI serves one at a time: unset it to capture with "
         "fusionscope";
}

struct Spawned {
  pid_t pid = -1;
  std::string error;
};

// fork + exec in a new process group. Exec failures come back through a close-on-exec pipe.
Spawned spawn(const ProcessCaptureOptions& o, const std::vector<std::string>& env) {
  Spawned out;
  std::vector<char*> argv;
  for (const auto& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    out.error = "cannot create a pipe: " + errno_text(errno);
    return out;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    out.error = "cannot fork: " + errno_text(errno);
    ::close(report[0]);
    ::close(report[1]);
    return out;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    // The command starts with default signal handling, whatever this process changed.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGQUIT, SIGPIPE, SIGCHLD}) sigaction(sig, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    int stage = 0;
    if (!o.working_directory.empty() && ::chdir(o.working_directory.c_str()) != 0) {
      stage = 1;
    } else {
      ::execvpe(argv[0], argv.data(), envp.data());
      stage = 2;
    }
    const int err[2] = {stage, errno};
    ssize_t ignored = ::write(report[1], err, sizeof err);
    (void)ignored;
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so that a stop right away reaches the group
  ::close(report[1]);
  int err[2] = {0, 0};
  ssize_t n;
  do {
    n = ::read(report[0], err, sizeof err);
  } while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof err)) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    out.error = err[0] == 1 ? "cannot enter the working directory " + o.working_directory + ": " +
                                  errno_text(err[1])
                            : "cannot start " + o.command.front() + ": " + errno_text(err[1]);
    return out;
  }
  out.pid = pid;
  return out;
}

std::string joined(const std::vector<std::string>& notes) {
  std::string s;
  for (const auto& n : notes) s += (s.empty() ? "" : "; ") + n;
  return s;
}

counters::CounterPassResult to_pass(const inject::WireCounters& w) {
  counters::CounterPassResult p;
  p.status.availability = static_cast<counters::CounterAvailability>(w.availability);
  p.status.message = w.message;
  p.chip = w.chip;
  p.metrics = w.metrics;
  p.units = w.units;
  p.skipped_metrics = w.skipped_metrics;
  p.passes = w.passes;
  p.limit_reached = w.limit_reached;
  p.l2_sweeps = w.l2_sweeps;
  for (const auto& k : w.kernels) {
    counters::KernelCounters kc;
    kc.index = k.launch_index;
    kc.range_name = k.name;
    kc.values = k.values;
    p.kernels.push_back(std::move(kc));
  }
  return p;
}

}  // namespace

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGKILL:
      return "SIGKILL";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGPIPE:
      return "SIGPIPE";
    default:
      return "signal " + std::to_string(sig);
  }
}

std::string ProcessCaptureResult::ending() const {
  if (!started) return "did not start: " + start_error;
  std::string s;
  if (signal != 0) {
    s = "killed by " + signal_name(signal);
  } else if (exit_code != 0) {
    s = "exited with status " + std::to_string(exit_code);
  }
  if (stopped) s = s.empty() ? "stopped" : "stopped (" + s + ")";
  return s;
}

bool ProcessCaptureResult::no_cuda_activity() const {
  for (const auto& p : processes)
    if (p.kernels + p.memops + p.api_calls > 0) return false;
  return true;
}

std::string default_inject_library() {
  namespace fs = std::filesystem;
  if (const char* v = std::getenv("FUSIONSCOPE_INJECT_LIBRARY"); v && *v) return v;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  for (const fs::path& candidate :
       {exe.parent_path() / "libfusionscope_inject.so",
        exe.parent_path().parent_path() / "lib" / "libfusionscope_inject.so"}) {
    if (fs::exists(candidate, ec)) return candidate.string();
  }
  return {};
}

ProcessCapture::ProcessCapture(ProcessCaptureOptions options) : options_(std::move(options)) {}

ProcessCaptureResult ProcessCapture::run(
    TraceSink& sink, const std::atomic<bool>* stop,
    const std::function<void(const ProcessCaptureProgress&)>& progress) {
  ProcessCaptureResult result;
  const ProcessCaptureOptions& o = options_;
  if (o.command.empty() || o.command.front().empty()) {
    result.start_error = "no command to run";
    return result;
  }
  const std::string library =
      o.inject_library.empty() ? default_inject_library() : o.inject_library;
  std::error_code ec;
  if (library.empty() || !std::filesystem::exists(library, ec)) {
    result.start_error =
        "the injection library libfusionscope_inject.so was not found" +
        (library.empty() ? std::string(" next to fusionscope") : " at " + library) +
        " (it is installed beside the fusionscope executable)";
    return result;
  }
  if (std::string why = competing_injection(o, library); !why.empty()) {
    result.start_error = why;
    return result;
  }
  if (!o.capture_range.empty() && (o.delay_s > 0 || o.duration_s > 0)) {
    result.start_error = "a capture range and --delay/--duration do not go together";
    return result;
  }

  SocketDir dir;
  if (!dir.ok()) {
    result.start_error = "cannot create a private directory for the socket: " + errno_text(errno);
    return result;
  }
  std::string error;
  Fd listener(listen_on(dir.path(), error));
  if (listener.get() < 0) {
    result.start_error = error;
    return result;
  }

  const uint64_t t0 = monotonic_ns();
  const auto start = Clock::now();
  const Spawned child = spawn(o, child_environment(o, dir.path(), library, t0));
  if (child.pid < 0) {
    result.start_error = child.error;
    return result;
  }
  result.started = true;

  InjectedStreams streams(sink, InjectedStreams::Options{o.iteration_range, 8192, o.iteration_ops});
  struct Connection {
    Fd fd;
    std::size_t stream = 0;
  };
  std::vector<Connection> connections;
  std::set<pid_t> known_pids;
  ProcessCaptureProgress report;
  auto last_report = Clock::now();
  bool child_done = false;
  int stop_stage = 0;  // 0 none, 1 SIGINT sent, 2 SIGTERM sent, 3 SIGKILL sent
  auto stop_sent = Clock::now();
  std::exception_ptr sink_error;
  std::vector<uint8_t> chunk(1 << 20);

  auto send_stop = [&](int sig) {
    ::kill(-child.pid, sig);
    for (pid_t p : known_pids) ::kill(p, sig);
  };
  auto emit = [&](std::string event) {
    report.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
    report.event = std::move(event);
    if (progress) progress(report);
    last_report = Clock::now();
  };

  for (;;) {
    const bool stop_wanted = (stop != nullptr && stop->load()) || sink_error != nullptr;
    if (stop_wanted && stop_stage == 0) {
      result.stopped = stop != nullptr && stop->load();
      report.stopping = true;
      send_stop(SIGINT);
      stop_stage = 1;
      stop_sent = Clock::now();
      emit("stopping the command (SIGINT)");
    } else if (stop_stage > 0 && stop_stage < 3 &&
               Clock::now() - stop_sent > std::chrono::duration<double>(o.stop_grace_s)) {
      const int sig = stop_stage == 1 ? SIGTERM : SIGKILL;
      send_stop(sig);
      ++stop_stage;
      stop_sent = Clock::now();
      emit("the command did not stop: " + signal_name(sig));
    }

    if (!child_done) {
      int status = 0;
      const pid_t r = ::waitpid(child.pid, &status, WNOHANG);
      if (r == child.pid) {
        child_done = true;
        result.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
        if (WIFEXITED(status)) {
          result.exited = true;
          result.exit_code = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
          result.signal = WTERMSIG(status);
        }
      }
    }
    const bool any_open = std::any_of(connections.begin(), connections.end(),
                                      [](const Connection& c) { return c.fd.get() >= 0; });

    std::vector<pollfd> fds;
    fds.push_back({listener.get(), POLLIN, 0});
    for (const auto& c : connections)
      if (c.fd.get() >= 0) fds.push_back({c.fd.get(), POLLIN, 0});
    // Once the command has exited and every process has closed its stream, one last look for a
    // connection still queued, then the end.
    const int timeout_ms = child_done && !any_open ? 0 : 50;
    const int n = ::poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0 && errno != EINTR) break;

    bool accepted = false;
    if (n > 0 && (fds[0].revents & POLLIN)) {
      for (;;) {
        const int fd = ::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) break;
        connections.push_back({Fd(fd), streams.open()});
        accepted = true;
      }
    }
    if (n > 0) {
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        auto it = std::find_if(connections.begin(), connections.end(),
                               [&](const Connection& c) { return c.fd.get() == fds[i].fd; });
        if (it == connections.end()) continue;
        const ssize_t got = ::read(it->fd.get(), chunk.data(), chunk.size());
        if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (got <= 0) {
          it->fd.reset();
          streams.close(it->stream);
          continue;
        }
        report.bytes += static_cast<uint64_t>(got);
        const std::size_t before = streams.processes().size();
        if (!sink_error) {
          try {
            streams.feed(it->stream,
                         std::span<const uint8_t>(chunk.data(), static_cast<std::size_t>(got)));
          } catch (...) {
            sink_error = std::current_exception();
          }
        }
        const auto procs = streams.processes();
        if (procs.size() > before) {
          report.processes = procs.size();
          for (const auto* p : procs) known_pids.insert(static_cast<pid_t>(p->pid));
          const auto* p = procs.back();
          emit("process " + std::to_string(p->pid) + " (" + p->display_name() +
               ") initialised CUDA");
        }
      }
    }
    if (child_done && !any_open && !accepted && (n == 0 || n < 0)) break;
    if (Clock::now() - last_report > std::chrono::milliseconds(100)) emit({});
  }
  if (result.wall_s == 0)
    result.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  // The command's last process may end after the command itself (a launcher that returned).
  result.wall_s =
      std::max(result.wall_s, std::chrono::duration<double>(Clock::now() - start).count());

  if (!sink_error) {
    try {
      streams.finish();
    } catch (...) {
      sink_error = std::current_exception();
    }
  }

  std::vector<std::string> problems;
  for (const InjectedProcess* p : streams.processes()) {
    CapturedProcess c;
    c.pid = p->pid;
    c.ppid = p->ppid;
    c.name = p->display_name();
    c.argv = p->argv;
    c.ended_cleanly = p->ended_cleanly;
    c.crash_signal = p->crash_signal;
    c.no_trace = p->no_trace;
    c.notes = p->notes;
    c.dropped_records = p->dropped_records;
    c.kernels = p->stats.kernels;
    c.api_calls = p->stats.api_calls;
    c.ranges = p->stats.ranges;
    c.memops = p->stats.memops;
    c.kernels_without_launch = p->stats.kernels_without_launch;
    c.kernels_without_op = p->stats.kernels_without_op;
    c.iterations_ops_by_order = p->stats.iterations_ops_by_order;
    c.iterations_ops_unmatched = p->stats.iterations_ops_unmatched;
    c.iteration_prefix = p->iteration_prefix;
    if (p->counters) {
      c.counters = to_pass(*p->counters);
      c.counters_window = p->counters->window;
      c.counters_method = p->counters->method;
      c.counters_filtered = p->counters->filtered_out;
    }
    if (!p->stream_error.empty()) c.notes.push_back(p->stream_error);

    const std::string who = "process " + std::to_string(c.pid) + " (" + c.name + ")";
    if (c.no_trace) {
      problems.push_back(who + ": no trace: " + joined(p->notes));
    } else {
      if (c.crash_signal != 0)
        problems.push_back(who + " died of " + signal_name(c.crash_signal) +
                           "; its trace holds what was flushed before");
      else if (!c.ended_cleanly)
        problems.push_back(who +
                           " ended without flushing its trace (killed, or it left through "
                           "_exit): its last records are missing");
      if (c.dropped_records > 0)
        problems.push_back(who + ": CUPTI dropped " + std::to_string(c.dropped_records) +
                           " records (no activity buffer was free)");
      if (!p->stream_error.empty()) problems.push_back(who + ": " + p->stream_error);
      const std::size_t cut = p->stats.unmatched_marker_ends + p->stats.unclosed_markers;
      if (c.iterations_ops_unmatched > 0)
        problems.push_back(who + ": " + std::to_string(c.iterations_ops_unmatched) + " of " +
                           std::to_string(c.iterations_ops_unmatched + c.iterations_ops_by_order) +
                           " iterations did not launch the plan's kernels, so their kernels have "
                           "no op (" +
                           p->stats.ops_unmatched_reason + ")");
      if (cut > 0 && o.capture_range.empty() && o.delay_s == 0 && o.duration_s == 0)
        problems.push_back(who + ": " + std::to_string(cut) + " NVTX ranges were left open");
    }
    result.trace.kernels += c.kernels;
    result.trace.api_calls += c.api_calls;
    result.trace.ranges += c.ranges;
    result.trace.memops += c.memops;
    result.trace.kernels_without_launch += c.kernels_without_launch;
    result.trace.kernels_without_op += c.kernels_without_op;
    result.trace.dropped_records += c.dropped_records;
    if (!c.no_trace) result.trace.traced = true;
    result.processes.push_back(std::move(c));
  }
  if (result.processes.empty()) {
    problems.insert(problems.begin(),
                    "no CUDA activity: no process of the command initialised CUDA, so there is "
                    "nothing to trace");
  } else if (!o.counters && result.no_cuda_activity() && result.trace.traced) {
    problems.insert(problems.begin(),
                    "no CUDA activity: the command initialised CUDA but launched no GPU work "
                    "in the recorded window");
  }
  for (const auto& p : problems)
    result.trace.status += (result.trace.status.empty() ? "" : "; ") + p;
  if (sink_error) std::rethrow_exception(sink_error);
  return result;
}

}  // namespace fusionscope::profiler
