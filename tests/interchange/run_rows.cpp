#include "run_rows.h"

#include <sstream>

namespace fusionscope::testing {

RunRows rows_of(const storage::RunData& run) {
  RunRows r;
  for (const auto& k : run.kernels) {
    r.kernels.emplace_back(k.start_ns, k.end_ns, k.device, k.stream, k.correlation_id,
                           run.str(k.name), run.str(k.op), std::tuple{k.grid.x, k.grid.y, k.grid.z},
                           std::tuple{k.block.x, k.block.y, k.block.z}, k.registers, k.static_smem,
                           k.dynamic_smem, k.pid, k.external_id, run.str(k.extra));
  }
  for (const auto& m : run.memops) {
    r.memops.emplace_back(m.start_ns, m.end_ns, m.device, m.stream, m.correlation_id, m.bytes,
                          static_cast<int>(m.kind), static_cast<int>(m.copy_kind), m.pid,
                          m.external_id, run.str(m.extra));
  }
  for (const auto& a : run.api_calls) {
    r.api_calls.emplace_back(a.start_ns, a.end_ns, a.thread_id, a.correlation_id, run.str(a.name),
                             static_cast<int>(a.domain), a.pid, a.external_id, run.str(a.extra));
  }
  for (const auto& g : run.ranges) {
    r.ranges.emplace_back(g.start_ns, g.end_ns, g.thread_id, run.str(g.name),
                          static_cast<int>(g.kind), g.depth, g.pid, g.external_id, run.str(g.extra),
                          g.event_index);
  }
  for (const auto& p : run.processes) r.processes.emplace_back(p.pid, run.str(p.name));
  for (const auto& t : run.threads) r.threads.emplace_back(t.pid, t.thread_id, run.str(t.name));
  for (const auto& e : run.extras) r.extras.emplace_back(e.key, e.value);
  return r;
}

namespace {

template <typename T>
void print(std::ostream& out, const T& v) {
  if constexpr (requires { out << v; }) {
    out << v;
  } else {
    out << '(';
    std::apply(
        [&](const auto&... item) {
          bool first = true;
          ((out << (first ? "" : ", "), print(out, item), first = false), ...);
        },
        v);
    out << ')';
  }
}

template <typename T>
bool differ(std::ostringstream& out, const char* what, const std::vector<T>& a,
            const std::vector<T>& b) {
  if (a == b) return false;
  out << what << ": " << a.size() << " vs " << b.size();
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] == b[i]) continue;
    out << "; first difference at " << i << ":\n  ";
    print(out, a[i]);
    out << "\n  ";
    print(out, b[i]);
    break;
  }
  return true;
}

}  // namespace

std::string first_difference(const RunRows& a, const RunRows& b) {
  std::ostringstream out;
  differ(out, "kernels", a.kernels, b.kernels) || differ(out, "memops", a.memops, b.memops) ||
      differ(out, "api_calls", a.api_calls, b.api_calls) ||
      differ(out, "ranges", a.ranges, b.ranges) ||
      differ(out, "processes", a.processes, b.processes) ||
      differ(out, "threads", a.threads, b.threads) || differ(out, "extras", a.extras, b.extras);
  return out.str();
}

}  // namespace fusionscope::testing
