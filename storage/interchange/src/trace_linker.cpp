#include "trace_linker.h"

#include <algorithm>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace fusionscope::interchange::detail {
namespace {

using storage::RangeKind;
using storage::StringId;

// Flow ends by where they sit, sorted by (lane, ts): the ids of the flows at a place are an
// equal range. (Sorted vectors: a trace holds millions of flows, and maps of them cost more in
// allocations than in lookups.)
struct FlowAt {
  uint32_t lane;
  int64_t ts;
  uint64_t id;
};
using FlowIndex = std::vector<FlowAt>;

bool place_less(const FlowAt& a, const FlowAt& b) {
  return a.lane != b.lane ? a.lane < b.lane : a.ts < b.ts;
}

FlowIndex index_flows(const std::vector<FlowEnd>& ends) {
  FlowIndex index;
  index.reserve(ends.size());
  for (const auto& e : ends) index.push_back({e.lane, e.ts_ns, e.id});
  std::stable_sort(index.begin(), index.end(), place_less);
  return index;
}

std::pair<FlowIndex::const_iterator, FlowIndex::const_iterator> flows_at(const FlowIndex& flows,
                                                                         uint32_t lane,
                                                                         int64_t ts) {
  return std::equal_range(flows.begin(), flows.end(), FlowAt{lane, ts, 0}, place_less);
}

// Checks one record against the flow ends at its start. Returns the number of records whose id
// came from the flow (0 or 1); counts a disagreement in `mismatches`.
template <typename Record>
int reconcile(Record& record, uint32_t lane, const FlowIndex& flows, uint64_t& mismatches) {
  const auto [first, last] = flows_at(flows, lane, record.start_ns);
  if (first == last) return 0;
  if (record.correlation_id == 0) {
    if (last - first == 1 && first->id != 0 && first->id <= UINT32_MAX) {
      record.correlation_id = static_cast<uint32_t>(first->id);
      return 1;
    }
    return 0;
  }
  if (std::none_of(first, last, [&](const FlowAt& f) { return f.id == record.correlation_id; })) {
    ++mismatches;
  }
  return 0;
}

// Where records of each correlation id sit: (id, lane, start), sorted.
struct IdAt {
  uint32_t id;
  uint32_t lane;
  int64_t start;
  friend bool operator<(const IdAt& a, const IdAt& b) {
    return std::tie(a.id, a.lane, a.start) < std::tie(b.id, b.lane, b.start);
  }
  friend bool operator==(const IdAt&, const IdAt&) = default;
};

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
  std::vector<IdAt> api_at, gpu_at;
  api_at.reserve(trace.api_calls.size());
  gpu_at.reserve(trace.kernels.size() + trace.memops.size());
  for (const auto& a : trace.api_calls) {
    if (a.correlation_id != 0) api_at.push_back({a.correlation_id, a.thread_id, a.start_ns});
  }
  for (const auto& k : trace.kernels) {
    if (k.correlation_id != 0) gpu_at.push_back({k.correlation_id, k.stream, k.start_ns});
  }
  for (const auto& m : trace.memops) {
    if (m.correlation_id != 0) gpu_at.push_back({m.correlation_id, m.stream, m.start_ns});
  }
  std::sort(api_at.begin(), api_at.end());
  std::sort(gpu_at.begin(), gpu_at.end());
  auto lands_on = [](const std::vector<IdAt>& at, uint64_t id, const FlowEnd& end) {
    if (id > UINT32_MAX) return false;
    return std::binary_search(at.begin(), at.end(),
                              IdAt{static_cast<uint32_t>(id), end.lane, end.ts_ns});
  };

