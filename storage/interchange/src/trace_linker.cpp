#include "trace_linker.h"

#include <optional>
#include <tuple>
#include <vector>

#include "spill.h"

namespace fusionscope::interchange::detail {
namespace {

using storage::StringId;

// GPU work (a kernel or a memory operation) where it ran, with its correlation id.
struct GpuAt {
  uint32_t lane = 0;  // stream
  uint32_t corr = 0;
  int64_t start = 0;
  uint64_t index = 0;
  uint32_t memop = 0;  // 0: a kernel, 1: a memory operation
  uint32_t pad = 0;
};
struct ByPlace {  // (lane, start, corr): the order flows are matched in
  bool operator()(const GpuAt& a, const GpuAt& b) const {
    return std::tie(a.lane, a.start, a.corr, a.memop, a.index) <
           std::tie(b.lane, b.start, b.corr, b.memop, b.index);
  }
};
struct GpuByCorr {
  bool operator()(const GpuAt& a, const GpuAt& b) const {
    return std::tie(a.corr, a.lane, a.start, a.memop, a.index) <
           std::tie(b.corr, b.lane, b.start, b.memop, b.index);
  }
};

// An API call where it ran.
struct CallAt {
  uint32_t lane = 0;  // thread
  uint32_t corr = 0;
  int64_t start = 0;
  int64_t end = 0;
  uint64_t index = 0;
  uint32_t pid = 0;
  uint32_t pad = 0;
};
struct CallByPlace {
  bool operator()(const CallAt& a, const CallAt& b) const {
    return std::tie(a.lane, a.start, a.corr, a.index) < std::tie(b.lane, b.start, b.corr, b.index);
  }
};
struct CallByCorr {
  bool operator()(const CallAt& a, const CallAt& b) const {
    return std::tie(a.corr, a.lane, a.start, a.index) < std::tie(b.corr, b.lane, b.start, b.index);
  }
};

struct FlowByPlace {
  bool operator()(const FlowEnd& a, const FlowEnd& b) const {
    return std::tie(a.lane, a.ts_ns, a.id, a.order) < std::tie(b.lane, b.ts_ns, b.id, b.order);
  }
};
struct FlowById {
  bool operator()(const FlowEnd& a, const FlowEnd& b) const {
    return std::tie(a.id, a.order) < std::tie(b.id, b.order);
  }
};

// A range kernels can be attributed to.
struct Node {
  uint32_t thread = 0;
  StringId name = storage::kNoString;
  int64_t start = 0;
  int64_t end = 0;
  uint64_t order = 0;
};
struct NodeOrder {  // by thread and start, enclosing first
  bool operator()(const Node& a, const Node& b) const {
    return std::tie(a.thread, a.start, b.end, a.order) <
           std::tie(b.thread, b.start, a.end, b.order);
  }
};

// A kernel's launching call, for its attribution.
struct Launch {
  uint32_t thread = 0;
  uint32_t corr = 0;
  int64_t start = 0;
  int64_t end = 0;
  uint64_t index = 0;  // the kernel's
  uint32_t pid = 0;
  uint32_t pad = 0;
};
struct LaunchOrder {
  bool operator()(const Launch& a, const Launch& b) const {
    return std::tie(a.thread, a.start, a.index) < std::tie(b.thread, b.start, b.index);
  }
};

// A flow whose start and finish are to be checked: at an API call and at GPU work of its id.
struct Probe {
  uint64_t id = 0;
  uint32_t lane = 0;  // where it is checked
  uint32_t other_lane = 0;
  int64_t ts = 0;
  int64_t other_ts = 0;  // the finish, while the start is checked
};
struct ProbeOrder {
  bool operator()(const Probe& a, const Probe& b) const {
    return std::tie(a.id, a.lane, a.ts) < std::tie(b.id, b.lane, b.ts);
  }
};

struct ByIndex {
  template <typename T>
  bool operator()(const T& a, const T& b) const {
    return a.index < b.index;
  }
};

template <typename T, typename Less>
using Sorter = SpillSorter<T, Less>;

// Calls a checkpoint every 65536 steps.
class Pace {
 public:
  explicit Pace(const std::function<void()>& checkpoint) : checkpoint_(checkpoint) {}
  void step() {
    if ((++steps_ & 0xFFFF) == 0 && checkpoint_) checkpoint_();
  }

 private:
  const std::function<void()>& checkpoint_;
  uint64_t steps_ = 0;
};

// The flows at each place (lane, ts), read alongside records sorted by place, then by
// correlation id: two readers of the flows sorted by place, id, one to count the flows at a
// place, one to look for a record's id among them.
class FlowsAtPlaces {
 public:
  explicit FlowsAtPlaces(Sorter<FlowEnd, FlowByPlace>& flows)
      : count_(flows.reader()), ids_(flows.reader()) {}

