// What linking and the run's description need of a trace's ranges, gathered range by range, so
// that a streamed import can hand the ranges themselves to the session as it reads them and keep
// only this: the operators and annotations that kernels are attributed to (start, end, name, by
// thread), the profiler steps' span, the processes that hold CPU ranges, the earliest start.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fusionscope/storage/records.h"

namespace fusionscope::interchange::detail {

// Ranges of one thread, sorted by start (enclosing first on ties), each with its parent: the
// innermost earlier range still open when it starts.
class RangeNesting {
 public:
  void add(const storage::RangeRecord& r) { nodes_.push_back({r.start_ns, r.end_ns, r.name, -1}); }
  // Sorts the ranges and links each to its parent; once, after the last add().
  void build();
  // The innermost range containing [start, end], or kNoString.
  storage::StringId innermost(int64_t start, int64_t end) const;

 private:
  struct Node {
    int64_t start = 0, end = 0;
    storage::StringId name = 0;
    int parent = -1;
  };
  std::vector<Node> nodes_;
};

class RangeFacts {
 public:
  // `name`: the range's name text.
  void add(const storage::RangeRecord& r, std::string_view name);
  // Builds the nestings; once, after the last add().
  void build();

  const std::unordered_map<uint32_t, RangeNesting>& ops() const { return ops_; }
  const std::unordered_map<uint32_t, RangeNesting>& annotations() const { return annotations_; }
  // ProfilerStep#N annotations: how many, the first start and the last end.
  int steps() const { return steps_; }
  int64_t steps_first() const { return steps_first_; }
  int64_t steps_last() const { return steps_last_; }
  // Processes of the CPU ranges (every kind but GPU annotations), sorted, without repeats.
  const std::vector<uint32_t>& cpu_pids() const { return cpu_pids_; }
  // Ranges added.
  uint64_t count() const { return count_; }
  // The earliest start of a range; false when there is none.
  bool earliest_start(int64_t& start) const {
    if (count_ > 0) start = earliest_;
    return count_ > 0;
  }

 private:
  RangeNesting& nesting(std::unordered_map<uint32_t, RangeNesting>& by_thread, uint32_t thread,
                        RangeNesting*& last, uint32_t& last_thread);

  std::unordered_map<uint32_t, RangeNesting> ops_, annotations_;
  RangeNesting* last_op_ = nullptr;  // the nesting of the thread of the last operator added
  uint32_t last_op_thread_ = 0;
  RangeNesting* last_annotation_ = nullptr;
  uint32_t last_annotation_thread_ = 0;
  int steps_ = 0;
  int64_t steps_first_ = 0, steps_last_ = 0;
  std::vector<uint32_t> cpu_pids_;
  uint64_t count_ = 0;
  int64_t earliest_ = 0;
};

}  // namespace fusionscope::interchange::detail
