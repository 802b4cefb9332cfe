#include "fusionscope/profiler/tracer.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <cupti.h>

#include "buffer_pipeline.h"
#include "fusionscope/profiler/device_info.h"
#include "run_assembler.h"

// NVTX reaches CUPTI through NVTX's injection hook, decided at the process's first NVTX call.
// Defining the static-injection pointer here (it is a weak symbol in NVTX's headers) makes every
// NVTX call of the program report to CUPTI without environment variables; NVTX_INJECTION64_PATH,
// when set (as Nsight Systems does), still takes precedence.
extern "C" int InitializeInjectionNvtx2(const void* (*get_export_table)(uint32_t));
extern "C" {
__attribute__((visibility("default"))) int (*InitializeInjectionNvtx2_fnptr)(
    const void* (*)(uint32_t)) = InitializeInjectionNvtx2;
}

namespace fusionscope::profiler {
namespace {

constexpr CUpti_ActivityKind kTracedKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,   CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_DRIVER,   CUPTI_ACTIVITY_KIND_MARKER,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,   CUPTI_ACTIVITY_KIND_OVERHEAD,
};

const char* kind_name(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return "kernels";
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return "memcpy";
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return "memset";
    case CUPTI_ACTIVITY_KIND_RUNTIME:
      return "runtime API";
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return "driver API";
    case CUPTI_ACTIVITY_KIND_MARKER:
      return "NVTX";
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return "synchronization";
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      return "CUPTI overhead";
    default:
      return "activity";
  }
}

std::string cupti_error(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || s == nullptr)
    return "CUPTI error " + std::to_string(r);
  return s;
}

// Points NVTX_INJECTION64_PATH at the CUPTI library this process uses, unless something else
// (a profiler that launched us) already set it. Must happen before the first NVTX call.
void point_nvtx_at_cupti() {
  if (std::getenv("NVTX_INJECTION64_PATH") != nullptr) return;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &info) != 0 &&
      info.dli_fname != nullptr)
    setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
}

std::size_t round_up8(std::size_t n) {
  return (n + 7) / 8 * 8;
}

}  // namespace

// The tracer's state; the callbacks below reach it through g_state.
struct TracerState {
  explicit TracerState(TracerOptions o)
      : options(std::move(o)), pipeline([this](uint8_t* b) { release(b); }) {}

  void release(uint8_t* buffer) {
    std::free(buffer);
    lent.fetch_sub(1, std::memory_order_relaxed);
  }

  TracerOptions options;
  bool owns_process_slot = false;
  bool available = false;
  std::string reason;
  CUpti_SubscriberHandle subscriber = nullptr;
  std::atomic<std::size_t> lent{0};         // buffers lent and not yet given back
  std::atomic<std::size_t> lent_in_run{0};  // buffers lent since begin_run
  std::atomic<bool> capturing{false};
  bool in_run = false;
  std::string enable_errors;
  bool kernels_enabled = false;
  std::unique_ptr<RunAssembler> assembler;
  std::mutex graph_mu;
  std::vector<GraphNodeEvent> graph_events;
  BufferPipeline pipeline;  // last: its worker stops first
};

struct Tracer::Impl : TracerState {
  using TracerState::TracerState;
};

namespace {

// CUPTI's callbacks are process-wide C functions; they find the live tracer here.
std::mutex g_mu;
TracerState* g_impl = nullptr;
bool g_exists = false;
Tracer* g_open_run = nullptr;  // a tracer with a run open, for the exit hook

void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;
  std::lock_guard lock(g_mu);
  TracerState* impl = g_impl;
  if (impl == nullptr) return;
  const std::size_t cap = impl->options.max_buffers;
  if (cap != 0 && impl->lent_in_run.load() >= cap) return;  // declined: CUPTI drops and counts
  const std::size_t bytes = round_up8(std::max<std::size_t>(impl->options.buffer_bytes, 4096));
  void* p = std::aligned_alloc(8, bytes);
  if (p == nullptr) return;
  impl->lent.fetch_add(1);
  impl->lent_in_run.fetch_add(1);
  *buffer = static_cast<uint8_t*>(p);
  *size = bytes;
}

