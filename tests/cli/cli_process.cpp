#include "cli_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

namespace fusionscope::testing {

CliResult run_cli(const std::vector<std::string>& args, const CliOptions& options) {
  int out_pipe[2], err_pipe[2];
  if (::pipe(out_pipe) != 0 || ::pipe(err_pipe) != 0) return {};
  const pid_t child = ::fork();
  if (child == 0) {
    if (options.stdout_path.empty()) {
      ::dup2(out_pipe[1], 1);
    } else {
      const int fd = ::open(options.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
    }
    ::dup2(err_pipe[1], 2);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    if (options.file_size_limit) {
      rlimit limit{*options.file_size_limit, *options.file_size_limit};
      ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    std::vector<char*> argv;
    std::string exe = FUSIONSCOPE_CLI;
    argv.push_back(exe.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  CliResult r;
  const auto start = std::chrono::steady_clock::now();
  bool killed = false;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    int timeout = -1;
    if (options.kill_after_s >= 0 && !killed) {
      const double left =
          options.kill_after_s -
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (left <= 0) {
        ::kill(child, SIGKILL);
        killed = true;
      } else {
        timeout = static_cast<int>(left * 1000) + 1;
      }
    }
    if (::poll(fds, 2, timeout) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[4096];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

void write_trace(const std::filesystem::path& path, int kernels, const std::string& kernel_name) {
  std::ofstream out(path);
  out << R"({"schemaVersion": 1, "deviceProperties": [], "traceEvents": [)" << '\n';
  for (int i = 0; i < kernels; ++i) {
    const long t = 1000L + i * 10L;
    if (i) out << ",\n";
    out << R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 7, "ts": )"
        << t << R"(, "dur": 3, "args": {"correlation": )" << i + 1 << "}},\n";
    out << R"({"ph": "X", "cat": "kernel", "name": ")" << kernel_name
        << R"(", "pid": 0, "tid": 7, "ts": )" << t + 5
        << R"(, "dur": 4, "args": {"device": 0, "stream": 7, "correlation": )" << i + 1
        << R"(, "grid": [1, 1, 1], "block": [128, 1, 1]}})";
  }
  out << "\n]}\n";
}

}  // namespace fusionscope::testing
