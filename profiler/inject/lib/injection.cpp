// libfusionscope_inject.so: what `fusionscope capture -- COMMAND` puts into the command's
// processes. The CUDA driver loads it at cuInit (CUDA_INJECTION64_PATH) and calls
// InitializeInjection; NVTX loads it at the program's first NVTX call (NVTX_INJECTION64_PATH) and
// calls InitializeInjectionNvtx2, which this library hands on to CUPTI's own so that CUPTI sees
// every NVTX range. It subscribes to CUPTI, enables the activity kinds native capture records,
// and sends each completed activity buffer to the capturing process; decoding, linking kernels to
// their launches and ops, and writing the session all happen there. It never stops the program:
// when something fails it says so on the stream (or stays silent without one) and steps aside.
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <cupti.h>
#include <generated_nvtx_meta.h>

#include "../wire/activity_wire.h"
#include "channel.h"
#include "counters_pass.h"
#include "range_window.h"
#include "settings.h"

namespace fusionscope::inject {
namespace {

constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,   CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_DRIVER,   CUPTI_ACTIVITY_KIND_MARKER,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,   CUPTI_ACTIVITY_KIND_OVERHEAD,
};

constexpr CUpti_CallbackId kLaunchCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
};

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
// Handled only while the program leaves them at their default (dying without a flush).
constexpr int kStopSignals[] = {SIGINT, SIGTERM};

uint32_t this_thread() {
  return static_cast<uint32_t>(syscall(SYS_gettid));
}

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::string cupti_error(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || s == nullptr)
    return "CUPTI error " + std::to_string(r);
  return s;
}

std::vector<std::string> command_line(const std::string& proc = "self") {
  std::ifstream in("/proc/" + proc + "/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> argv;
  std::string cur;
  for (char c : all) {
    if (c == '\0') {
      argv.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) argv.push_back(std::move(cur));
  return argv;
}

// Everything the library keeps. Never destroyed: CUPTI and exit handlers may call in late.
struct State {
  Settings settings;
  Channel channel;
  pid_t pid = 0;
  bool active = false;  // connected and set up in this process
  CUpti_SubscriberHandle subscriber = nullptr;
  std::atomic<bool> tracing{false};
  std::mutex enable_mu;
  std::unique_ptr<RangeWindow> window;
  // Counters mode: the window after it (the range's second occurrence, the next iteration),
  // where the metrics other than DRAM bytes are collected (counters_pass.h).
  std::unique_ptr<RangeWindow> next_window;
  std::unique_ptr<InjectedCounters> counters;
  std::mutex graph_mu;
  std::vector<WireGraphNode> graph_nodes;
  std::atomic<bool> finished{false};
  // Settings::flush_ms: a thread that hands completed records on while the program runs.
  std::thread flusher;
  std::mutex flusher_mu;
  std::condition_variable flusher_cv;
  bool stop_flusher = false;
  struct sigaction previous[NSIG] = {};
  std::atomic<int> dying_signal{0};
};

State& state() {
  static State* s = new State;
  return *s;
}

bool in_forked_child() {
  return state().pid != getpid();
}

void send(const std::vector<uint8_t>& bytes) {
  if (!in_forked_child()) state().channel.send(bytes);
}

void send_status(StatusLevel level, const std::string& text) {
  std::vector<uint8_t> out;
  encode_status(level, text, out);
  send(out);
}

void send_graph_nodes() {
  State& s = state();
  std::vector<WireGraphNode> nodes;
  {
    std::lock_guard lock(s.graph_mu);
    nodes.swap(s.graph_nodes);
  }
  if (nodes.empty()) return;
  std::vector<uint8_t> out;
  encode_graph_nodes(nodes, out);
  send(out);
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  const std::size_t bytes = (state().settings.buffer_bytes + 7) / 8 * 8;
  *max_records = 0;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, bytes));
  *size = *buffer ? bytes : 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  if (buffer != nullptr && valid > 0 && !in_forked_child()) {
    // Graph nodes first: the capturing side needs them before it links the kernels at the end,
    // and sending them with each buffer keeps them when the program dies.
    send_graph_nodes();
    std::vector<uint8_t> out;
    out.reserve(valid + valid / 4);
    encode_activity_buffer(buffer, valid, out);
    send(out);
  }
  std::free(buffer);
}