  // Flow starts by id (the first of each id, as a map's emplace would keep).
  std::vector<const FlowEnd*> start_by_id;
  start_by_id.reserve(starts.size());
  for (const auto& st : starts) start_by_id.push_back(&st);
  std::stable_sort(start_by_id.begin(), start_by_id.end(),
                   [](const FlowEnd* a, const FlowEnd* b) { return a->id < b->id; });
  uint64_t linked = 0, broken = 0, orphan_finishes = 0;
  for (const auto& f : finishes) {
    const auto it = std::lower_bound(start_by_id.begin(), start_by_id.end(), f.id,
                                     [](const FlowEnd* a, uint64_t id) { return a->id < id; });
    if (it == start_by_id.end() || (*it)->id != f.id) {
      ++orphan_finishes;
    } else if (lands_on(api_at, f.id, **it) && lands_on(gpu_at, f.id, f)) {
      ++linked;
    } else {
      ++broken;
    }
  }
  trace.stats.flows_linked = linked;
  note("ac2g flows whose ends are not at an API call and GPU work of their id", broken);
  note("ac2g flow finishes without a start", orphan_finishes);

  // API calls per correlation id: the ids of api_at, sorted, with repeats.
  auto calls_of = [&api_at](uint32_t id) {
    const auto [first, last] =
        std::equal_range(api_at.begin(), api_at.end(), IdAt{id, 0, 0},
                         [](const IdAt& a, const IdAt& b) { return a.id < b.id; });
    return static_cast<size_t>(last - first);
  };
  uint64_t launched = 0, unlaunched = 0, ambiguous = 0;
  for (const auto& k : trace.kernels) {
    const size_t calls = k.correlation_id == 0 ? 0 : calls_of(k.correlation_id);
    if (calls == 0) {
      ++unlaunched;
    } else if (calls == 1) {
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

  // The launching call of each correlation id (the first in the file when several share one).
  std::vector<const storage::ApiCallRecord*> launches;
  launches.reserve(trace.api_calls.size());
  for (const auto& a : trace.api_calls) {
    if (a.correlation_id != 0) launches.push_back(&a);
  }
  std::stable_sort(launches.begin(), launches.end(), [](const auto* a, const auto* b) {
    return a->correlation_id < b->correlation_id;
  });
  auto launch_of = [&launches](uint32_t id) -> const storage::ApiCallRecord* {
    const auto it = std::lower_bound(
        launches.begin(), launches.end(), id,
        [](const storage::ApiCallRecord* a, uint32_t v) { return a->correlation_id < v; });
    return it != launches.end() && (*it)->correlation_id == id ? *it : nullptr;
  };
  auto innermost = [](const auto& by_thread, const storage::ApiCallRecord& call) {
    const auto it = by_thread.find(call.thread_id);
    return it == by_thread.end() ? storage::kNoString
                                 : it->second.innermost(call.start_ns, call.end_ns);
  };
  uint64_t with_op = 0, from_annotation = 0;
  for (auto& k : trace.kernels) {
    const storage::ApiCallRecord* launch =
        k.correlation_id == 0 ? nullptr : launch_of(k.correlation_id);
    if (launch == nullptr) continue;
    k.op = innermost(ops, *launch);
    if (k.op != storage::kNoString) {
      ++with_op;
    } else if ((k.op = innermost(annotations, *launch)) != storage::kNoString) {
      ++from_annotation;
    }
  }
  trace.stats.kernels_with_op = with_op;
  note("kernels outside any cpu_op, attributed to their innermost user annotation",
       from_annotation);
}

void assign_launching_processes(TorchTrace& trace) {
  std::vector<std::pair<uint32_t, uint32_t>> pid_of;  // (correlation id, pid), first per id
  pid_of.reserve(trace.api_calls.size());
  for (const auto& a : trace.api_calls)
    if (a.correlation_id != 0) pid_of.emplace_back(a.correlation_id, a.pid);
  std::stable_sort(pid_of.begin(), pid_of.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  auto launcher = [&pid_of](uint32_t id) -> uint32_t {
    if (id == 0) return 0;
    const auto it = std::lower_bound(pid_of.begin(), pid_of.end(), id,
                                     [](const auto& p, uint32_t v) { return p.first < v; });
    return it != pid_of.end() && it->first == id ? it->second : 0;
  };
  for (auto& k : trace.kernels) k.pid = launcher(k.correlation_id);
  for (auto& m : trace.memops) m.pid = launcher(m.correlation_id);
}

}  // namespace fusionscope::interchange::detail
