#include "range_facts.h"

#include <algorithm>

namespace fusionscope::interchange::detail {

using storage::RangeKind;

void RangeFacts::add(const storage::RangeRecord& r, bool profiler_step) {
  earliest_ = count_ == 0 ? r.start_ns : std::min(earliest_, r.start_ns);
  ++count_;
  if (r.kind == RangeKind::kUserAnnotation && profiler_step) {
    steps_first_ = steps_ == 0 ? r.start_ns : std::min(steps_first_, r.start_ns);
    steps_last_ = steps_ == 0 ? r.end_ns : std::max(steps_last_, r.end_ns);
    ++steps_;
  }
  if (r.kind != RangeKind::kGpuAnnotation) {
    const auto it = std::lower_bound(cpu_pids_.begin(), cpu_pids_.end(), r.pid);
    if (it == cpu_pids_.end() || *it != r.pid) cpu_pids_.insert(it, r.pid);
  }
}

}  // namespace fusionscope::interchange::detail