void enable_tracing() {
  State& s = state();
  std::lock_guard lock(s.enable_mu);
  if (s.tracing || s.finished) return;
  std::string errors;
  for (CUpti_ActivityKind kind : kKinds) {
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER && !s.settings.driver_api) continue;
    const CUptiResult r = cuptiActivityEnable(kind);
    if (r != CUPTI_SUCCESS)
      errors += (errors.empty() ? "" : "; ") + std::string("kind ") + std::to_string(kind) + ": " +
                cupti_error(r);
  }
  s.tracing = true;
  if (!errors.empty()) send_status(StatusLevel::kWarning, "CUPTI refused to trace " + errors);
}

void disable_tracing() {
  State& s = state();
  std::lock_guard lock(s.enable_mu);
  if (!s.tracing) return;
  for (CUpti_ActivityKind kind : kKinds) cuptiActivityDisable(kind);
  s.tracing = false;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

// Waits for the GPU work of the calling thread's context (the program's, in an NVTX callback), so
// that the window's last kernels have completed, and so have their records, before tracing stops.
// Without a context on this thread (the --duration timer) it does nothing.
void synchronize_current_context() {
  using Sync = int (*)();
  static const Sync sync = []() -> Sync {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    return h ? reinterpret_cast<Sync>(dlsym(h, "cuCtxSynchronize")) : nullptr;
  }();
  if (sync != nullptr) sync();
}

using Which = InjectedCounters::Window;

void window_opened(Which which) {
  State& s = state();
  if (s.settings.counters) {
    const RangeWindow* w = which == Which::kDram ? s.window.get() : s.next_window.get();
    if (s.counters) s.counters->begin(which, w ? w->describe() : "the program");
  } else if (which == Which::kDram) {
    enable_tracing();
  }
}

void window_closed(Which which) {
  State& s = state();
  if (s.settings.counters) {
    if (!s.counters) return;
    if (auto result = s.counters->end(which)) {
      std::vector<uint8_t> out;
      encode_counters(*result, out);
      send(out);
    }
  } else if (which == Which::kDram) {
    synchronize_current_context();
    disable_tracing();
  }
}

void react(Which which, RangeWindow::Event e) {
  if (e == RangeWindow::Event::kOpen) window_opened(which);
  if (e == RangeWindow::Event::kClose) window_closed(which);
}

// Feeds an NVTX event to the window and, in counters mode, to the next one.
template <class Call>
void each_window(Call&& call) {
  State& s = state();
  if (s.window) react(Which::kDram, call(*s.window));
  if (s.next_window) react(Which::kOthers, call(*s.next_window));
}

std::string_view ascii_message(const nvtxEventAttributes_t* a) {
  if (a == nullptr || a->messageType != NVTX_MESSAGE_TYPE_ASCII || a->message.ascii == nullptr)
    return {};
  return a->message.ascii;
}

void on_nvtx(CUpti_CallbackId cbid, const CUpti_NvtxData* data) {
  State& s = state();
  if (!s.window || data == nullptr || data->functionParams == nullptr) return;
  const void* p = data->functionParams;
  const uint32_t thread = this_thread();
  auto returned_id = [&]() -> uint64_t {
    return data->functionReturnValue ? *static_cast<const nvtxRangeId_t*>(data->functionReturnValue)
                                     : 0;
  };
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA: {
      const char* m = static_cast<const nvtxRangePushA_params*>(p)->message;
      each_window([&](RangeWindow& w) { return w.push(thread, 0, m ? m : ""); });
      break;
    }
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      each_window([&](RangeWindow& w) {
        return w.push(thread, 0,
                      ascii_message(static_cast<const nvtxRangePushEx_params*>(p)->eventAttrib));
      });
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
      const auto* q = static_cast<const nvtxDomainRangePushEx_params*>(p);
      each_window([&](RangeWindow& w) {
        return w.push(thread, reinterpret_cast<uint64_t>(q->domain),
                      ascii_message(q->core.eventAttrib));
      });
      break;
    }
    case CUPTI_CBID_NVTX_nvtxRangePop:
      each_window([&](RangeWindow& w) { return w.pop(thread, 0); });
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      each_window([&](RangeWindow& w) {
        return w.pop(thread, reinterpret_cast<uint64_t>(
                                 static_cast<const nvtxDomainRangePop_params*>(p)->domain));
      });
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartA: {
      const char* m = static_cast<const nvtxRangeStartA_params*>(p)->message;
      each_window([&](RangeWindow& w) { return w.start(returned_id(), m ? m : ""); });
      break;
    }
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      each_window([&](RangeWindow& w) {
        return w.start(returned_id(),
                       ascii_message(static_cast<const nvtxRangeStartEx_params*>(p)->eventAttrib));
      });
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
      each_window([&](RangeWindow& w) {
        return w.start(
            returned_id(),
            ascii_message(static_cast<const nvtxDomainRangeStartEx_params*>(p)->core.eventAttrib));
      });
      break;
    case CUPTI_CBID_NVTX_nvtxRangeEnd:
      each_window(
          [&](RangeWindow& w) { return w.end(static_cast<const nvtxRangeEnd_params*>(p)->id); });
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
      each_window([&](RangeWindow& w) {
        return w.end(static_cast<const nvtxDomainRangeEnd_params*>(p)->core.id);
      });
      break;
    default:
      break;
  }
}

