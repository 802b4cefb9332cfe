// Links a trace's records to each other: GPU work to the API call that launched it (correlation
// ids, checked against the `ac2g` flows), each kernel to the operator that launched it, and GPU
// work to the launching process.
//
// The linker is told the facts it links by as the trace is read (add_*), in file order, and
// keeps them in spilling lists (spill.h): past a few MiB each they go to a temporary file, so
// linking a trace of any size costs bounded memory. link() then joins them by sorting and
// merging, and hands back what each record gains, record by record in the order they were
// added, to whoever holds the records (in memory, or themselves spilled by a streamed import).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "fusionscope/interchange/torch_trace_import.h"

namespace fusionscope::interchange::detail {

// One end of an `ac2g` flow. `lane` is the CPU thread for a start, the stream for a finish.
struct FlowEnd {
  uint64_t id = 0;
  uint32_t lane = 0;
  uint32_t order = 0;  // its place among the trace's flow ends of its kind, in file order
  int64_t ts_ns = 0;
};

// Records a counted, non-fatal finding ("3 kernels have no launching API call").
using NoteFn = std::function<void(const std::string& reason, uint64_t count)>;

// What linking gives the n-th kernel, memory operation or API call (n: the order of add_*).
struct KernelLink {
  uint64_t index = 0;
  uint32_t correlation_id = 0;  // its own, or its flow's when it had none
  uint32_t pid = 0;             // the process of its launching call; 0 when there is none
  storage::StringId op = storage::kNoString;  // the operator (or annotation) that launched it
};
struct MemopLink {
  uint64_t index = 0;
  uint32_t correlation_id = 0;
  uint32_t pid = 0;
};
struct CallLink {
  uint64_t index = 0;  // counting every API call added
  uint32_t correlation_id = 0;
};

// Who holds the records: told, in order of index, what each gains.
class LinkResults {
 public:
  virtual ~LinkResults() = default;
  virtual void kernel(const KernelLink& link) = 0;  // every kernel, indexes 0, 1, 2, ...
  virtual void memop(const MemopLink& link) = 0;    // every memory operation
  // Only the API calls added without a correlation id, in order.
  virtual void unlinked_call(const CallLink& link) = 0;
};

class TraceLinker {
 public:
  // Each list of facts keeps up to `memory_bytes` in memory, the rest in anonymous files in
  // `spill_dir` (or the system's temporary directory).
  TraceLinker(const std::filesystem::path& spill_dir, size_t memory_bytes);
  ~TraceLinker();
  TraceLinker(const TraceLinker&) = delete;
  TraceLinker& operator=(const TraceLinker&) = delete;

  // While the trace is read, in file order. Times on one clock (shifting every time by the same
  // amount later changes nothing).
  void add_kernel(const storage::KernelRecord& k);
  void add_memop(const storage::MemopRecord& m);
  void add_api_call(const storage::ApiCallRecord& a);
  void add_flow_start(const FlowEnd& f);
  void add_flow_finish(const FlowEnd& f);
  // Operators and (other than ProfilerStep#N) user annotations: what kernels are attributed to.
  void add_operator(const storage::RangeRecord& r);
  void add_annotation(const storage::RangeRecord& r);

  // Once, after the last add_*:
  // - correlation ids that only the flows carry fill records without one; disagreements between
  //   a record's `args.correlation` and its flow are counted;
  // - linked flows and launched kernels are counted in `stats`;
  // - each kernel's op: the innermost cpu_op on the launching thread that encloses the launching
  //   API call (the first in the file of its correlation id); failing that, the innermost user
  //   annotation other than a ProfilerStep;
  // - each kernel's and memory operation's pid: the process of that launching call.
  // `checkpoint`, when given, is called every few ten thousand records (to report progress, or
  // stop by throwing).
  void link(ImportStats& stats, const NoteFn& note, LinkResults& results,
            const std::function<void()>& checkpoint = {});

 private:
  struct Lists;
  size_t memory_bytes_;
  std::unique_ptr<Lists> lists_;
  uint64_t kernels_ = 0, memops_ = 0, calls_ = 0, nodes_ = 0;
};

}  // namespace fusionscope::interchange::detail
