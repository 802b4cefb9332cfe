#include "area_summary.h"

#include <algorithm>
#include <unordered_map>

namespace fusionscope::ui {

namespace {

class Grouper {
 public:
  AreaGroup& at(const std::string& name, ImU32 colour) {
    auto [it, inserted] = slot_.try_emplace(name, groups_.size());
    if (inserted) {
      AreaGroup g;
      g.name = name;
      g.colour = colour;
      groups_.push_back(std::move(g));
    }
    return groups_[it->second];
  }
  std::vector<AreaGroup> take() {
    std::stable_sort(groups_.begin(), groups_.end(), [](const AreaGroup& a, const AreaGroup& b) {
      return a.total_ns > b.total_ns;
    });
    return std::move(groups_);
  }

 private:
  std::unordered_map<std::string, size_t> slot_;
  std::vector<AreaGroup> groups_;
};

void add(AreaGroup& g, int64_t d) {
  g.min_ns = g.count == 0 ? d : std::min(g.min_ns, d);
  g.max_ns = g.count == 0 ? d : std::max(g.max_ns, d);
  ++g.count;
  g.total_ns += d;
}

}  // namespace

bool kernel_dram_bytes(const LoadedRun& run, uint32_t kernel, double& bytes) {
  bool any = false;
  bytes = 0;
  for (const storage::KernelMetricRecord* m :
       run.metrics_for(run.data.kernels[kernel].correlation_id)) {
    const std::string& name = run.data.str(m->name);
    if (name == "dram__bytes_read.sum" || name == "dram__bytes_write.sum") {
      bytes += m->value;
      any = true;
    }
  }
  return any;
}

AreaGroup AreaSummary::total(AreaTable t) const {
  AreaGroup sum;
  sum.name = "total";
  for (const AreaGroup& g : of(t)) {
    sum.min_ns = sum.count == 0 ? g.min_ns : std::min(sum.min_ns, g.min_ns);
    sum.max_ns = sum.count == 0 ? g.max_ns : std::max(sum.max_ns, g.max_ns);
    sum.count += g.count;
    sum.total_ns += g.total_ns;
    sum.dram_bytes += g.dram_bytes;
    sum.counted += g.counted;
  }
  return sum;
}

AreaSummary summarize_area(std::span<const TimelineRun> runs, std::span<const ItemRef> items,
                           double begin, double end, ColorMode mode) {
  AreaSummary s;
  s.begin = begin;
  s.end = end;
  Grouper kernels, ops, memops, api_calls, ranges;
  for (const ItemRef& item : items) {
    if (item.run < 0 || item.run >= static_cast<int>(runs.size())) continue;
    const LoadedRun& run = *runs[static_cast<size_t>(item.run)].run;
    const storage::RunData& d = run.data;
    int64_t start, stop;
    if (!item_extent(d, item, start, stop)) continue;
    const int64_t dur = std::max<int64_t>(stop - start, 0);
    switch (item.kind) {
      case ItemKind::kKernel: {
        const storage::KernelRecord& k = d.kernels[item.index];
        double bytes = 0;
        const bool counted = kernel_dram_bytes(run, item.index, bytes);
        const storage::StringId drawn =
            mode == ColorMode::kByOp && k.op != storage::kNoString ? k.op : k.name;
        AreaGroup& by_name = kernels.at(run.names.short_name(k.name), run.colours.of(drawn));
        const std::string op = k.op != storage::kNoString ? d.str(k.op) : "(no op)";
        AreaGroup& by_op = ops.at(
            op, k.op != storage::kNoString ? run.colours.of(k.op) : IM_COL32(160, 160, 160, 255));
        for (AreaGroup* g : {&by_name, &by_op}) {
          add(*g, dur);
          if (counted) {
            g->dram_bytes += bytes;
            ++g->counted;
          }
        }
        break;
      }
      case ItemKind::kMemop:
        add(memops.at(std::string(item_type(item.kind).name_of(run, item.index)), 0), dur);
        break;
      case ItemKind::kApiCall:
        add(api_calls.at(d.str(d.api_calls[item.index].name), 0), dur);
        break;
      case ItemKind::kRange:
        add(ranges.at(d.str(d.ranges[item.index].name), run.colours.of(d.ranges[item.index].name)),
            dur);
        break;
      case ItemKind::kNone:
        break;
    }
  }
  s.tables[static_cast<size_t>(AreaTable::kKernels)] = kernels.take();
  s.tables[static_cast<size_t>(AreaTable::kOps)] = ops.take();
  s.tables[static_cast<size_t>(AreaTable::kMemops)] = memops.take();
  s.tables[static_cast<size_t>(AreaTable::kApiCalls)] = api_calls.take();
  s.tables[static_cast<size_t>(AreaTable::kRanges)] = ranges.take();
  return s;
}

}  // namespace fusionscope::ui