void on_graph_node(CUpti_CallbackId cbid, const CUpti_ResourceData* resource) {
  const auto* graph =
      resource ? static_cast<const CUpti_GraphData*>(resource->resourceDescriptor) : nullptr;
  if (graph == nullptr || graph->node == nullptr) return;
  WireGraphNode n;
  if (cuptiGetGraphNodeId(graph->node, &n.node_id) != CUPTI_SUCCESS) return;
  if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) {
    n.thread_id = this_thread();
    uint64_t t = 0;
    cuptiGetTimestamp(&t);
    n.t_ns = static_cast<int64_t>(t);
  } else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED && graph->originalNode != nullptr) {
    n.cloned = 1;
    if (cuptiGetGraphNodeId(graph->originalNode, &n.original_id) != CUPTI_SUCCESS) return;
  } else {
    return;
  }
  std::lock_guard lock(state().graph_mu);
  state().graph_nodes.push_back(n);
}

// The stream a kernel launch goes to, from the launch's parameters. A null stream of a _ptsz
// launch is the per-thread default stream.
struct LaunchStream {
  void* stream = nullptr;
  bool per_thread = false;
};
LaunchStream launch_stream(CUpti_CallbackId cbid, const void* params) {
  LaunchStream out;
  if (params == nullptr) return out;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      out.stream = static_cast<const cuLaunchKernel_params*>(params)->hStream;
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      out.stream = static_cast<const cuLaunchKernel_ptsz_params*>(params)->hStream;
      out.per_thread = true;
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx: {
      const CUlaunchConfig* c = static_cast<const cuLaunchKernelEx_params*>(params)->config;
      out.stream = c ? c->hStream : nullptr;
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      const CUlaunchConfig* c = static_cast<const cuLaunchKernelEx_ptsz_params*>(params)->config;
      out.stream = c ? c->hStream : nullptr;
      out.per_thread = true;
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
      out.stream = static_cast<const cuLaunchCooperativeKernel_params*>(params)->hStream;
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      out.stream = static_cast<const cuLaunchCooperativeKernel_ptsz_params*>(params)->hStream;
      out.per_thread = true;
      break;
    default:
      break;
  }
  return out;
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* data) {
  State& s = state();
  if (in_forked_child() || s.finished) return;
  switch (domain) {
    case CUPTI_CB_DOMAIN_RESOURCE:
      if (s.tracing) on_graph_node(cbid, static_cast<const CUpti_ResourceData*>(data));
      break;
    case CUPTI_CB_DOMAIN_NVTX:
      on_nvtx(cbid, static_cast<const CUpti_NvtxData*>(data));
      break;
    case CUPTI_CB_DOMAIN_DRIVER_API: {
      const auto* cb = static_cast<const CUpti_CallbackData*>(data);
      if (s.counters && cb && cb->callbackSite == CUPTI_API_ENTER) {
        const LaunchStream ls = launch_stream(cbid, cb->functionParams);
        s.counters->launched(cb->symbolName, ls.stream, ls.per_thread);
      }
      break;
    }
    default:
      break;
  }
}

// Hands on every buffer whose records are complete (CUPTI's default flush, meant to be called at
// an interval from a thread of one's own), so that little is lost when a process leaves without
// running its exit handlers. Only in a copy forked from its parent without exec (same command
// line as the parent's: Python's fork-started multiprocessing and DataLoader workers), which
// leaves through _exit; any other process flushes at exit, and is spared the thread.
void start_flusher() {
  State& s = state();
  if (s.settings.flush_ms == 0) return;
  const std::vector<std::string> own = command_line();
  if (own.empty() || own != command_line(std::to_string(getppid()))) return;
  s.flusher = std::thread([&s] {
    const auto period = std::chrono::milliseconds(s.settings.flush_ms);
    std::unique_lock lock(s.flusher_mu);
    while (!s.flusher_cv.wait_for(lock, period, [&s] { return s.stop_flusher; })) {
      if (s.tracing && !s.finished && !in_forked_child()) cuptiActivityFlushAll(0);
    }
  });
}

