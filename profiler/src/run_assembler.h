// Turns the CUPTI activity records of one run into session records. API calls, memory operations
// and NVTX ranges go to the sink in batches as buffers arrive; kernels are held until the end of
// the run, when their launch and the NVTX range around it are both known, and then linked to
// their op and written. Runs on the tracer's worker thread (tests drive it directly).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <cupti.h>

#include "fusionscope/profiler/op_order.h"
#include "fusionscope/profiler/trace_sink.h"
#include "op_linker.h"

namespace fusionscope::profiler {

// A CUDA graph node seen through CUPTI's resource callbacks: created (during stream capture, on
// the launching thread, inside the op's NVTX range) or cloned from another node (instantiation).
// Kernels replayed from a graph carry the node's id; this is how they find their op.
struct GraphNodeEvent {
  enum class Kind : uint8_t { kCreated, kCloned };
  Kind kind = Kind::kCreated;
  uint64_t node_id = 0;
  uint64_t original_id = 0;  // kCloned: the node it was cloned from
  uint32_t thread_id = 0;    // kCreated
  int64_t t_ns = 0;          // kCreated
};

struct AssemblyStats {
  std::size_t kernels = 0, api_calls = 0, ranges = 0, memops = 0, syncs = 0, overheads = 0;
  std::size_t kernels_without_launch = 0;
  std::size_t kernels_without_op = 0;
  std::size_t untimed_records = 0;        // CUPTI gave no timestamps: skipped
  std::size_t unmatched_marker_ends = 0;  // an NVTX end with no start seen in this run
  std::size_t unclosed_markers = 0;       // an NVTX start still open when the run ended
  std::size_t other_records = 0;          // kinds this run does not store
  std::size_t graph_kernels = 0;          // kernels replayed from a CUDA graph
  // Options::iteration_ops: iterations whose kernels took the plan's ops by launch order, those
  // that did not fit it, and why the first of those did not.
  std::size_t iterations_ops_by_order = 0;
  std::size_t iterations_ops_unmatched = 0;
  std::string ops_unmatched_reason;
};

class RunAssembler {
 public:
  struct Options {
    std::string nvtx_domain = "fusionscope";
    std::string iteration_prefix = "iteration";
    std::size_t batch_records = 8192;
    // When not empty: kernels launched inside an iteration range but outside every op range take
    // these ops by their launch order within the iteration (op_order.h), e.g. a torch.compile'd
    // module, which opens no range per op.
    std::vector<PlannedOp> iteration_ops;
  };

  RunAssembler(TraceSink& sink, Options options);

  void add(const CUpti_Activity& record);
  void add_graph_nodes(std::span<const GraphNodeEvent> events);
  // After the run's last record: links kernels to launches and ops, writes everything held back.
  AssemblyStats finish();
  const AssemblyStats& stats() const { return stats_; }

 private:
  struct OpenMarker {
    int64_t start_ns = 0;
    uint32_t thread_id = 0;
    storage::StringId name = storage::kNoString;
    bool is_op = false;
    bool is_iteration = false;
  };
  struct PendingSync {
    uint32_t correlation_id = 0;
    int64_t start_ns = 0, end_ns = 0;
    storage::StringId name = storage::kNoString;
  };

  void add_kernel(const CUpti_ActivityKernel10& k);
  void add_memcpy(const CUpti_ActivityMemcpy6& m);
  void add_memset(const CUpti_ActivityMemset4& m);
  template <typename Activity>
  void add_memop(const Activity& m, storage::MemopKind kind, storage::CopyKind copy);
  void add_api(const CUpti_ActivityAPI& a, storage::ApiDomain domain);
  void add_marker(const CUpti_ActivityMarker2& m);
  void add_sync(const CUpti_ActivitySynchronization2& s);
  void add_overhead(const CUpti_ActivityOverhead3& o);
  void add_range(const storage::RangeRecord& r);
  void ops_by_launch_order(const std::vector<LaunchPoint>& points,
                           const std::vector<bool>& has_point);

  storage::StringId intern(std::string_view text);
  storage::StringId api_name(storage::ApiDomain domain, uint32_t cbid);
  void flush_api_calls();
  void flush_ranges();
  void flush_memops();

  TraceSink& sink_;
  Options options_;
  AssemblyStats stats_;

  std::unordered_map<std::string, storage::StringId> names_;
  std::unordered_map<uint64_t, storage::StringId> api_names_;  // (domain << 32 | cbid)

  std::vector<storage::KernelRecord> kernels_;          // held until finish()
  std::vector<uint64_t> kernel_graph_nodes_;            // parallel to kernels_
  std::unordered_map<uint32_t, LaunchPoint> launches_;  // correlation id -> the API call
  std::unordered_map<uint64_t, LaunchPoint> graph_nodes_created_;
  std::unordered_map<uint64_t, uint64_t> graph_nodes_cloned_;  // clone -> original
  std::unordered_map<uint32_t, OpenMarker> open_markers_;      // by marker id
  std::vector<OpRange> op_ranges_;
  std::vector<OpRange> iteration_ranges_;
  std::vector<PendingSync> syncs_;

  std::vector<storage::ApiCallRecord> api_batch_;
  std::vector<storage::RangeRecord> range_batch_;
  std::vector<storage::MemopRecord> memop_batch_;
};

// Decodes every record of a completed CUPTI buffer into `assembler`. Returns false when the
// buffer ended on a malformed record (the rest of that buffer is lost).
bool decode_buffer(uint8_t* buffer, std::size_t valid_bytes, RunAssembler& assembler);

// A CUPTI callback name without its version suffix: "cudaLaunchKernel_v7000" -> "cudaLaunchKernel".
std::string_view strip_version_suffix(std::string_view name);

}  // namespace fusionscope::profiler