void CUPTIAPI on_buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::lock_guard lock(g_mu);
  if (g_impl == nullptr) {
    std::free(buffer);
    return;
  }
  g_impl->pipeline.push(buffer, valid);
}

void CUPTIAPI on_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* data) {
  auto* impl = static_cast<TracerState*>(userdata);
  if (domain != CUPTI_CB_DOMAIN_RESOURCE || impl == nullptr || !impl->capturing.load()) return;
  const auto* resource = static_cast<const CUpti_ResourceData*>(data);
  const auto* graph =
      resource ? static_cast<const CUpti_GraphData*>(resource->resourceDescriptor) : nullptr;
  if (graph == nullptr || graph->node == nullptr) return;
  GraphNodeEvent e;
  if (cuptiGetGraphNodeId(graph->node, &e.node_id) != CUPTI_SUCCESS) return;
  if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) {
    e.kind = GraphNodeEvent::Kind::kCreated;
    e.thread_id = static_cast<uint32_t>(gettid());
    uint64_t t = 0;
    cuptiGetTimestamp(&t);
    e.t_ns = static_cast<int64_t>(t);
  } else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED && graph->originalNode != nullptr) {
    e.kind = GraphNodeEvent::Kind::kCloned;
    if (cuptiGetGraphNodeId(graph->originalNode, &e.original_id) != CUPTI_SUCCESS) return;
  } else {
    return;
  }
  std::lock_guard lock(impl->graph_mu);
  impl->graph_events.push_back(e);
}

void end_open_run_at_exit() {
  Tracer* tracer = nullptr;
  {
    std::lock_guard lock(g_mu);
    tracer = g_open_run;
  }
  if (tracer == nullptr) return;
  try {
    tracer->end_run();
  } catch (...) {
  }
}

}  // namespace

Tracer::Tracer(TracerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  Impl& s = *impl_;
  {
    std::lock_guard lock(g_mu);
    if (g_exists) {
      s.reason = "another tracer is already capturing in this process";
      return;
    }
    g_exists = true;
    s.owns_process_slot = true;
  }
  if (std::string why = gpu_unavailable_reason(); !why.empty()) {
    s.reason = "no CUDA GPU to trace: " + why;
    return;
  }
  point_nvtx_at_cupti();

  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "fusionscope";
  params.oldSubscriberName = holder;
  params.oldSubscriberSize = sizeof holder - 1;
  const CUptiResult sub =
      cuptiSubscribe_v2(&s.subscriber, on_callback, static_cast<TracerState*>(&s), &params);
  if (sub == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    // CUPTI names the holder when the holder gave it a name ("CUPTI for <not provided>" else).
    const std::string name = holder;
    const std::string who = !name.empty() && name.find("not provided") == std::string::npos
                                ? " (" + name + ")"
                                : std::string();
    s.reason = "another profiler is attached to this process" + who +
               " and CUPTI serves one at a time (as under Nsight Systems or the PyTorch "
               "profiler): runs execute without a trace";
    s.subscriber = nullptr;
    return;
  }
  if (sub != CUPTI_SUCCESS) {
    s.reason = "CUPTI could not start: " + cupti_error(sub);
    s.subscriber = nullptr;
    return;
  }
  if (CUptiResult r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
      r != CUPTI_SUCCESS) {
    s.reason = "CUPTI refused system thread ids: " + cupti_error(r);
    return;
  }
  {
    std::lock_guard lock(g_mu);
    g_impl = &s;
  }
  if (CUptiResult r = cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed);
      r != CUPTI_SUCCESS) {
    s.reason = "CUPTI refused the activity buffer callbacks: " + cupti_error(r);
    return;
  }
  // Graph nodes tie kernels replayed from CUDA graphs to the op that captured them. Without
  // these callbacks graph kernels only lose their op, so a refusal is not fatal.
  cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                      CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED);
  cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                      CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);
  static std::once_flag exit_hook;
  std::call_once(exit_hook, [] { std::atexit(end_open_run_at_exit); });
  s.available = true;
}

Tracer::~Tracer() {
  Impl& s = *impl_;
  if (s.in_run) {
    try {
      end_run();
    } catch (...) {
    }
  }
  if (s.available) {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    s.pipeline.drain();
  }
  {
    std::lock_guard lock(g_mu);
    if (g_impl == &s) g_impl = nullptr;
    if (s.owns_process_slot) g_exists = false;
  }
  if (s.subscriber != nullptr) cuptiUnsubscribe(s.subscriber);
}

