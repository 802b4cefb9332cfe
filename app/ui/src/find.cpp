#include "find.h"

#include <algorithm>

namespace fusionscope::ui {

namespace {

// Per string of a run, whether it matches; kernel names also by their short and full forms.
struct StringMatches {
  std::vector<bool> raw;
  std::vector<bool> kernel_name;
};

StringMatches match_strings(const LoadedRun& run, const analysis::NameQuery& q) {
  StringMatches m;
  const size_t n = run.data.strings.size();
  m.raw.resize(n);
  m.kernel_name.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const auto id = static_cast<storage::StringId>(i);
    m.raw[i] = q.matches(run.data.strings[i]);
    m.kernel_name[i] =
        m.raw[i] || q.matches(run.names.short_name(id)) || q.matches(run.names.full_name(id));
  }
  return m;
}

}  // namespace

bool kernel_matches(const LoadedRun& run, uint32_t kernel, const analysis::NameQuery& q,
                    const FindScope& scope) {
  const storage::KernelRecord& k = run.data.kernels[kernel];
  if (scope.kernels && (q.matches(run.names.short_name(k.name)) ||
                        q.matches(run.names.full_name(k.name)) || q.matches(run.data.str(k.name))))
    return true;
  return scope.ops && k.op != storage::kNoString && q.matches(run.data.str(k.op));
}

FindResults find_items(std::span<const TimelineRun> runs, const analysis::NameQuery& q,
                       const FindScope& scope) {
  FindResults r;
  r.runs.resize(runs.size());
  for (size_t ri = 0; ri < runs.size(); ++ri) {
    const LoadedRun& run = *runs[ri].run;
    const storage::RunData& d = run.data;
    const double origin = static_cast<double>(runs[ri].origin_ns);
    const StringMatches strings = match_strings(run, q);
    RunMatches& m = r.runs[ri];
    auto hit = [&](ItemKind kind, uint32_t i, int64_t start, int64_t end) {
      m.of_kind[static_cast<size_t>(kind)][i] = true;
      KindTotals& t = r.totals[static_cast<size_t>(kind)];
      ++t.count;
      t.total_ns += std::max<int64_t>(end - start, 0);
      r.hits.push_back({static_cast<int>(ri), kind, i, static_cast<double>(start) - origin});
    };
    m.of_kind[static_cast<size_t>(ItemKind::kKernel)].assign(d.kernels.size(), false);
    for (uint32_t i = 0; i < d.kernels.size(); ++i) {
      const storage::KernelRecord& k = d.kernels[i];
      const bool by_name =
          scope.kernels && k.name < strings.kernel_name.size() && strings.kernel_name[k.name];
      const bool by_op =
          scope.ops && k.op != storage::kNoString && k.op < strings.raw.size() && strings.raw[k.op];
      if (by_name || by_op) hit(ItemKind::kKernel, i, k.start_ns, k.end_ns);
    }
    m.of_kind[static_cast<size_t>(ItemKind::kMemop)].assign(d.memops.size(), false);
    if (scope.memops) {
      const ItemType& type = item_type(ItemKind::kMemop);
      for (uint32_t i = 0; i < d.memops.size(); ++i)
        if (q.matches(type.name_of(run, i)))
          hit(ItemKind::kMemop, i, d.memops[i].start_ns, d.memops[i].end_ns);
    }
    m.of_kind[static_cast<size_t>(ItemKind::kApiCall)].assign(d.api_calls.size(), false);
    if (scope.api_calls)
      for (uint32_t i = 0; i < d.api_calls.size(); ++i) {
        const storage::ApiCallRecord& a = d.api_calls[i];
        if (a.name < strings.raw.size() && strings.raw[a.name])
          hit(ItemKind::kApiCall, i, a.start_ns, a.end_ns);
      }
    m.of_kind[static_cast<size_t>(ItemKind::kRange)].assign(d.ranges.size(), false);
    if (scope.ranges)
      for (uint32_t i = 0; i < d.ranges.size(); ++i) {
        const storage::RangeRecord& x = d.ranges[i];
        if (x.name < strings.raw.size() && strings.raw[x.name])
          hit(ItemKind::kRange, i, x.start_ns, x.end_ns);
      }
  }
  std::stable_sort(r.hits.begin(), r.hits.end(),
                   [](const FindHit& a, const FindHit& b) { return a.t < b.t; });
  return r;
}

void update_find(FindState& s, std::span<const TimelineRun> runs) {
  std::string key = std::string(s.text) + (s.regex ? "|re" : "|") + (s.match_case ? "c" : "") +
                    (s.open ? "o" : "") + (s.scope.kernels ? "k" : "") + (s.scope.ops ? "p" : "") +
                    (s.scope.memops ? "m" : "") + (s.scope.api_calls ? "a" : "") +
                    (s.scope.ranges ? "r" : "");
  for (const TimelineRun& r : runs)
    key += "|" + std::to_string(r.run->data.info.id) + "@" + std::to_string(r.origin_ns) + ":" +
           std::to_string(r.run->data.kernels.size());
  if (key == s.key) return;
  s.key = std::move(key);
  s.error.clear();
  s.query = analysis::NameQuery::make(s.text, s.regex, s.match_case, &s.error);
  s.results = {};
  s.current = -1;
  s.searched = s.open ? s.text : "";
  if (s.open && s.query) s.results = find_items(runs, *s.query, s.scope);
}

}  // namespace fusionscope::ui
