#include "item_common.h"

#include <cmath>
#include <cstdio>

#include "fusionscope/analysis/format.h"

namespace fusionscope::ui::item_detail {

bool begin_table() {
  if (!ImGui::BeginTable("##details", 2, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_RowBg))
    return false;
  ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
  return true;
}

void row_text(const char* key, const std::string& value, bool wrap) {
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  ImGui::TextDisabled("%s", key);
  ImGui::TableSetColumnIndex(1);
  if (wrap)
    ImGui::TextWrapped("%s", value.c_str());
  else
    ImGui::TextUnformatted(value.c_str());
}

std::string start_text(const TimelineRun& tr, int64_t start_ns) {
  const double t = static_cast<double>(start_ns - tr.origin_ns) - tr.ruler_zero;
  return (t < 0 ? "-" : "+") + analysis::format_duration(std::abs(t)) + " from the ruler's 0";
}

std::string dims(const storage::Dim3& d) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "(%u, %u, %u)", d.x, d.y, d.z);
  return buf;
}

void launch_rows(const TimelineRun& tr, uint32_t correlation_id, int64_t work_start) {
  using analysis::format_duration;
  const storage::RunData& d = tr.run->data;
  row_text("Correlation", correlation_id ? std::to_string(correlation_id) : "unknown");
  const auto api = tr.run->index.correlation.api_call(correlation_id);
  if (!api) {
    row_text("Launched by", "not recorded");
    return;
  }
  const storage::ApiCallRecord& a = d.api_calls[*api];
  row_text("Launched by", d.str(a.name) + " on thread " + std::to_string(a.thread_id));
  row_text("API call (CPU)", format_duration(duration(a.start_ns, a.end_ns)));
  row_text("Launch latency",
           format_duration(duration(a.start_ns, work_start)) + "  (API start to GPU start)");
}

const char* memop_kind_name(const storage::MemopRecord& m) {
  if (m.kind == storage::MemopKind::kMemset) return "Memset";
  switch (m.copy_kind) {
    case storage::CopyKind::kHtoD:
      return "Memcpy HtoD";
    case storage::CopyKind::kDtoH:
      return "Memcpy DtoH";
    case storage::CopyKind::kDtoD:
      return "Memcpy DtoD";
    case storage::CopyKind::kHtoH:
      return "Memcpy HtoH";
    case storage::CopyKind::kPeer:
      return "Memcpy peer";
    case storage::CopyKind::kUnknown:
      break;
  }
  return "Memcpy";
}

}  // namespace fusionscope::ui::item_detail
