#include "item_details.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string>

#include "fusionscope/analysis/format.h"

namespace fusionscope::ui {

namespace {

using analysis::format_bytes;
using analysis::format_count;
using analysis::format_duration;

double dur(int64_t a, int64_t b) {
  return static_cast<double>(b - a);
}

const char* memop_kind_name(const storage::MemopRecord& m) {
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

const char* range_kind_name(storage::RangeKind k) {
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
    default:
      return "range";
  }
}

// Two-column key/value table rows.
void row_text(const char* key, const std::string& value, bool wrap = false) {
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  ImGui::TextDisabled("%s", key);
  ImGui::TableSetColumnIndex(1);
  if (wrap)
    ImGui::TextWrapped("%s", value.c_str());
  else
    ImGui::TextUnformatted(value.c_str());
}

std::string dims(const storage::Dim3& d) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "(%u, %u, %u)", d.x, d.y, d.z);
  return buf;
}

std::string metric_value(const storage::RunData& d, const storage::KernelMetricRecord& m) {
  const std::string& unit = d.str(m.unit);
  if (unit == "byte" || unit == "bytes") return format_bytes(m.value);
  if (unit == "ns" || unit == "nsecond" || unit == "nanosecond") return format_duration(m.value);
  char buf[64];
  if (unit == "byte/second") {
    std::snprintf(buf, sizeof buf, "%.0f GB/s", m.value / 1e9);
    return buf;
  }
  if (unit == "flop/second") {
    std::snprintf(buf, sizeof buf, "%.2f TFLOP/s", m.value / 1e12);
    return buf;
  }
  if (unit == "percent") {
    std::snprintf(buf, sizeof buf, "%.1f %%", m.value);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.4g %s", m.value, unit.c_str());
  return buf;
}

// A short label for a stored metric (docs/counters.md names them); unknown names stay as they are.
std::string metric_label(const std::string& name) {
  static const std::pair<const char*, const char*> labels[] = {
      {"gpu__time_duration.sum", "duration (counters pass)"},
      {"dram__bytes_read.sum", "DRAM read"},
      {"dram__bytes_write.sum", "DRAM write"},
      {"lts__t_bytes.sum", "L2 bytes"},
      {"l1tex__t_bytes.sum", "L1/TEX bytes"},
      {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM throughput"},
      {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed", "SM active"},
      {"sm__inst_executed.avg.pct_of_peak_sustained_active", "issue active"},
      {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", "tensor pipe"},
      {"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed", "HMMA pipe"},
      {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", "tensor ops bf16"},
      {"sm__ops_path_tensor_src_fp16.sum", "tensor ops fp16"},
      {"sm__ops_path_tensor_src_tf32_dst_fp32.sum", "tensor ops tf32"},
      {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "FFMA"},
      {"sm__sass_thread_inst_executed_op_fadd_pred_on.sum", "FADD"},
      {"sm__sass_thread_inst_executed_op_fmul_pred_on.sum", "FMUL"},
      {"fusionscope/dram_bytes", "DRAM bytes"},
      {"fusionscope/tensor_flops", "tensor FLOPs"},
      {"fusionscope/fp32_flops", "fp32 FLOPs"},
      {"fusionscope/flops", "FLOPs"},
      {"fusionscope/dram_bandwidth", "DRAM bandwidth (counters pass)"},
      {"fusionscope/flop_rate", "FLOP rate (counters pass)"},
      {"fusionscope/arithmetic_intensity", "FLOP per DRAM byte"},
  };
  for (const auto& [raw, label] : labels)
    if (name == raw) return label;
  return name;
}

// What launched a kernel or memop, by its correlation id.
void launch_rows(const TimelineRun& tr, uint32_t correlation_id, int64_t work_start) {
  const storage::RunData& d = tr.run->data;
  row_text("Correlation", correlation_id ? std::to_string(correlation_id) : "unknown");
  const auto api = tr.run->index.correlation.api_call(correlation_id);
  if (!api) {
    row_text("Launched by", "not recorded");
    return;
  }
  const storage::ApiCallRecord& a = d.api_calls[*api];
  row_text("Launched by", d.str(a.name) + " on thread " + std::to_string(a.thread_id));
  row_text("API call (CPU)", format_duration(dur(a.start_ns, a.end_ns)));
  row_text("Launch latency",
           format_duration(dur(a.start_ns, work_start)) + "  (API start to GPU start)");
}

bool begin_table() {
  return ImGui::BeginTable("##details", 2,
                           ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_RowBg);
}

void kernel_details(const TimelineRun& tr, uint32_t i, const Theme& theme) {
  const storage::RunData& d = tr.run->data;
  const storage::KernelRecord& k = d.kernels[i];
  ImGui::TextColored(theme.accent, "%s", tr.run->names.short_name(k.name).c_str());
  ImGui::TextDisabled("kernel in %s", tr.run->data.info.name.c_str());
  if (!begin_table()) return;
  ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
  row_text("Name", tr.run->names.full_name(k.name), true);
  if (tr.run->names.full_name(k.name) != d.str(k.name)) row_text("Mangled", d.str(k.name), true);
  row_text("Op", k.op ? d.str(k.op) : "(none)");
  row_text("Duration", format_duration(dur(k.start_ns, k.end_ns)));
  row_text("Start", format_duration(dur(tr.origin_ns, k.start_ns)) + " on the axis");
  row_text("Device, stream", std::to_string(k.device) + ", " + std::to_string(k.stream));
  const uint64_t blocks = uint64_t{k.grid.x} * k.grid.y * k.grid.z;
  const uint64_t threads = uint64_t{k.block.x} * k.block.y * k.block.z;
  row_text("Grid", dims(k.grid) + " = " + format_count(blocks) + " blocks");
  row_text("Block", dims(k.block) + " = " + format_count(threads) + " threads");
  row_text("Registers", std::to_string(k.registers) + " per thread");
  row_text("Shared memory", format_bytes(k.static_smem) + " static + " +
                                format_bytes(k.dynamic_smem) + " dynamic per block");
  launch_rows(tr, k.correlation_id, k.start_ns);
  ImGui::EndTable();
  // Hardware counters in a table of their own: metric names are long, and as keys of the table
  // above they would squeeze its values to nothing. Short labels; the full name on hover.
  const auto metrics = tr.run->metrics_for(k.correlation_id);
  if (metrics.empty()) return;
  ImGui::Spacing();
  ImGui::TextDisabled(
      "Hardware counters (counters pass: DRAM bytes as Nsight Compute counts them)");
  if (!ImGui::BeginTable("##counters", 2,
                         ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_RowBg))
    return;
  ImGui::TableSetupColumn("metric", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch, 1.2f);
  double read = -1, written = -1;
  for (const storage::KernelMetricRecord* m : metrics) {
    const std::string& name = d.str(m->name);
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    ImGui::TextDisabled("%s", metric_label(name).c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", name.c_str());
    ImGui::TableSetColumnIndex(1);
    ImGui::TextUnformatted(metric_value(d, *m).c_str());
    if (name == "dram__bytes_read.sum") read = m->value;
    if (name == "dram__bytes_write.sum") written = m->value;
  }
  if (read >= 0 && written >= 0 && k.end_ns > k.start_ns) {
    const double gbs = (read + written) / static_cast<double>(k.end_ns - k.start_ns);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f GB/s over this kernel's time", gbs);
    row_text("DRAM bandwidth", buf);
  }
  ImGui::EndTable();
}

void memop_details(const TimelineRun& tr, uint32_t i, const Theme& theme) {
  const storage::MemopRecord& m = tr.run->data.memops[i];
  ImGui::TextColored(theme.accent, "%s", memop_kind_name(m));
  if (!begin_table()) return;
  ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
  row_text("Size", format_bytes(static_cast<double>(m.bytes)));
  row_text("Duration", format_duration(dur(m.start_ns, m.end_ns)));
  if (m.end_ns > m.start_ns) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f GB/s",
                  static_cast<double>(m.bytes) / dur(m.start_ns, m.end_ns));
    row_text("Throughput", buf);
  }
  row_text("Start", format_duration(dur(tr.origin_ns, m.start_ns)) + " on the axis");
  row_text("Device, stream", std::to_string(m.device) + ", " + std::to_string(m.stream));
  launch_rows(tr, m.correlation_id, m.start_ns);
  ImGui::EndTable();
}

void api_details(const TimelineRun& tr, uint32_t i, const Theme& theme) {
  const storage::RunData& d = tr.run->data;
  const storage::ApiCallRecord& a = d.api_calls[i];
  ImGui::TextColored(theme.accent, "%s", d.str(a.name).c_str());
  ImGui::TextDisabled("CUDA %s API call",
                      a.domain == storage::ApiDomain::kDriver ? "driver" : "runtime");
  if (!begin_table()) return;
  ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
  row_text("Duration (CPU)", format_duration(dur(a.start_ns, a.end_ns)));
  row_text("Start", format_duration(dur(tr.origin_ns, a.start_ns)) + " on the axis");
  row_text("Thread", std::to_string(a.thread_id));
  row_text("Correlation", a.correlation_id ? std::to_string(a.correlation_id) : "none");
  const auto kernels = tr.run->index.correlation.kernels(a.correlation_id);
  for (size_t n = 0; n < kernels.size() && n < 16; ++n) {
    const storage::KernelRecord& k = d.kernels[kernels[n]];
    row_text(n == 0 ? "Launched" : "",
             tr.run->names.short_name(k.name) + "  (" + format_duration(dur(k.start_ns, k.end_ns)) +
                 ", latency " + format_duration(dur(a.start_ns, k.start_ns)) + ")");
  }
  if (kernels.size() > 16)
    row_text("", "... and " + format_count(kernels.size() - 16) + " more kernels");
  for (uint32_t m : tr.run->index.correlation.memops(a.correlation_id))
    row_text("Launched", std::string(memop_kind_name(d.memops[m])) + "  (" +
                             format_bytes(static_cast<double>(d.memops[m].bytes)) + ")");
  ImGui::EndTable();
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
    if (lane.thread_id != r.thread_id) continue;
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

void range_details(const TimelineRun& tr, uint32_t i, const Theme& theme) {
  const storage::RunData& d = tr.run->data;
  const storage::RangeRecord& r = d.ranges[i];
  ImGui::TextColored(theme.accent, "%s", d.str(r.name).c_str());
  ImGui::TextDisabled("%s, depth %u", range_kind_name(r.kind), static_cast<unsigned>(r.depth));
  if (!begin_table()) return;
  ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
  row_text("Duration (CPU)", format_duration(dur(r.start_ns, r.end_ns)));
  row_text("Start", format_duration(dur(tr.origin_ns, r.start_ns)) + " on the axis");
  row_text(r.kind == storage::RangeKind::kGpuAnnotation ? "Stream" : "Thread",
           std::to_string(r.thread_id));
  if (r.kind != storage::RangeKind::kGpuAnnotation) {
    const RangeWork w = range_work(tr, r);
    row_text("API calls", format_count(w.launches) + (w.capped ? "+" : ""));
    row_text("Kernels launched", format_count(w.kernels));
    if (w.kernels > 0) {
      row_text("Their GPU time", format_duration(static_cast<double>(w.kernel_time)));
      row_text("GPU span", format_duration(dur(w.first_start, w.last_end)) +
                               "  (first kernel start to last end)");
    }
  }
  ImGui::EndTable();
}

}  // namespace

void draw_item_tooltip(const TimelineRun& tr, const ItemRef& item, const Theme& theme) {
  const storage::RunData& d = tr.run->data;
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40.0f);
  switch (item.kind) {
    case ItemKind::kKernel: {
      const storage::KernelRecord& k = d.kernels[item.index];
      ImGui::TextColored(theme.accent, "%s", tr.run->names.short_name(k.name).c_str());
      ImGui::TextDisabled("%s", tr.run->names.full_name(k.name).c_str());
      ImGui::Text("%s   op %s", format_duration(dur(k.start_ns, k.end_ns)).c_str(),
                  k.op ? d.str(k.op).c_str() : "(none)");
      ImGui::Text("grid %s  block %s", dims(k.grid).c_str(), dims(k.block).c_str());
      if (auto api = tr.run->index.correlation.api_call(k.correlation_id))
        ImGui::Text("launch latency %s",
                    format_duration(dur(d.api_calls[*api].start_ns, k.start_ns)).c_str());
      break;
    }
    case ItemKind::kMemop: {
      const storage::MemopRecord& m = d.memops[item.index];
      ImGui::TextColored(theme.accent, "%s", memop_kind_name(m));
      ImGui::Text("%s in %s", format_bytes(static_cast<double>(m.bytes)).c_str(),
                  format_duration(dur(m.start_ns, m.end_ns)).c_str());
      break;
    }
    case ItemKind::kApiCall: {
      const storage::ApiCallRecord& a = d.api_calls[item.index];
      ImGui::TextColored(theme.accent, "%s", d.str(a.name).c_str());
      ImGui::Text("%s on the CPU", format_duration(dur(a.start_ns, a.end_ns)).c_str());
      const auto kernels = tr.run->index.correlation.kernels(a.correlation_id);
      if (!kernels.empty())
        ImGui::Text("launched %s",
                    tr.run->names.short_name(d.kernels[kernels.front()].name).c_str());
      break;
    }
    case ItemKind::kRange: {
      const storage::RangeRecord& r = d.ranges[item.index];
      ImGui::TextColored(theme.accent, "%s", d.str(r.name).c_str());
      ImGui::Text("%s  (%s)", format_duration(dur(r.start_ns, r.end_ns)).c_str(),
                  range_kind_name(r.kind));
      break;
    }
    case ItemKind::kNone:
      break;
  }
  ImGui::PopTextWrapPos();
}

void draw_item_details(const TimelineState& state, std::span<const TimelineRun> runs,
                       const Theme& theme) {
  const ItemRef& item = state.selected;
  if (!item.valid() || item.run >= static_cast<int>(runs.size())) {
    ImGui::TextDisabled("Click an item in the timeline to see its details.");
    ImGui::Spacing();
    ImGui::TextDisabled("Wheel or W/S: zoom   Drag or A/D: pan");
    ImGui::TextDisabled("Shift-drag or right-drag: measure");
    ImGui::TextDisabled("Double-click: zoom to item   F: fit");
    return;
  }
  const TimelineRun& tr = runs[static_cast<size_t>(item.run)];
  switch (item.kind) {
    case ItemKind::kKernel:
      kernel_details(tr, item.index, theme);
      break;
    case ItemKind::kMemop:
      memop_details(tr, item.index, theme);
      break;
    case ItemKind::kApiCall:
      api_details(tr, item.index, theme);
      break;
    case ItemKind::kRange:
      range_details(tr, item.index, theme);
      break;
    case ItemKind::kNone:
      break;
  }
}

}  // namespace fusionscope::ui
