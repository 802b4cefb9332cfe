// What the run's description needs of a trace's ranges, gathered range by range, so that a
// streamed import can hand the ranges themselves to the session as it reads them and keep only
// this: the profiler steps' span, the processes that hold CPU ranges, the earliest start. (What
// linking needs of them, the linker keeps: trace_linker.h.)
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "fusionscope/storage/records.h"

namespace fusionscope::interchange::detail {

class RangeFacts {
 public:
  // `profiler_step`: whether the range is named ProfilerStep#N (is_profiler_step()).
  void add(const storage::RangeRecord& r, bool profiler_step);

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
  int steps_ = 0;
  int64_t steps_first_ = 0, steps_last_ = 0;
  std::vector<uint32_t> cpu_pids_;
  uint64_t count_ = 0;
  int64_t earliest_ = 0;
};

// Whether a user annotation named `name` is a profiler step (ProfilerStep#N).
inline bool is_profiler_step(std::string_view name) {
  return name.starts_with("ProfilerStep#");
}

}  // namespace fusionscope::interchange::detail
