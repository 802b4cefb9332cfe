// NVTX and framework ranges: drawn on their thread's rows, one row per nesting depth, coloured by
// their name without a trailing counter ("iteration 7" takes the colour of "iteration"); details
// add up the GPU work launched from inside the range.
#include <algorithm>
#include <cctype>

#include "fusionscope/analysis/format.h"
#include "item_common.h"
#include "item_types.h"

namespace fusionscope::ui {

namespace {

using analysis::format_count;
using analysis::format_duration;
using item_detail::duration;
using item_detail::row_text;

const char* kind_name(storage::RangeKind k) {
  switch (k) {
    case storage::RangeKind::kNvtx:
      return "NVTX range";
    case storage::RangeKind::kCpuOp:
      return "framework operator";
    case storage::RangeKind::kUserAnnotation:
      return "annotation";
    case storage::RangeKind::kGpuAnnotation:
      return "GPU annotation";
    case storage::RangeKind::kSync:
      return "synchronization wait";
    case storage::RangeKind::kTracerOverhead:
      return "tracer overhead";
    case storage::RangeKind::kInstant:
      return "instant event";
    case storage::RangeKind::kOther:
      return "trace event";
    default:
      return "range";
  }
}

bool extent(const storage::RunData& d, uint32_t i, int64_t& start, int64_t& end) {
  if (i >= d.ranges.size()) return false;
  start = d.ranges[i].start_ns;
  end = d.ranges[i].end_ns;
  return true;
}

ItemLook look(const ItemLookContext& c, uint32_t i) {
  const storage::StringId id = c.run->data.ranges[i].name;
  const std::string& name = c.run->data.str(id);
  // An op's range ("gate") in the colour its kernels have.
  if (c.run->colours.is_named(id)) return {shade(c.run->colours.of(id), 0.9f), name};
  // "iteration 7" and "ProfilerStep#7" take the colour of their kind, not of their number.
  std::string_view key = name;
  while (!key.empty() && (std::isdigit(static_cast<unsigned char>(key.back())) ||
                          key.back() == '#' || key.back() == ' '))
    key.remove_suffix(1);
  return {shade(color_for_name(key), 0.9f), name};
}

std::string_view name_of(const LoadedRun& run, uint32_t i) {
  return run.data.str(run.data.ranges[i].name);
}

void links(const LoadedRun&, uint32_t, std::vector<ItemLink>&) {}

void tooltip(const TimelineRun& tr, uint32_t i, const Theme& theme) {
  const storage::RangeRecord& r = tr.run->data.ranges[i];
  ImGui::TextColored(theme.accent, "%s", tr.run->data.str(r.name).c_str());
  ImGui::Text("%s  (%s)", format_duration(duration(r.start_ns, r.end_ns)).c_str(),
              kind_name(r.kind));
}

// GPU work launched from inside a range: the kernels of the API calls the range encloses on its
// thread.
struct RangeWork {
  uint64_t launches = 0, kernels = 0;
  int64_t kernel_time = 0, first_start = 0, last_end = 0;
  bool capped = false;
};

RangeWork range_work(const TimelineRun& tr, const storage::RangeRecord& r) {
  RangeWork w;
  const storage::RunData& d = tr.run->data;
  for (const storage::CpuLane& lane : d.cpu_lanes) {
    if (lane.pid != r.pid || lane.thread_id != r.thread_id) continue;
    const auto first = d.api_calls.begin() + lane.api_begin,
               last = d.api_calls.begin() + lane.api_end;
    auto it =
        std::lower_bound(first, last, r.start_ns,
                         [](const storage::ApiCallRecord& a, int64_t t) { return a.start_ns < t; });
    for (; it != last && it->start_ns < r.end_ns; ++it) {
      if (++w.launches > 200'000) {  // the panel is redrawn every frame; keep it cheap
        w.capped = true;
        break;
      }
      for (uint32_t k : tr.run->index.correlation.kernels(it->correlation_id)) {
        const storage::KernelRecord& kr = d.kernels[k];
        if (w.kernels++ == 0) w.first_start = kr.start_ns;
        w.kernel_time += kr.end_ns - kr.start_ns;
        w.first_start = std::min(w.first_start, kr.start_ns);
        w.last_end = std::max(w.last_end, kr.end_ns);
      }
    }
  }
  return w;
}

void details(const TimelineRun& tr, uint32_t i, const Theme& theme) {
  const storage::RunData& d = tr.run->data;
  const storage::RangeRecord& r = d.ranges[i];
  ImGui::TextColored(theme.accent, "%s", d.str(r.name).c_str());
  ImGui::TextDisabled("%s, depth %u", kind_name(r.kind), static_cast<unsigned>(r.depth));
  if (!item_detail::begin_table()) return;
  row_text("Duration (CPU)", format_duration(duration(r.start_ns, r.end_ns)));
  row_text("Start", item_detail::start_text(tr, r.start_ns));
  row_text(r.kind == storage::RangeKind::kGpuAnnotation ? "Stream" : "Thread",
           std::to_string(r.thread_id));
  if (r.kind != storage::RangeKind::kGpuAnnotation) {
    const RangeWork w = range_work(tr, r);
    row_text("API calls", format_count(w.launches) + (w.capped ? "+" : ""));
    row_text("Kernels launched", format_count(w.kernels));
    if (w.kernels > 0) {
      row_text("Their GPU time", format_duration(static_cast<double>(w.kernel_time)));
      row_text("GPU span", format_duration(duration(w.first_start, w.last_end)) +
                               "  (first kernel start to last end)");
    }
  }
  ImGui::EndTable();
}

size_t count(const storage::RunData& d) {
  return d.ranges.size();
}

}  // namespace

const ItemType kRangeItem = {ItemKind::kRange, "range", extent, look, name_of, links,
                             tooltip,          details, count};

}  // namespace fusionscope::ui
