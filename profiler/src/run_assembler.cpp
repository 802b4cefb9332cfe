#include "run_assembler.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace fusionscope::profiler {
namespace {

using storage::ApiCallRecord;
using storage::ApiDomain;
using storage::CopyKind;
using storage::KernelRecord;
using storage::MemopKind;
using storage::MemopRecord;
using storage::RangeKind;
using storage::RangeRecord;
using storage::StringId;

int64_t ns(uint64_t t) {
  return static_cast<int64_t>(t);
}
bool timed(uint64_t start, uint64_t end) {
  return start != 0 && end >= start;
}

uint32_t dim(int32_t v) {
  return v > 0 ? static_cast<uint32_t>(v) : 1u;
}
uint32_t bytes(int32_t v) {
  return v > 0 ? static_cast<uint32_t>(v) : 0u;
}

CopyKind copy_kind(uint8_t cupti_kind) {
  switch (cupti_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return CopyKind::kHtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return CopyKind::kDtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return CopyKind::kDtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return CopyKind::kHtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return CopyKind::kPeer;
    default:
      return CopyKind::kUnknown;
  }
}

const char* sync_name(CUpti_ActivitySynchronizationType type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
      return "event synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
      return "stream wait event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
      return "stream synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
      return "context synchronize";
    default:
      return "synchronize";
  }
}

const char* overhead_name(CUpti_ActivityOverheadKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
      return "CUPTI overhead: driver compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH:
      return "CUPTI overhead: buffer flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION:
      return "CUPTI overhead: instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE:
      return "CUPTI overhead: resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
      return "CUPTI overhead: module loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING:
      return "CUPTI overhead: lazy function loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL:
      return "CUPTI overhead: command buffer full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST:
      return "CUPTI overhead: activity buffer request";
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT:
      return "CUPTI overhead: unified memory init";
    default:
      return "CUPTI overhead";
  }
}

uint32_t marker_thread(const CUpti_ActivityMarker2& m) {
  return m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m.objectId.pt.threadId : 0u;
}

}  // namespace

