// A small CUDA program for the injection capture's GPU tests: it knows nothing of fusionscope.
// Each iteration is an NVTX range "iteration N" with two kernels in op ranges "long" and "short";
// the program times every kernel with its own CUDA events and writes them to --out as JSON lines
// ({"name": ..., "ms": ...} in launch order), so the test can hold the capture's durations
// against them.
//
//   cuda_target --out FILE [--iterations N] [--graph] [--crash] [--workers N] [--exit CODE]
//               [--gap-ms N --times FILE]
//
// --graph captures one iteration in a CUDA graph and replays it (events around each replay);
// --crash dereferences null after the iterations; --workers N starts N copies of itself (with
// --out FILE.K) and waits for them, touching no CUDA itself. --gap-ms N waits for each iteration's
// kernels and then sleeps N ms; --times FILE writes the CLOCK_MONOTONIC nanoseconds at which each
// iteration began, one a line (for tests of time-limited captures).
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

extern char** environ;

extern "C" __global__ void fs_spin_long(long long cycles, int* sink) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  if (threadIdx.x == 0 && sink != nullptr) atomicAdd(sink, 1);
}

extern "C" __global__ void fs_spin_short(long long cycles, int* sink) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  if (threadIdx.x == 0 && sink != nullptr) atomicAdd(sink, 1);
}

#define CHECK(call)                                                                 \
  do {                                                                              \
    cudaError_t e_ = (call);                                                        \
    if (e_ != cudaSuccess) {                                                        \
      std::fprintf(stderr, "cuda_target: %s: %s\n", #call, cudaGetErrorString(e_)); \
      std::exit(3);                                                                 \
    }                                                                               \
  } while (0)

namespace {

struct Timed {
  std::string name;
  cudaEvent_t begin = nullptr, end = nullptr;
};

void launch(cudaStream_t s, bool in_ranges, long long long_cycles, int* sink) {
  if (in_ranges) nvtxRangePushA("long");
  fs_spin_long<<<4, 128, 0, s>>>(long_cycles, sink);
  if (in_ranges) nvtxRangePop();
  if (in_ranges) nvtxRangePushA("short");
  fs_spin_short<<<4, 128, 0, s>>>(long_cycles / 2, sink);
  if (in_ranges) nvtxRangePop();
}

}  // namespace

int main(int argc, char** argv) {
  std::string out, times_file;
  int iterations = 5, workers = 0, exit_code = 0, gap_ms = 0;
  bool graph = false, crash = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--out")
      out = next();
    else if (a == "--iterations")
      iterations = std::atoi(next().c_str());
    else if (a == "--graph")
      graph = true;
    else if (a == "--crash")
      crash = true;
    else if (a == "--workers")
      workers = std::atoi(next().c_str());
    else if (a == "--exit")
      exit_code = std::atoi(next().c_str());
    else if (a == "--gap-ms")
      gap_ms = std::atoi(next().c_str());
    else if (a == "--times")
      times_file = next();
  }
  if (workers > 0) {
    // A launcher: the workers are the CUDA processes.
    std::vector<pid_t> pids;
    for (int w = 0; w < workers; ++w) {
      const std::string wout = out + "." + std::to_string(w);
      const std::string its = std::to_string(iterations);
      const char* wargv[] = {argv[0], "--out", wout.c_str(), "--iterations", its.c_str(), nullptr};
      pid_t pid = 0;
      if (posix_spawn(&pid, argv[0], nullptr, nullptr, const_cast<char**>(wargv), environ) != 0)
        return 4;
      pids.push_back(pid);
    }
    int failed = 0;
    for (pid_t p : pids) {
      int status = 0;
      waitpid(p, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
    }
    return failed ? 5 : exit_code;
  }

  int clock_khz = 0;
  CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  // About 2 ms and 1 ms at the peak SM clock: long enough that an event's own cost is noise.
  const long long long_cycles = static_cast<long long>(clock_khz) * 2;
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int* sink = nullptr;
  CHECK(cudaMalloc(&sink, 1 << 20));
  CHECK(cudaMemsetAsync(sink, 0, 1 << 20, s));
  std::vector<int> host(1 << 18, 1);
  CHECK(cudaMemcpyAsync(sink, host.data(), 1 << 20, cudaMemcpyHostToDevice, s));
  // Warm: module loading and the first launch's costs stay out of the timed kernels.
  launch(s, false, 1000, sink);
  CHECK(cudaStreamSynchronize(s));

  std::vector<Timed> timed;
  auto event_pair = [&](std::string name) {
    Timed t;
    t.name = std::move(name);
    CHECK(cudaEventCreate(&t.begin));
    CHECK(cudaEventCreate(&t.end));
    timed.push_back(t);
    return timed.size() - 1;
  };
  cudaGraphExec_t exec = nullptr;
  if (graph) {
    cudaGraph_t g = nullptr;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    launch(s, true, long_cycles, sink);
    CHECK(cudaStreamEndCapture(s, &g));
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaGraphDestroy(g));
  }
  std::vector<long long> began;
  for (int i = 0; i < iterations; ++i) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    began.push_back(now.tv_sec * 1000000000LL + now.tv_nsec);
    const std::string range = "iteration " + std::to_string(i);
    nvtxRangePushA(range.c_str());
    if (graph) {
      const size_t t = event_pair("graph");
      CHECK(cudaEventRecord(timed[t].begin, s));
      CHECK(cudaGraphLaunch(exec, s));
      CHECK(cudaEventRecord(timed[t].end, s));
    } else {
      size_t t = event_pair("fs_spin_long");
      CHECK(cudaEventRecord(timed[t].begin, s));
      nvtxRangePushA("long");
      fs_spin_long<<<4, 128, 0, s>>>(long_cycles, sink);
      nvtxRangePop();
      CHECK(cudaEventRecord(timed[t].end, s));
      t = event_pair("fs_spin_short");
      CHECK(cudaEventRecord(timed[t].begin, s));
      nvtxRangePushA("short");
      fs_spin_short<<<4, 128, 0, s>>>(long_cycles / 2, sink);
      nvtxRangePop();
      CHECK(cudaEventRecord(timed[t].end, s));
    }
    nvtxRangePop();
    if (gap_ms > 0) {
      CHECK(cudaStreamSynchronize(s));
      timespec gap{gap_ms / 1000, (gap_ms % 1000) * 1000000L};
      nanosleep(&gap, nullptr);
    }
  }
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaGetLastError());
  if (!times_file.empty()) {
    FILE* t = std::fopen(times_file.c_str(), "w");
    if (t == nullptr) return 6;
    for (long long ns : began) std::fprintf(t, "%lld\n", ns);
    std::fclose(t);
  }

  FILE* f = out.empty() ? stdout : std::fopen(out.c_str(), "w");
  if (f == nullptr) return 6;
  for (const Timed& t : timed) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, t.begin, t.end));
    std::fprintf(f, "{\"name\": \"%s\", \"ms\": %.6f}\n", t.name.c_str(), ms);
  }
  if (f != stdout) std::fclose(f);
  if (crash) {
    volatile int* null = nullptr;
    *null = 1;  // dies of SIGSEGV with its kernels done
  }
  if (exec) cudaGraphExecDestroy(exec);
  return exit_code;
}
