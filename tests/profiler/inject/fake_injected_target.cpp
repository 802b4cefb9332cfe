// A stand-in for a captured program, for tests without a GPU: it does in its own process what
// libfusionscope_inject.so does in a real one (connects to the capture's socket, says hello, sends
// activity buffers built in memory and the end of its stream), and behaves as the test asks:
// exits with a status, crashes, never touches "CUDA", starts children, waits to be stopped.
//
//   fake_injected_target [--iterations N] [--exit CODE] [--crash] [--no-cuda] [--children N]
//                        [--hang] [--ignore-stop] [--no-end] [--step PREFIX]
//                        [--expect-cwd DIR] [--expect-env KEY=VALUE]
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "activity_buffer.h"
#include "activity_wire.h"
#include "channel.h"

extern char** environ;

namespace {

namespace t = fusionscope::testing;
namespace inject = fusionscope::inject;

std::atomic<bool> g_stop{false};
extern "C" void on_stop(int) {
  g_stop = true;
}

std::vector<std::string> command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> argv;
  std::string cur;
  for (char c : all) {
    if (c == '\0') {
      argv.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return argv;
}

// One iteration: a step range around an op range around a launch, and its kernel.
void send_iteration(inject::Channel& channel, int i, const std::string& step, uint32_t thread) {
  static std::vector<std::string> names;  // strings the records point to, kept alive
  names.push_back(step + std::to_string(i));
  const uint64_t base = 1'000'000ull * static_cast<uint64_t>(i + 1);
  const uint32_t corr = static_cast<uint32_t>(100 + i);
  const uint32_t id = static_cast<uint32_t>(10 * i + 1);
  t::ActivityBuffer buf;
  buf.add(t::marker_start(id, base, thread, names.back().c_str(), nullptr))
      .add(t::marker_start(id + 1, base + 100, thread, "aten::mm", nullptr))
      .add(t::launch_record(base + 200, thread, corr))
      .add(t::marker_end(id + 1, base + 5000, thread))
      .add(t::marker_end(id, base + 9000, thread))
      .add(t::kernel_record(base + 10000, base + 60000, corr, "_Z10fake_gemmv"));
  std::vector<uint8_t> out;
  inject::encode_activity_buffer(buf.data(), buf.size(), out);
  channel.send(out);
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 3, exit_code = 0, children = 0;
  bool crash = false, no_cuda = false, hang = false, ignore_stop = false, no_end = false;
  std::string step = "ProfilerStep#", expect_cwd, expect_env;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--iterations")
      iterations = std::atoi(next().c_str());
    else if (a == "--exit")
      exit_code = std::atoi(next().c_str());
    else if (a == "--crash")
      crash = true;
    else if (a == "--no-cuda")
      no_cuda = true;
    else if (a == "--children")
      children = std::atoi(next().c_str());
    else if (a == "--hang")
      hang = true;
    else if (a == "--ignore-stop")
      ignore_stop = true;
    else if (a == "--no-end")
      no_end = true;
    else if (a == "--step")
      step = next();
    else if (a == "--expect-cwd")
      expect_cwd = next();
    else if (a == "--expect-env")
      expect_env = next();
  }
  if (!expect_cwd.empty() &&
      std::filesystem::current_path() != std::filesystem::canonical(expect_cwd))
    return 9;
  if (!expect_env.empty()) {
    const auto eq = expect_env.find('=');
    const char* v = std::getenv(expect_env.substr(0, eq).c_str());
    if (v == nullptr || expect_env.substr(eq + 1) != v) return 8;
  }
  if (ignore_stop) {
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
  } else if (hang) {
    signal(SIGINT, on_stop);
  }
  // A launcher: its children are separate programs that inherit the capture's environment.
  std::vector<pid_t> kids;
  for (int c = 0; c < children; ++c) {
    std::string it = std::to_string(iterations + c + 1);
    const char* child_argv[] = {argv[0], "--iterations", it.c_str(), nullptr};
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[0], nullptr, nullptr, const_cast<char**>(child_argv), environ) == 0)
      kids.push_back(pid);
  }
  for (pid_t k : kids) waitpid(k, nullptr, 0);
  if (no_cuda) return exit_code;

  const char* socket = std::getenv("FUSIONSCOPE_INJECT_SOCKET");
  inject::Channel channel;
  if (socket == nullptr || !channel.connect(socket)) {
    std::fprintf(stderr, "fake target: no capture socket\n");
    return 99;
  }
  inject::Hello hello;
  hello.pid = static_cast<uint32_t>(getpid());
  hello.ppid = static_cast<uint32_t>(getppid());
  hello.argv = command_line();
  std::vector<uint8_t> out;
  inject::encode_hello(hello, out);
  channel.send(out);

  const uint32_t thread = static_cast<uint32_t>(syscall(SYS_gettid));
  const char* mode = std::getenv("FUSIONSCOPE_INJECT_MODE");
  if (mode != nullptr && std::string(mode) == "counters") {
    // The counters pass: the window's one kernel (iteration WARMUP), as the library reports it.
    const char* warmup = std::getenv("FUSIONSCOPE_INJECT_WARMUP");
    const int w = warmup ? std::atoi(warmup) : 0;
    inject::WireCounters c;
    c.chip = "GH100";
    c.window = "iteration " + std::to_string(w);
    c.passes = 1;
    c.metrics = {"dram__bytes_read.sum"};
    c.units = {"byte"};
    if (w < iterations) c.kernels = {{0, "_Z10fake_gemmv", {1000.0 + w}}};
    out.clear();
    inject::encode_counters(c, out);
    channel.send(out);
  } else {
    for (int i = 0; i < iterations; ++i) send_iteration(channel, i, step, thread);
  }

  if (crash) {
    out.clear();
    inject::encode_crash(SIGSEGV, out);
    channel.send(out);
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
  }
  if (hang || ignore_stop) {
    while (!g_stop) pause();
  }
  if (no_end) _exit(exit_code);
  out.clear();
  inject::encode_end(out);
  channel.send(out);
  return hang ? 130 : exit_code;
}