  // The correlation id of a record at (lane, ts) that carried `corr` (0: none): its own, or the
  // flow's when it had none and exactly one flow is at it. Counts ids taken from flows, and
  // records whose id none of the flows at them has.
  uint32_t reconcile(uint32_t lane, int64_t ts, uint32_t corr, uint64_t& from_flow,
                     uint64_t& mismatches) {
    if (!placed_ || lane != lane_ || ts != ts_) {
      placed_ = true;
      lane_ = lane;
      ts_ = ts;
      const FlowEnd* f = count_.peek();
      while (f != nullptr && (f->lane < lane || (f->lane == lane && f->ts_ns < ts))) {
        count_.next(first_);
        f = count_.peek();
      }
      at_place_ = f != nullptr && f->lane == lane && f->ts_ns == ts;
      if (at_place_) {
        count_.next(first_);
        f = count_.peek();
        several_ = f != nullptr && f->lane == lane && f->ts_ns == ts;
      }
    }
    if (!at_place_) return corr;
    if (corr == 0) {
      if (!several_ && first_.id != 0 && first_.id <= UINT32_MAX) {
        ++from_flow;
        return static_cast<uint32_t>(first_.id);
      }
      return 0;
    }
    FlowEnd skipped;
    const uint64_t id = corr;
    const FlowEnd* f = ids_.peek();
    while (f != nullptr && std::tie(f->lane, f->ts_ns, f->id) < std::tie(lane, ts, id)) {
      ids_.next(skipped);
      f = ids_.peek();
    }
    if (f == nullptr || f->lane != lane || f->ts_ns != ts || f->id != corr) ++mismatches;
    return corr;
  }

 private:
  Sorter<FlowEnd, FlowByPlace>::Reader count_, ids_;
  bool placed_ = false, at_place_ = false, several_ = false;
  uint32_t lane_ = 0;
  int64_t ts_ = 0;
  FlowEnd first_;
};

// Whether each of a sorted series of (id, lane, ts) is among the records of a sorted reader.
template <typename Reader, typename Key>
class Membership {
 public:
  Membership(Reader reader, Key key) : reader_(std::move(reader)), key_(key) {}
  bool has(uint64_t id, uint32_t lane, int64_t ts) {
    const auto want = std::make_tuple(id, lane, ts);
    auto* r = reader_.peek();
    while (r != nullptr && key_(*r) < want) {
      reader_.next(skipped_);
      r = reader_.peek();
    }
    return r != nullptr && key_(*r) == want;
  }

