#include "trace_linker.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace fusionscope::interchange::detail {
namespace {

using storage::RangeKind;
using storage::StringId;

// Flow ends by where they sit: (lane, ts) -> the flow ids there.
using FlowIndex = std::map<std::pair<uint32_t, int64_t>, std::vector<uint64_t>>;

FlowIndex index_flows(const std::vector<FlowEnd>& ends) {
  FlowIndex index;
  for (const auto& e : ends) index[{e.lane, e.ts_ns}].push_back(e.id);
  return index;
}

// Checks one record against the flow ends at its start. Returns the number of records whose id
// came from the flow (0 or 1); counts a disagreement in `mismatches`.
template <typename Record>
int reconcile(Record& record, uint32_t lane, const FlowIndex& flows, uint64_t& mismatches) {
  const auto it = flows.find({lane, record.start_ns});
  if (it == flows.end()) return 0;
  const auto& ids = it->second;
  if (record.correlation_id == 0) {
    if (ids.size() == 1 && ids[0] != 0 && ids[0] <= UINT32_MAX) {
      record.correlation_id = static_cast<uint32_t>(ids[0]);
      return 1;
    }
    return 0;
  }
  if (std::find(ids.begin(), ids.end(), record.correlation_id) == ids.end()) ++mismatches;
  return 0;
}

// Ranges of one thread, sorted by start (enclosing first on ties), each with its parent: the
// innermost earlier range still open when it starts.
class RangeNesting {
 public:
  struct Node {
    int64_t start = 0, end = 0;
    StringId name = 0;
    int parent = -1;
  };

  void add(const storage::RangeRecord& r) { nodes_.push_back({r.start_ns, r.end_ns, r.name, -1}); }

  void build() {
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

  // The innermost range containing [start, end], or kNoString. Every range that contains the
  // interval is an ancestor of the last range starting at or before `start`, so walking up from
  // that one finds the innermost first.
  StringId innermost(int64_t start, int64_t end) const {
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

 private:
  std::vector<Node> nodes_;
};

}  // namespace

void link_correlations(TorchTrace& trace, const std::vector<FlowEnd>& starts,
                       const std::vector<FlowEnd>& finishes, const NoteFn& note) {
  const FlowIndex start_index = index_flows(starts);
  const FlowIndex finish_index = index_flows(finishes);

  uint64_t from_flow = 0, mismatches = 0;
  for (auto& k : trace.kernels) from_flow += reconcile(k, k.stream, finish_index, mismatches);
  for (auto& m : trace.memops) from_flow += reconcile(m, m.stream, finish_index, mismatches);
  for (auto& a : trace.api_calls) from_flow += reconcile(a, a.thread_id, start_index, mismatches);
  note("records without `args.correlation` that took their flow's id", from_flow);
  note("records whose `args.correlation` differs from the id of the flow at them (kept)",
       mismatches);

  // Where each correlation id sits: API calls by (thread, start), GPU work by (stream, start).
  std::unordered_map<uint32_t, std::vector<std::pair<uint32_t, int64_t>>> api_at, gpu_at;
  for (const auto& a : trace.api_calls) {
    if (a.correlation_id != 0) api_at[a.correlation_id].push_back({a.thread_id, a.start_ns});
  }
  for (const auto& k : trace.kernels) {
    if (k.correlation_id != 0) gpu_at[k.correlation_id].push_back({k.stream, k.start_ns});
  }
  for (const auto& m : trace.memops) {
    if (m.correlation_id != 0) gpu_at[m.correlation_id].push_back({m.stream, m.start_ns});
  }
  auto lands_on = [](const auto& at, uint64_t id, const FlowEnd& end) {
    if (id > UINT32_MAX) return false;
    const auto it = at.find(static_cast<uint32_t>(id));
    if (it == at.end()) return false;
    const std::pair<uint32_t, int64_t> where{end.lane, end.ts_ns};
    return std::find(it->second.begin(), it->second.end(), where) != it->second.end();
  };

  std::unordered_map<uint64_t, const FlowEnd*> start_by_id;
  for (const auto& s : starts) start_by_id.emplace(s.id, &s);
  uint64_t linked = 0, broken = 0, orphan_finishes = 0;
  for (const auto& f : finishes) {
    const auto s = start_by_id.find(f.id);
    if (s == start_by_id.end()) {
      ++orphan_finishes;
    } else if (lands_on(api_at, f.id, *s->second) && lands_on(gpu_at, f.id, f)) {
      ++linked;
    } else {
      ++broken;
    }
  }
  trace.stats.flows_linked = linked;
  note("ac2g flows whose ends are not at an API call and GPU work of their id", broken);
  note("ac2g flow finishes without a start", orphan_finishes);

  std::unordered_map<uint32_t, uint32_t> calls_per_id;
  for (const auto& a : trace.api_calls) {
    if (a.correlation_id != 0) ++calls_per_id[a.correlation_id];
  }
  uint64_t launched = 0, unlaunched = 0, ambiguous = 0;
  for (const auto& k : trace.kernels) {
    const auto it = calls_per_id.find(k.correlation_id);
    if (k.correlation_id == 0 || it == calls_per_id.end()) {
      ++unlaunched;
    } else if (it->second == 1) {
      ++launched;
    } else {
      ++ambiguous;
    }
  }
  trace.stats.kernels_launched = launched;
  note("kernels without a launching API call in the trace", unlaunched);
  note("kernels whose correlation id matches several API calls", ambiguous);
}

void attribute_ops(TorchTrace& trace, const NoteFn& note) {
  std::unordered_map<uint32_t, RangeNesting> ops, annotations;
  for (const auto& r : trace.ranges) {
    if (r.kind == RangeKind::kCpuOp) {
      ops[r.thread_id].add(r);
    } else if (r.kind == RangeKind::kUserAnnotation &&
               !std::string_view(trace.str(r.name)).starts_with("ProfilerStep#")) {
      annotations[r.thread_id].add(r);
    }
  }
  for (auto& [thread, nesting] : ops) nesting.build();
  for (auto& [thread, nesting] : annotations) nesting.build();

  std::unordered_map<uint32_t, const storage::ApiCallRecord*> launch_of;
  for (const auto& a : trace.api_calls) {
    if (a.correlation_id != 0) launch_of.emplace(a.correlation_id, &a);
  }
  auto innermost = [](const auto& by_thread, const storage::ApiCallRecord& call) {
    const auto it = by_thread.find(call.thread_id);
    return it == by_thread.end() ? storage::kNoString
                                 : it->second.innermost(call.start_ns, call.end_ns);
  };
  uint64_t with_op = 0, from_annotation = 0;
  for (auto& k : trace.kernels) {
    const auto launch = launch_of.find(k.correlation_id);
    if (k.correlation_id == 0 || launch == launch_of.end()) continue;
    k.op = innermost(ops, *launch->second);
    if (k.op != storage::kNoString) {
      ++with_op;
    } else if ((k.op = innermost(annotations, *launch->second)) != storage::kNoString) {
      ++from_annotation;
    }
  }
  trace.stats.kernels_with_op = with_op;
  note("kernels outside any cpu_op, attributed to their innermost user annotation",
       from_annotation);
}

}  // namespace fusionscope::interchange::detail