void stop_flusher() {
  State& s = state();
  if (!s.flusher.joinable() || s.flusher.get_id() == std::this_thread::get_id()) return;
  {
    std::lock_guard lock(s.flusher_mu);
    s.stop_flusher = true;
  }
  s.flusher_cv.notify_all();
  s.flusher.join();
}

// At normal exit: the rest of the trace (or the counters pass), then the end of the stream.
void finish() {
  State& s = state();
  if (!s.active || in_forked_child() || s.finished.exchange(true)) return;
  stop_flusher();
  if (s.settings.counters) {
    if (s.counters) {
      std::vector<uint8_t> out;
      const std::string next = s.next_window ? s.next_window->describe() : "a second window";
      if (auto result = s.counters->finish(next)) {
        encode_counters(*result, out);
      } else if (!s.window || !s.window->opened()) {
        encode_counters(s.counters->never_opened(s.window ? s.window->describe() : "its window"),
                        out);
      }
      send(out);
    }
  } else {
    if (s.window && !s.window->opened())
      send_status(StatusLevel::kWarning,
                  "nothing was recorded: the program never opened " + s.window->describe());
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    send_graph_nodes();
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped > 0) {
      std::vector<uint8_t> out;
      encode_dropped(dropped, out);
      send(out);
    }
  }
  std::vector<uint8_t> end;
  encode_end(end);
  send(end);
  s.channel.close();
}

// A dying program: flush what CUPTI holds, say which signal, then let the signal take its course.
// CUPTI is not async-signal-safe; if the flush hangs (the crash happened inside CUPTI), the
// watchdog delivers the original signal with its default action after two seconds.
extern "C" void on_watchdog(int) {
  const int sig = state().dying_signal.load();
  signal(sig != 0 ? sig : SIGKILL, SIG_DFL);
  raise(sig != 0 ? sig : SIGKILL);
}

extern "C" void on_fatal_signal(int sig, siginfo_t* info, void* context) {
  State& s = state();
  int expected = 0;
  if (!in_forked_child() && s.active && s.dying_signal.compare_exchange_strong(expected, sig)) {
    signal(SIGALRM, on_watchdog);
    alarm(2);
    if (!s.settings.counters) {
      s.finished = true;
      cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
      send_graph_nodes();
    }
    std::vector<uint8_t> out;
    encode_crash(sig, out);
    send(out);
    s.channel.close();
    alarm(0);
  }
  // Hand the signal to whoever had it before (the program's handler, or the default action).
  const struct sigaction& prev = s.previous[sig];
  sigaction(sig, &prev, nullptr);
  if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction != nullptr) {
    prev.sa_sigaction(sig, info, context);
    return;
  }
  if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN && prev.sa_handler != nullptr) {
    prev.sa_handler(sig);
    return;
  }
  // A fault re-executes the faulting instruction on return and dies of it; a signal that was
  // sent (kill, raise, abort) must be raised again.
  if (info == nullptr || info->si_code <= 0 || sig == SIGABRT || sig == SIGINT || sig == SIGTERM)
    raise(sig);
}

void install_signal_handlers() {
  State& s = state();
  struct sigaction action {};
  action.sa_sigaction = on_fatal_signal;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (int sig : kCrashSignals) sigaction(sig, &action, &s.previous[sig]);
  for (int sig : kStopSignals) {
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) == 0 && !(current.sa_flags & SA_SIGINFO) &&
        current.sa_handler == SIG_DFL)
      sigaction(sig, &action, &s.previous[sig]);
  }
}

void after_fork_in_child() {
  // The child of a fork is a copy that CUPTI does not serve; its stream belongs to the parent.
  state().channel.abandon_after_fork();
}

// Opens the window after --delay and closes it after --duration, on a thread of its own.
void start_timer() {
  const Settings& st = state().settings;
  const uint64_t t0 = st.t0_ns != 0 ? st.t0_ns : monotonic_ns();
  std::thread([t0, delay = st.delay_ns, duration = st.duration_ns] {
    auto sleep_until = [](uint64_t t) {
      const uint64_t now = monotonic_ns();
      if (t > now) std::this_thread::sleep_for(std::chrono::nanoseconds(t - now));
    };
    sleep_until(t0 + delay);
    window_opened(Which::kDram);
    if (duration == 0) return;
    sleep_until(t0 + delay + duration);
    window_closed(Which::kDram);
  }).detach();
}