 private:
  Reader reader_;
  Key key_;
  std::remove_cvref_t<decltype(*std::declval<Reader&>().peek())> skipped_{};
};

// Deeper nesting than this on one thread loses its outermost ranges (a malformed trace: real
// ones nest a few dozen deep).
constexpr size_t kMaxNesting = size_t{1} << 16;
// Ranges looked through for one launch, at most: a crossing nesting must not make it quadratic.
constexpr size_t kMaxWalk = 4096;

// Attributes launches (sorted by thread and start) to the innermost of `nodes` on their thread
// that encloses them: every range that does is on the stack of ranges open at the last one
// starting at or before the launch.
template <typename Found, typename Missed>
void sweep(Sorter<Node, NodeOrder>& nodes, Sorter<Launch, LaunchOrder>& launches, Pace& pace,
           Found found, Missed missed) {
  auto node_reader = nodes.reader();
  auto launch_reader = launches.reader();
  std::vector<Node> open;
  bool any = false;
  uint32_t thread = 0;
  Launch l;
  Node n;
  while (launch_reader.next(l)) {
    pace.step();
    for (const Node* p = node_reader.peek(); p != nullptr; p = node_reader.peek()) {
      if (p->thread > l.thread || (p->thread == l.thread && p->start > l.start)) break;
      node_reader.next(n);
      if (!any || n.thread != thread) {
        open.clear();
        thread = n.thread;
        any = true;
      }
      while (!open.empty() && open.back().end <= n.start) open.pop_back();
      if (open.size() == kMaxNesting) {
        open.erase(open.begin(), open.begin() + static_cast<std::ptrdiff_t>(kMaxNesting / 2));
      }
      open.push_back(n);
    }
    StringId name = storage::kNoString;
    if (any && thread == l.thread) {
      for (size_t i = open.size(), walked = 0; i > 0 && walked < kMaxWalk; --i, ++walked) {
        const Node& o = open[i - 1];
        if (o.start <= l.start && o.end >= l.end) {
          name = o.name;
          break;
        }
      }
    }
    if (name != storage::kNoString) {
      found(l, name);
    } else {
      missed(l);
    }
  }
}

}  // namespace

struct TraceLinker::Lists {
  Lists(const std::filesystem::path& d, size_t m)
      : dir(d),
        gpu(d, m),
        calls(d, m),
        starts_by_place(d, m),
        finishes_by_place(d, m),
        starts_by_id(d, m),
        finishes_by_id(d, m),
        ops(d, m),
        annotations(d, m) {}
  std::filesystem::path dir;
  Sorter<GpuAt, ByPlace> gpu;
  Sorter<CallAt, CallByPlace> calls;
  Sorter<FlowEnd, FlowByPlace> starts_by_place, finishes_by_place;
  Sorter<FlowEnd, FlowById> starts_by_id, finishes_by_id;
  Sorter<Node, NodeOrder> ops, annotations;
};

TraceLinker::TraceLinker(const std::filesystem::path& spill_dir, size_t memory_bytes)
    : memory_bytes_(memory_bytes), lists_(std::make_unique<Lists>(spill_dir, memory_bytes)) {}

TraceLinker::~TraceLinker() = default;

void TraceLinker::add_kernel(const storage::KernelRecord& k) {
  lists_->gpu.push({k.stream, k.correlation_id, k.start_ns, kernels_++, 0, 0});
}

void TraceLinker::add_memop(const storage::MemopRecord& m) {
  lists_->gpu.push({m.stream, m.correlation_id, m.start_ns, memops_++, 1, 0});
}

void TraceLinker::add_api_call(const storage::ApiCallRecord& a) {
  lists_->calls.push({a.thread_id, a.correlation_id, a.start_ns, a.end_ns, calls_++, a.pid, 0});
}

void TraceLinker::add_flow_start(const FlowEnd& f) {
  lists_->starts_by_place.push(f);
  lists_->starts_by_id.push(f);
}

void TraceLinker::add_flow_finish(const FlowEnd& f) {
  lists_->finishes_by_place.push(f);
  lists_->finishes_by_id.push(f);
}

void TraceLinker::add_operator(const storage::RangeRecord& r) {
  lists_->ops.push({r.thread_id, r.name, r.start_ns, r.end_ns, nodes_++});
}

void TraceLinker::add_annotation(const storage::RangeRecord& r) {
  lists_->annotations.push({r.thread_id, r.name, r.start_ns, r.end_ns, nodes_++});
}

void TraceLinker::link(ImportStats& stats, const NoteFn& note, LinkResults& results,
                       const std::function<void()>& checkpoint) {
  Pace pace(checkpoint);
  Lists& in = *lists_;
  const std::filesystem::path dir = in.dir;  // a copy: the lists go before the end
  const size_t mem = memory_bytes_;

  // 1. Correlation ids from the flows at each record's start: GPU work by the finishes on its
  // stream, API calls by the starts on their thread. Then the records by correlation id.
  uint64_t from_flow = 0, mismatches = 0;
  Sorter<GpuAt, GpuByCorr> gpu_by_corr(dir, mem);
  {
    FlowsAtPlaces flows(in.finishes_by_place);
    auto reader = in.gpu.reader();
    GpuAt g;
    while (reader.next(g)) {
      pace.step();
      g.corr = flows.reconcile(g.lane, g.start, g.corr, from_flow, mismatches);
      gpu_by_corr.push(g);
    }
  }
  Sorter<CallAt, CallByCorr> calls_by_corr(dir, mem);
  Sorter<CallLink, ByIndex> call_fixes(dir, mem);
  {
    FlowsAtPlaces flows(in.starts_by_place);
    auto reader = in.calls.reader();
    CallAt c;
    while (reader.next(c)) {
      pace.step();
      const uint32_t corr = flows.reconcile(c.lane, c.start, c.corr, from_flow, mismatches);
      if (c.corr == 0) call_fixes.push({c.index, corr});
      c.corr = corr;
      calls_by_corr.push(c);
    }
  }
  note("records without `args.correlation` that took their flow's id", from_flow);
  note("records whose `args.correlation` differs from the id of the flow at them (kept)",
       mismatches);

  // 2. Flows whose start is at an API call of their id and whose finish at GPU work of it (the
  // first start of each id in the file counts, as in a map keyed by id).
  uint64_t linked = 0, broken = 0, orphan_finishes = 0;
  {
    Sorter<Probe, ProbeOrder> at_call(dir, mem), at_gpu(dir, mem);
    {
      auto starts = in.starts_by_id.reader();
      auto finishes = in.finishes_by_id.reader();
      FlowEnd f, skipped;
      while (finishes.next(f)) {
        pace.step();
        const FlowEnd* s = starts.peek();
        while (s != nullptr && s->id < f.id) {
          starts.next(skipped);
          s = starts.peek();
        }
        if (s == nullptr || s->id != f.id) {
          ++orphan_finishes;
        } else if (f.id == 0 || f.id > UINT32_MAX) {
          ++broken;  // no record carries such an id
        } else {
          at_call.push({f.id, s->lane, f.lane, s->ts_ns, f.ts_ns});
        }
      }
    }
    {
      Membership calls(calls_by_corr.reader(), [](const CallAt& c) {
        return std::make_tuple(uint64_t{c.corr}, c.lane, c.start);
      });
      auto reader = at_call.reader();
      Probe p;
      while (reader.next(p)) {
        pace.step();
        if (calls.has(p.id, p.lane, p.ts)) {
          at_gpu.push({p.id, p.other_lane, p.lane, p.other_ts, p.ts});
        } else {
          ++broken;
        }
      }
    }
    Membership gpu(gpu_by_corr.reader(), [](const GpuAt& g) {
      return std::make_tuple(uint64_t{g.corr}, g.lane, g.start);
    });
    auto reader = at_gpu.reader();
    Probe p;
    while (reader.next(p)) {
      pace.step();
      ++(gpu.has(p.id, p.lane, p.ts) ? linked : broken);
    }
  }
  stats.flows_linked = linked;
  note("ac2g flows whose ends are not at an API call and GPU work of their id", broken);
  note("ac2g flow finishes without a start", orphan_finishes);

  // 3. GPU work and the API calls of its correlation id: how many there are, and the first in
  // the file, which launched it (its process, and the operator it is attributed to).
  Sorter<KernelLink, ByIndex> kernel_links(dir, mem);
  Sorter<MemopLink, ByIndex> memop_links(dir, mem);
  Sorter<Launch, LaunchOrder> launches(dir, mem);
  {
    uint64_t launched = 0, unlaunched = 0, ambiguous = 0;
    auto calls = calls_by_corr.reader();
    auto gpu = gpu_by_corr.reader();
    std::optional<uint32_t> group;  // the correlation id the figures below are of
    uint64_t count = 0;
    CallAt first, c;
    GpuAt g;
    while (gpu.next(g)) {
      pace.step();
      if (group != g.corr) {
        group = g.corr;
        count = 0;
        for (const CallAt* p = calls.peek(); p != nullptr && p->corr <= g.corr; p = calls.peek()) {
          calls.next(c);
          if (c.corr != g.corr || g.corr == 0) continue;
          if (count == 0 || c.index < first.index) first = c;
          ++count;
        }
      }
      const uint32_t pid = count > 0 ? first.pid : 0;
      if (g.memop != 0) {
        memop_links.push({g.index, g.corr, pid});
        continue;
      }
      ++(count == 0 ? unlaunched : count == 1 ? launched : ambiguous);
      if (count > 0) {
        launches.push({first.lane, g.corr, first.start, first.end, g.index, pid, 0});
      } else {
        kernel_links.push({g.index, g.corr, 0, storage::kNoString});
      }
    }
    stats.kernels_launched = launched;
    note("kernels without a launching API call in the trace", unlaunched);
    note("kernels whose correlation id matches several API calls", ambiguous);
  }

  // 4. The operator of each launched kernel; failing one, its user annotation.
  {
    uint64_t with_op = 0, from_annotation = 0;
    Sorter<Launch, LaunchOrder> outside_ops(dir, mem);
    sweep(
        in.ops, launches, pace,
        [&](const Launch& l, StringId op) {
          kernel_links.push({l.index, l.corr, l.pid, op});
          ++with_op;
        },
        [&](const Launch& l) { outside_ops.push(l); });
    sweep(
        in.annotations, outside_ops, pace,
        [&](const Launch& l, StringId annotation) {
          kernel_links.push({l.index, l.corr, l.pid, annotation});
          ++from_annotation;
        },
        [&](const Launch& l) {
          kernel_links.push({l.index, l.corr, l.pid, storage::kNoString});
        });
    stats.kernels_with_op = with_op;
    note("kernels outside any cpu_op, attributed to their innermost user annotation",
         from_annotation);
  }
  lists_.reset();  // the facts read are no longer needed: their files go
  gpu_by_corr = Sorter<GpuAt, GpuByCorr>(dir, mem);
  calls_by_corr = Sorter<CallAt, CallByCorr>(dir, mem);

  // 5. What each record gains, in the order the records were added.
  {
    auto reader = kernel_links.reader();
    KernelLink k;
    while (reader.next(k)) results.kernel(k);
  }
  {
    auto reader = memop_links.reader();
    MemopLink m;
    while (reader.next(m)) results.memop(m);
  }
  auto reader = call_fixes.reader();
  CallLink c;
  while (reader.next(c)) results.unlinked_call(c);
}

}  // namespace fusionscope::interchange::detail
