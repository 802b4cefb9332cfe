#include "range_facts.h"

#include <algorithm>

namespace fusionscope::interchange::detail {

using storage::RangeKind;

void RangeNesting::build() {
  std::sort(nodes_.begin(), nodes_.end(), [](const Node& a, const Node& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  std::vector<int> open;
  for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
    while (!open.empty() && nodes_[open.back()].end <= nodes_[i].start) open.pop_back();
    nodes_[i].parent = open.empty() ? -1 : open.back();
    open.push_back(i);
  }
}

// Every range that contains the interval is an ancestor of the last range starting at or before
// `start`, so walking up from that one finds the innermost first.
storage::StringId RangeNesting::innermost(int64_t start, int64_t end) const {
  auto it = std::upper_bound(nodes_.begin(), nodes_.end(), start,
                             [](int64_t t, const Node& n) { return t < n.start; });
  int i = static_cast<int>(it - nodes_.begin()) - 1;
  // Bounded walk: a malformed (crossing) nesting must not make this quadratic.
  for (int steps = 0; i >= 0 && steps < 4096; ++steps) {
    const Node& n = nodes_[i];
    if (n.start <= start && n.end >= end) return n.name;
    i = n.parent;
  }
  return storage::kNoString;
}

RangeNesting& RangeFacts::nesting(std::unordered_map<uint32_t, RangeNesting>& by_thread,
                                  uint32_t thread, RangeNesting*& last, uint32_t& last_thread) {
  // Ranges come thread after thread in long runs: the last thread's nesting is the usual one.
  if (last == nullptr || last_thread != thread) {
    last = &by_thread[thread];  // node-based: the address stays valid as the map grows
    last_thread = thread;
  }
  return *last;
}

void RangeFacts::add(const storage::RangeRecord& r, std::string_view name) {
  earliest_ = count_ == 0 ? r.start_ns : std::min(earliest_, r.start_ns);
  ++count_;
  if (r.kind == RangeKind::kCpuOp) {
    nesting(ops_, r.thread_id, last_op_, last_op_thread_).add(r);
  } else if (r.kind == RangeKind::kUserAnnotation) {
    if (name.starts_with("ProfilerStep#")) {
      steps_first_ = steps_ == 0 ? r.start_ns : std::min(steps_first_, r.start_ns);
      steps_last_ = steps_ == 0 ? r.end_ns : std::max(steps_last_, r.end_ns);
      ++steps_;
    } else {
      nesting(annotations_, r.thread_id, last_annotation_, last_annotation_thread_).add(r);
    }
  }
  if (r.kind != RangeKind::kGpuAnnotation) {
    const auto it = std::lower_bound(cpu_pids_.begin(), cpu_pids_.end(), r.pid);
    if (it == cpu_pids_.end() || *it != r.pid) cpu_pids_.insert(it, r.pid);
  }
}

void RangeFacts::build() {
  for (auto& [thread, nesting] : ops_) nesting.build();
  for (auto& [thread, nesting] : annotations_) nesting.build();
}

}  // namespace fusionscope::interchange::detail