std::string_view strip_version_suffix(std::string_view name) {
  const size_t v = name.rfind("_v");
  if (v == std::string_view::npos || v + 2 >= name.size()) return name;
  for (size_t i = v + 2; i < name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return name;
  return name.substr(0, v);
}

RunAssembler::RunAssembler(TraceSink& sink, Options options)
    : sink_(sink), options_(std::move(options)) {
  if (options_.batch_records == 0) options_.batch_records = 1;
}

StringId RunAssembler::intern(std::string_view text) {
  if (text.empty()) return storage::kNoString;
  auto it = names_.find(std::string(text));
  if (it != names_.end()) return it->second;
  const StringId id = sink_.intern(text);
  names_.emplace(std::string(text), id);
  return id;
}

StringId RunAssembler::api_name(ApiDomain domain, uint32_t cbid) {
  const uint64_t key = (static_cast<uint64_t>(domain) << 32) | cbid;
  auto it = api_names_.find(key);
  if (it != api_names_.end()) return it->second;
  const char* name = nullptr;
  const CUpti_CallbackDomain cb_domain =
      domain == ApiDomain::kRuntime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
  std::string text;
  if (cuptiGetCallbackName(cb_domain, cbid, &name) == CUPTI_SUCCESS && name != nullptr)
    text = strip_version_suffix(name);
  else
    text = (domain == ApiDomain::kRuntime ? "runtime API " : "driver API ") + std::to_string(cbid);
  const StringId id = intern(text);
  api_names_.emplace(key, id);
  return id;
}

void RunAssembler::add(const CUpti_Activity& record) {
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      add_kernel(reinterpret_cast<const CUpti_ActivityKernel10&>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      add_memcpy(reinterpret_cast<const CUpti_ActivityMemcpy6&>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      add_memset(reinterpret_cast<const CUpti_ActivityMemset4&>(record));
      break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
      add_api(reinterpret_cast<const CUpti_ActivityAPI&>(record), ApiDomain::kRuntime);
      break;
    case CUPTI_ACTIVITY_KIND_DRIVER:
      add_api(reinterpret_cast<const CUpti_ActivityAPI&>(record), ApiDomain::kDriver);
      break;
    case CUPTI_ACTIVITY_KIND_MARKER:
      add_marker(reinterpret_cast<const CUpti_ActivityMarker2&>(record));
      break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      add_sync(reinterpret_cast<const CUpti_ActivitySynchronization2&>(record));
      break;
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      add_overhead(reinterpret_cast<const CUpti_ActivityOverhead3&>(record));
      break;
    default:
      ++stats_.other_records;
      break;
  }
}

void RunAssembler::add_kernel(const CUpti_ActivityKernel10& k) {
  if (!timed(k.start, k.end)) {
    ++stats_.untimed_records;
    return;
  }
  KernelRecord r;
  r.start_ns = ns(k.start);
  r.end_ns = ns(k.end);
  r.device = k.deviceId;
  r.stream = k.streamId;
  r.correlation_id = k.correlationId;
  r.name = intern(k.name != nullptr ? std::string_view(k.name) : std::string_view("(unnamed)"));
  r.grid = {dim(k.gridX), dim(k.gridY), dim(k.gridZ)};
  r.block = {dim(k.blockX), dim(k.blockY), dim(k.blockZ)};
  r.registers = k.registersPerThread;
  r.static_smem = bytes(k.staticSharedMemory);
  r.dynamic_smem = bytes(k.dynamicSharedMemory);
  kernels_.push_back(r);
  kernel_graph_nodes_.push_back(k.graphNodeId);
}

// Memcpy and memset records differ only in their kind; both become one MemopRecord.
template <typename Activity>
void RunAssembler::add_memop(const Activity& m, MemopKind kind, CopyKind copy) {
  if (!timed(m.start, m.end)) {
    ++stats_.untimed_records;
    return;
  }
  MemopRecord r;
  r.start_ns = ns(m.start);
  r.end_ns = ns(m.end);
  r.device = m.deviceId;
  r.stream = m.streamId;
  r.correlation_id = m.correlationId;
  r.bytes = m.bytes;
  r.kind = kind;
  r.copy_kind = copy;
  memop_batch_.push_back(r);
  if (memop_batch_.size() >= options_.batch_records) flush_memops();
}

void RunAssembler::add_memcpy(const CUpti_ActivityMemcpy6& m) {
  add_memop(m, MemopKind::kMemcpy, copy_kind(m.copyKind));
}

void RunAssembler::add_memset(const CUpti_ActivityMemset4& m) {
  add_memop(m, MemopKind::kMemset, CopyKind::kUnknown);
}

void RunAssembler::add_api(const CUpti_ActivityAPI& a, ApiDomain domain) {
  if (!timed(a.start, a.end)) {
    ++stats_.untimed_records;
    return;
  }
  ApiCallRecord r;
  r.start_ns = ns(a.start);
  r.end_ns = ns(a.end);
  r.thread_id = a.threadId;
  r.correlation_id = a.correlationId;
  r.name = api_name(domain, a.cbid);
  r.domain = domain;
  // A runtime call and the driver call it makes may share a correlation id: keep the outer one.
  auto [it, inserted] = launches_.try_emplace(a.correlationId, LaunchPoint{a.threadId, r.start_ns});
  if (!inserted && r.start_ns < it->second.t_ns) it->second = LaunchPoint{a.threadId, r.start_ns};
  api_batch_.push_back(r);
  if (api_batch_.size() >= options_.batch_records) flush_api_calls();
}

void RunAssembler::add_marker(const CUpti_ActivityMarker2& m) {
  const uint32_t flags = static_cast<uint32_t>(m.flags);
  if (m.timestamp == 0) {
    ++stats_.untimed_records;
    return;
  }
  const int64_t t = ns(m.timestamp);
  if (flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    auto it = open_markers_.find(m.id);
    if (it == open_markers_.end()) {
      ++stats_.unmatched_marker_ends;
      return;
    }
    const OpenMarker open = it->second;
    open_markers_.erase(it);
    const int64_t end = std::max(t, open.start_ns);
    add_range(RangeRecord{open.start_ns, end, open.thread_id, open.name, RangeKind::kNvtx, 0});
    if (open.is_op) op_ranges_.push_back(OpRange{open.thread_id, open.start_ns, end, open.name});
    if (open.is_iteration)
      iteration_ranges_.push_back(OpRange{open.thread_id, open.start_ns, end, open.name});
    return;
  }
  if (!(flags & (CUPTI_ACTIVITY_FLAG_MARKER_START | CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS))) {
    ++stats_.other_records;  // NVTX synchronization markers
    return;
  }
  const std::string_view name = m.name != nullptr ? m.name : "";
  const std::string_view domain = m.domain != nullptr ? m.domain : "";
  const bool ours = domain == options_.nvtx_domain;
  // Ranges of other named domains keep their domain in the name, so views can tell them apart.
  const StringId id = (ours || domain.empty())
                          ? intern(name)
                          : intern(std::string(domain) + ": " + std::string(name));
  const uint32_t thread = marker_thread(m);
  if (flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    const bool is_iteration = ours && name.starts_with(options_.iteration_prefix);
    open_markers_[m.id] = OpenMarker{t, thread, id, ours && !is_iteration, is_iteration};
  } else {
    add_range(RangeRecord{t, t, thread, id, RangeKind::kNvtx, 0});
  }
}

void RunAssembler::add_sync(const CUpti_ActivitySynchronization2& s) {
  if (!timed(s.start, s.end)) {
    ++stats_.untimed_records;
    return;
  }
  // The waiting thread is that of the API call with the same correlation id, which may arrive in
  // a later buffer: resolved in finish().
  syncs_.push_back(PendingSync{s.correlationId, ns(s.start), ns(s.end), intern(sync_name(s.type))});
}

void RunAssembler::add_overhead(const CUpti_ActivityOverhead3& o) {
  if (!timed(o.start, o.end)) {
    ++stats_.untimed_records;
    return;
  }
  const uint32_t thread =
      o.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? o.objectId.pt.threadId : 0u;
  ++stats_.overheads;
  add_range(RangeRecord{ns(o.start), ns(o.end), thread, intern(overhead_name(o.overheadKind)),
                        RangeKind::kTracerOverhead, 0});
}

void RunAssembler::add_range(const RangeRecord& r) {
  range_batch_.push_back(r);
  if (range_batch_.size() >= options_.batch_records) flush_ranges();
}

void RunAssembler::add_graph_nodes(std::span<const GraphNodeEvent> events) {
  for (const GraphNodeEvent& e : events) {
    if (e.kind == GraphNodeEvent::Kind::kCreated)
      graph_nodes_created_[e.node_id] = LaunchPoint{e.thread_id, e.t_ns};
    else
      graph_nodes_cloned_[e.node_id] = e.original_id;
  }
}

void RunAssembler::flush_api_calls() {
  if (api_batch_.empty()) return;
  sink_.insert_api_calls(api_batch_);
  stats_.api_calls += api_batch_.size();
  api_batch_.clear();
}

void RunAssembler::flush_ranges() {
  if (range_batch_.empty()) return;
  sink_.insert_ranges(range_batch_);
  stats_.ranges += range_batch_.size();
  range_batch_.clear();
}

void RunAssembler::flush_memops() {
  if (memop_batch_.empty()) return;
  sink_.insert_memops(memop_batch_);
  stats_.memops += memop_batch_.size();
  memop_batch_.clear();
}

AssemblyStats RunAssembler::finish() {
  for (const PendingSync& s : syncs_) {
    auto it = launches_.find(s.correlation_id);
    const uint32_t thread = it != launches_.end() ? it->second.thread_id : 0u;
    add_range(RangeRecord{s.start_ns, s.end_ns, thread, s.name, RangeKind::kSync, 0});
  }
  stats_.syncs += syncs_.size();
  syncs_.clear();
  stats_.unclosed_markers += open_markers_.size();
  open_markers_.clear();

  // Each kernel's launch point: for graph replays (which happen outside any op), where the
  // graph's node was created during capture; else the API call with the kernel's correlation id.
  // Instantiation clones every node and reports the clone as created too, so a node's clone
  // chain is followed back to the original before looking up its creation.
  std::vector<LaunchPoint> points(kernels_.size());
  std::vector<bool> has_point(kernels_.size(), false);
  for (size_t i = 0; i < kernels_.size(); ++i) {
    if (uint64_t node = kernel_graph_nodes_[i]; node != 0) {
      ++stats_.graph_kernels;
      for (int hops = 0; hops < 16; ++hops) {
        auto original = graph_nodes_cloned_.find(node);
        if (original == graph_nodes_cloned_.end()) break;
        node = original->second;
      }
      if (auto c = graph_nodes_created_.find(node); c != graph_nodes_created_.end()) {
        points[i] = c->second;
        has_point[i] = true;
      }
    }
    auto launch = launches_.find(kernels_[i].correlation_id);
    if (launch == launches_.end()) {
      ++stats_.kernels_without_launch;
    } else if (!has_point[i]) {
      points[i] = launch->second;
      has_point[i] = true;
    }
  }
  const std::vector<StringId> ops = innermost_ranges(op_ranges_, points);
  for (size_t i = 0; i < kernels_.size(); ++i)
    kernels_[i].op = has_point[i] ? ops[i] : storage::kNoString;
  if (!options_.iteration_ops.empty()) ops_by_launch_order(points, has_point);
  for (const KernelRecord& k : kernels_)
    if (k.op == storage::kNoString) ++stats_.kernels_without_op;
  for (size_t begin = 0; begin < kernels_.size(); begin += options_.batch_records) {
    const size_t n = std::min(options_.batch_records, kernels_.size() - begin);
    sink_.insert_kernels(std::span<const KernelRecord>(kernels_).subspan(begin, n));
    stats_.kernels += n;
  }
  kernels_.clear();
  kernel_graph_nodes_.clear();
  flush_api_calls();
  flush_ranges();
  flush_memops();
  return stats_;
}

void RunAssembler::ops_by_launch_order(const std::vector<LaunchPoint>& points,
                                       const std::vector<bool>& has_point) {
  // The iteration of each kernel without an op (iteration names are unique within a run).
  const std::vector<StringId> iteration = innermost_ranges(iteration_ranges_, points);
  std::unordered_map<StringId, std::vector<size_t>> by_iteration;
  for (size_t i = 0; i < kernels_.size(); ++i) {
    if (!has_point[i] || kernels_[i].op != storage::kNoString) continue;
    if (iteration[i] != storage::kNoString) by_iteration[iteration[i]].push_back(i);
  }
  if (by_iteration.empty()) return;
  std::unordered_map<StringId, std::string> text;
  for (const auto& [s, id] : names_) text.emplace(id, s);
  std::vector<std::pair<int64_t, StringId>> order;  // iterations by start, for the report
  for (const OpRange& r : iteration_ranges_)
    if (by_iteration.count(r.name)) order.emplace_back(r.start_ns, r.name);
  std::sort(order.begin(), order.end());
  for (const auto& [start, it] : order) {
    std::vector<size_t>& ks = by_iteration[it];
    // Launch order: correlation ids count the process's API calls.
    std::sort(ks.begin(), ks.end(), [&](size_t a, size_t b) {
      return kernels_[a].correlation_id < kernels_[b].correlation_id;
    });
    std::vector<std::string> names;
    for (size_t k : ks) names.push_back(text[kernels_[k].name]);
    std::string why;
    const auto ops = profiler::ops_by_launch_order(names, options_.iteration_ops, &why);
    if (!ops) {
      if (stats_.iterations_ops_unmatched++ == 0)
        stats_.ops_unmatched_reason = text[it] + ": " + why;
      continue;
    }
    ++stats_.iterations_ops_by_order;
    for (size_t j = 0; j < ks.size(); ++j) kernels_[ks[j]].op = intern((*ops)[j]);
  }
}

bool decode_buffer(uint8_t* buffer, std::size_t valid_bytes, RunAssembler& assembler) {
  CUpti_Activity* record = nullptr;
  for (;;) {
    const CUptiResult status = cuptiActivityGetNextRecord(buffer, valid_bytes, &record);
    if (status == CUPTI_ERROR_MAX_LIMIT_REACHED) return true;
    if (status != CUPTI_SUCCESS) return false;
    assembler.add(*record);
  }
}

}  // namespace fusionscope::profiler