void start() {
  State& s = state();
  s.settings = read_settings([](const char* name) { return std::getenv(name); });
  if (s.settings.socket.empty()) return;  // not under a capture
  s.pid = getpid();
  if (!s.channel.connect(s.settings.socket)) return;
  s.active = true;

  Hello hello;
  hello.pid = static_cast<uint32_t>(s.pid);
  hello.ppid = static_cast<uint32_t>(getppid());
  hello.monotonic_ns = monotonic_ns();
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  hello.cupti_ns = t;
  hello.argv = command_line();
  std::vector<uint8_t> out;
  encode_hello(hello, out);
  send(out);

  pthread_atfork(nullptr, nullptr, after_fork_in_child);
  std::atexit(finish);

  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "fusionscope";
  params.oldSubscriberName = holder;
  params.oldSubscriberSize = sizeof holder - 1;
  const CUptiResult sub = cuptiSubscribe_v2(&s.subscriber, on_callback, nullptr, &params);
  if (sub != CUPTI_SUCCESS) {
    const std::string name = holder;
    std::string why;
    if (sub == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
      why = "another CUPTI client holds this process";
      if (!name.empty() && name.find("not provided") == std::string::npos) why += " (" + name + ")";
      why += " and CUPTI serves one at a time (as under Nsight Systems or the PyTorch profiler)";
    } else {
      why = "CUPTI could not start: " + cupti_error(sub);
    }
    send_status(StatusLevel::kNoTrace, why);
    s.subscriber = nullptr;
    return;
  }
  // Records name threads by their system id (gettid), as native capture does and as the graph
  // node callbacks do: lanes then match the operating system's threads.
  if (CUptiResult r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
      r != CUPTI_SUCCESS)
    send_status(StatusLevel::kWarning, "CUPTI refused system thread ids: " + cupti_error(r));
  install_signal_handlers();

  const bool has_range = !s.settings.capture_range.empty();
  if (has_range) {
    s.window = RangeWindow::exact(s.settings.capture_range);
    if (s.settings.counters) s.next_window = RangeWindow::exact(s.settings.capture_range, 1);
  } else if (s.settings.counters) {
    std::vector<std::string> prefixes;
    if (s.settings.iteration_range.empty()) {
      prefixes = {"ProfilerStep#", "iteration"};
    } else {
      prefixes = {s.settings.iteration_range};
    }
    s.window = RangeWindow::nth_with_prefix(prefixes, s.settings.warmup);
    s.next_window = RangeWindow::nth_with_prefix(std::move(prefixes), s.settings.warmup + 1);
  }
  if (s.window) cuptiEnableDomain(1, s.subscriber, CUPTI_CB_DOMAIN_NVTX);

  if (s.settings.counters) {
    s.counters = std::make_unique<InjectedCounters>(s.settings);
    for (CUpti_CallbackId id : kLaunchCallbacks)
      cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
    return;
  }

  if (CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
      r != CUPTI_SUCCESS) {
    send_status(StatusLevel::kNoTrace,
                "CUPTI refused the activity buffer callbacks: " + cupti_error(r));
    return;
  }
  cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                      CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED);
  cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                      CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);
  start_flusher();
  if (has_range) return;  // the range opens the window
  if (s.settings.delay_ns > 0 || s.settings.duration_ns > 0) {
    start_timer();
  } else {
    enable_tracing();
  }
}

void start_once() {
  static std::once_flag once;
  std::call_once(once, start);
}

// CUPTI's own NVTX entry point, in the CUPTI this library is bound to (the program's, when it
// loaded one first: one CUPTI per process).
using NvtxInit = int (*)(const void* (*)(uint32_t));
NvtxInit cupti_nvtx_init() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiGetVersion), &info) == 0 || info.dli_fname == nullptr)
    return nullptr;
  void* handle = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  return reinterpret_cast<NvtxInit>(dlsym(handle, "InitializeInjectionNvtx2"));
}

}  // namespace
}  // namespace fusionscope::inject

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  fusionscope::inject::start_once();
  return 1;
}

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    const void* (*get_export_table)(uint32_t)) {
  fusionscope::inject::start_once();
  const auto init = fusionscope::inject::cupti_nvtx_init();
  return init != nullptr ? init(get_export_table) : 0;
}