bool Tracer::available() const {
  return impl_->available;
}
const std::string& Tracer::unavailable_reason() const {
  return impl_->reason;
}
bool Tracer::in_run() const {
  return impl_->in_run;
}

void Tracer::begin_run(TraceSink& sink) {
  Impl& s = *impl_;
  if (s.in_run) throw std::logic_error("Tracer::begin_run: a run is already open");
  s.in_run = true;
  if (!s.available) return;

  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);  // resets the count
  s.pipeline.drain();
  s.pipeline.take_error();
  s.pipeline.take_stray_buffers();
  s.assembler = std::make_unique<RunAssembler>(
      sink, RunAssembler::Options{
                s.options.nvtx_domain, s.options.iteration_prefix, s.options.batch_records, {}});
  s.pipeline.attach(s.assembler.get());
  {
    std::lock_guard lock(s.graph_mu);
    s.graph_events.clear();
  }
  s.lent_in_run = 0;
  s.enable_errors.clear();
  s.kernels_enabled = false;
  s.capturing = true;
  for (CUpti_ActivityKind kind : kTracedKinds) {
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER && !s.options.driver_api) continue;
    const CUptiResult r = cuptiActivityEnable(kind);
    if (r == CUPTI_SUCCESS) {
      if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) s.kernels_enabled = true;
    } else {
      if (!s.enable_errors.empty()) s.enable_errors += "; ";
      s.enable_errors += std::string(kind_name(kind)) + ": " + cupti_error(r);
    }
  }
  std::lock_guard lock(g_mu);
  g_open_run = this;
}

TraceOutcome Tracer::end_run() {
  Impl& s = *impl_;
  if (!s.in_run) throw std::logic_error("Tracer::end_run: no run is open");
  {
    std::lock_guard lock(g_mu);
    if (g_open_run == this) g_open_run = nullptr;
  }
  s.in_run = false;
  TraceOutcome out;
  if (!s.available) {
    out.status = s.reason;
    return out;
  }

  // The run's work has completed, so a forced flush loses nothing; the second one collects what
  // CUPTI recorded while the kinds were being disabled.
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  for (CUpti_ActivityKind kind : kTracedKinds) cuptiActivityDisable(kind);
  s.capturing = false;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  s.pipeline.drain();

  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS)
    out.dropped_records = dropped;

  std::vector<std::string> problems;
  AssemblyStats stats;
  try {
    {
      std::lock_guard lock(s.graph_mu);
      s.assembler->add_graph_nodes(s.graph_events);
      s.graph_events.clear();
    }
    stats = s.assembler->finish();
  } catch (const std::exception& e) {
    stats = s.assembler->stats();
    problems.push_back(std::string("writing the trace failed: ") + e.what());
  }
  s.pipeline.attach(nullptr);
  s.assembler.reset();
  if (std::string e = s.pipeline.take_error(); !e.empty()) problems.insert(problems.begin(), e);

  out.traced = s.kernels_enabled;
  out.kernels = stats.kernels;
  out.api_calls = stats.api_calls;
  out.ranges = stats.ranges;
  out.memops = stats.memops;
  out.kernels_without_launch = stats.kernels_without_launch;
  out.kernels_without_op = stats.kernels_without_op;

  if (!s.enable_errors.empty()) problems.push_back("CUPTI refused to trace " + s.enable_errors);
  if (out.dropped_records > 0)
    problems.push_back("CUPTI dropped " + std::to_string(out.dropped_records) +
                       " records (no activity buffer was free); the trace is incomplete");
  if (stats.untimed_records > 0)
    problems.push_back(std::to_string(stats.untimed_records) +
                       " records had no timestamps and were left out");
  if (stats.unmatched_marker_ends + stats.unclosed_markers > 0)
    problems.push_back(std::to_string(stats.unmatched_marker_ends + stats.unclosed_markers) +
                       " NVTX ranges were cut by the run's start or end");
  for (const std::string& p : problems) {
    if (!out.status.empty()) out.status += "; ";
    out.status += p;
  }
  return out;
}

}  // namespace fusionscope::profiler
