// CUDA API calls: drawn on their thread's API row (runtime and driver in two colours); details
// list the kernels and memops the call launched, with the launch latency of each.
#include "fusionscope/analysis/format.h"
#include "item_common.h"
#include "item_types.h"

namespace fusionscope::ui {

namespace {

using analysis::format_bytes;
using analysis::format_count;
using analysis::format_duration;
using item_detail::duration;
using item_detail::row_text;

bool extent(const storage::RunData& d, uint32_t i, int64_t& start, int64_t& end) {
  if (i >= d.api_calls.size()) return false;
  start = d.api_calls[i].start_ns;
  end = d.api_calls[i].end_ns;
  return true;
}

ItemLook look(const ItemLookContext& c, uint32_t i) {
  const storage::ApiCallRecord& a = c.run->data.api_calls[i];
  return {a.domain == storage::ApiDomain::kDriver ? c.theme->api_driver : c.theme->api_runtime,
          c.run->data.str(a.name)};
}

std::string_view name_of(const LoadedRun& run, uint32_t i) {
  return run.data.str(run.data.api_calls[i].name);
}

void links(const LoadedRun& run, uint32_t i, std::vector<ItemLink>& out) {
  const uint32_t id = run.data.api_calls[i].correlation_id;
  for (uint32_t k : run.index.correlation.kernels(id)) out.push_back({ItemKind::kKernel, k});
  for (uint32_t m : run.index.correlation.memops(id)) out.push_back({ItemKind::kMemop, m});
}

void tooltip(const TimelineRun& tr, uint32_t i, const Theme& theme) {
  const storage::RunData& d = tr.run->data;
  const storage::ApiCallRecord& a = d.api_calls[i];
  ImGui::TextColored(theme.accent, "%s", d.str(a.name).c_str());
  ImGui::Text("%s on the CPU", format_duration(duration(a.start_ns, a.end_ns)).c_str());
  const auto kernels = tr.run->index.correlation.kernels(a.correlation_id);
  if (!kernels.empty())
    ImGui::Text("launched %s", tr.run->names.short_name(d.kernels[kernels.front()].name).c_str());
}

void details(const TimelineRun& tr, uint32_t i, const Theme& theme) {
  const storage::RunData& d = tr.run->data;
  const storage::ApiCallRecord& a = d.api_calls[i];
  ImGui::TextColored(theme.accent, "%s", d.str(a.name).c_str());
  ImGui::TextDisabled("CUDA %s API call",
                      a.domain == storage::ApiDomain::kDriver ? "driver" : "runtime");
  if (!item_detail::begin_table()) return;
  row_text("Duration (CPU)", format_duration(duration(a.start_ns, a.end_ns)));
  row_text("Start", item_detail::start_text(tr, a.start_ns));
  row_text("Thread", std::to_string(a.thread_id));
  row_text("Correlation", a.correlation_id ? std::to_string(a.correlation_id) : "none");
  const auto kernels = tr.run->index.correlation.kernels(a.correlation_id);
  for (size_t n = 0; n < kernels.size() && n < 16; ++n) {
    const storage::KernelRecord& k = d.kernels[kernels[n]];
    row_text(n == 0 ? "Launched" : "", tr.run->names.short_name(k.name) + "  (" +
                                           format_duration(duration(k.start_ns, k.end_ns)) +
                                           ", latency " +
                                           format_duration(duration(a.start_ns, k.start_ns)) + ")");
  }
  if (kernels.size() > 16)
    row_text("", "... and " + format_count(kernels.size() - 16) + " more kernels");
  for (uint32_t m : tr.run->index.correlation.memops(a.correlation_id))
    row_text("Launched", std::string(item_detail::memop_kind_name(d.memops[m])) + "  (" +
                             format_bytes(static_cast<double>(d.memops[m].bytes)) + ")");
  ImGui::EndTable();
}

size_t count(const storage::RunData& d) {
  return d.api_calls.size();
}

}  // namespace

const ItemType kApiCallItem = {
    ItemKind::kApiCall, "api", extent, look, name_of, links, tooltip, details, count};

}  // namespace fusionscope::ui
