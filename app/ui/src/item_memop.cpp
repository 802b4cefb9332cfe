// Memcpy and memset: drawn on their GPU stream's row under the kernels, in the copy or set
// colour; details give the size, the throughput and the launching API call.
#include <cstdio>

#include "fusionscope/analysis/format.h"
#include "item_common.h"
#include "item_types.h"

namespace fusionscope::ui {

namespace {

using analysis::format_bytes;
using analysis::format_duration;
using item_detail::duration;
using item_detail::row_text;

const char* long_name(const storage::MemopRecord& m) {
  if (m.kind == storage::MemopKind::kMemset) return "Memset";
  switch (m.copy_kind) {
    case storage::CopyKind::kHtoD:
      return "Memcpy host to device";
    case storage::CopyKind::kDtoH:
      return "Memcpy device to host";
    case storage::CopyKind::kDtoD:
      return "Memcpy device to device";
    case storage::CopyKind::kHtoH:
      return "Memcpy host to host";
    case storage::CopyKind::kPeer:
      return "Memcpy peer to peer";
    case storage::CopyKind::kUnknown:
      break;
  }
  return "Memcpy";
}

bool extent(const storage::RunData& d, uint32_t i, int64_t& start, int64_t& end) {
  if (i >= d.memops.size()) return false;
  start = d.memops[i].start_ns;
  end = d.memops[i].end_ns;
  return true;
}

ItemLook look(const ItemLookContext& c, uint32_t i) {
  const storage::MemopRecord& m = c.run->data.memops[i];
  return {m.kind == storage::MemopKind::kMemset ? c.theme->memset_fill : c.theme->memcpy_fill,
          item_detail::memop_kind_name(m)};
}

std::string_view name_of(const LoadedRun& run, uint32_t i) {
  return item_detail::memop_kind_name(run.data.memops[i]);
}

void links(const LoadedRun& run, uint32_t i, std::vector<ItemLink>& out) {
  if (auto api = run.index.correlation.api_call(run.data.memops[i].correlation_id))
    out.push_back({ItemKind::kApiCall, *api});
}

void tooltip(const TimelineRun& tr, uint32_t i, const Theme& theme) {
  const storage::MemopRecord& m = tr.run->data.memops[i];
  ImGui::TextColored(theme.accent, "%s", long_name(m));
  ImGui::Text("%s in %s", format_bytes(static_cast<double>(m.bytes)).c_str(),
              format_duration(duration(m.start_ns, m.end_ns)).c_str());
}

void details(const TimelineRun& tr, uint32_t i, const Theme& theme) {
  const storage::MemopRecord& m = tr.run->data.memops[i];
  ImGui::TextColored(theme.accent, "%s", long_name(m));
  if (!item_detail::begin_table()) return;
  row_text("Size", format_bytes(static_cast<double>(m.bytes)));
  row_text("Duration", format_duration(duration(m.start_ns, m.end_ns)));
  if (m.end_ns > m.start_ns) {
    row_text("Throughput", analysis::format_bandwidth(static_cast<double>(m.bytes) * 1e9 /
                                                      duration(m.start_ns, m.end_ns)));
  }
  row_text("Start", item_detail::start_text(tr, m.start_ns));
  row_text("Device, stream", std::to_string(m.device) + ", " + std::to_string(m.stream));
  item_detail::launch_rows(tr, m.correlation_id, m.start_ns);
  ImGui::EndTable();
}

size_t count(const storage::RunData& d) {
  return d.memops.size();
}

}  // namespace

const ItemType kMemopItem = {ItemKind::kMemop, "memop", extent, look, name_of, links,
                             tooltip,          details, count};

}  // namespace fusionscope::ui
