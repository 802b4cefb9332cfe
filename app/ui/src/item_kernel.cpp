// Kernels: drawn on their GPU stream's row, coloured by op (or by name), labelled with the short
// name; details give the demangled name, launch geometry and resources, the launching API call
// and the hardware counters of the kernel's counters pass.
#include <cstdio>

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
  if (i >= d.kernels.size()) return false;
  start = d.kernels[i].start_ns;
  end = d.kernels[i].end_ns;
  return true;
}

ItemLook look(const ItemLookContext& c, uint32_t i) {
  const storage::KernelRecord& k = c.run->data.kernels[i];
  const bool by_op = c.mode == ColorMode::kByOp && k.op != storage::kNoString;
  return {c.run->colours.of(by_op ? k.op : k.name), c.run->names.short_name(k.name)};
}

std::string_view name_of(const LoadedRun& run, uint32_t i) {
  return run.names.short_name(run.data.kernels[i].name);
}

void links(const LoadedRun& run, uint32_t i, std::vector<ItemLink>& out) {
  if (auto api = run.index.correlation.api_call(run.data.kernels[i].correlation_id))
    out.push_back({ItemKind::kApiCall, *api});
}

void tooltip(const TimelineRun& tr, uint32_t i, const Theme& theme) {
  const storage::RunData& d = tr.run->data;
  const storage::KernelRecord& k = d.kernels[i];
  ImGui::TextColored(theme.accent, "%s", tr.run->names.short_name(k.name).c_str());
  ImGui::TextDisabled("%s", tr.run->names.full_name(k.name).c_str());
  ImGui::Text("%s   op %s", format_duration(duration(k.start_ns, k.end_ns)).c_str(),
              k.op ? d.str(k.op).c_str() : "(none)");
  ImGui::Text("grid %s  block %s", item_detail::dims(k.grid).c_str(),
              item_detail::dims(k.block).c_str());
  if (auto api = tr.run->index.correlation.api_call(k.correlation_id))
    ImGui::Text("launch latency %s",
                format_duration(duration(d.api_calls[*api].start_ns, k.start_ns)).c_str());
}

std::string metric_value(const storage::RunData& d, const storage::KernelMetricRecord& m) {
  const std::string& unit = d.str(m.unit);
  if (unit == "byte" || unit == "bytes") return format_bytes(m.value);
  if (unit == "ns" || unit == "nsecond" || unit == "nanosecond") return format_duration(m.value);
  if (unit == "byte/second") return analysis::format_bandwidth(m.value);
  if (unit == "flop/second") return analysis::format_flop_rate(m.value);
  if (unit == "percent") return analysis::format_percent(m.value / 100.0, 1);
  char buf[64];
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

// Hardware counters in a table of their own: metric names are long, and as keys of the details
// table they would squeeze its values to nothing. Short labels; the full name on hover.
void counters_table(const TimelineRun& tr, const storage::KernelRecord& k) {
  const storage::RunData& d = tr.run->data;
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
    const double bytes_per_s = (read + written) * 1e9 / static_cast<double>(k.end_ns - k.start_ns);
    row_text("DRAM bandwidth",
             analysis::format_bandwidth(bytes_per_s) + " over this kernel's time");
  }
  ImGui::EndTable();
}

void details(const TimelineRun& tr, uint32_t i, const Theme& theme) {
  const storage::RunData& d = tr.run->data;
  const storage::KernelRecord& k = d.kernels[i];
  ImGui::TextColored(theme.accent, "%s", tr.run->names.short_name(k.name).c_str());
  ImGui::TextDisabled("kernel in %s", tr.run->data.info.name.c_str());
  if (!item_detail::begin_table()) return;
  row_text("Name", tr.run->names.full_name(k.name), true);
  if (tr.run->names.full_name(k.name) != d.str(k.name)) row_text("Mangled", d.str(k.name), true);
  row_text("Op", k.op ? d.str(k.op) : "(none)");
  row_text("Duration", format_duration(duration(k.start_ns, k.end_ns)));
  row_text("Start", item_detail::start_text(tr, k.start_ns));
  row_text("Device, stream", std::to_string(k.device) + ", " + std::to_string(k.stream));
  const uint64_t blocks = uint64_t{k.grid.x} * k.grid.y * k.grid.z;
  const uint64_t threads = uint64_t{k.block.x} * k.block.y * k.block.z;
  row_text("Grid", item_detail::dims(k.grid) + " = " + format_count(blocks) + " blocks");
  row_text("Block", item_detail::dims(k.block) + " = " + format_count(threads) + " threads");
  row_text("Registers", std::to_string(k.registers) + " per thread");
  row_text("Shared memory", format_bytes(k.static_smem) + " static + " +
                                format_bytes(k.dynamic_smem) + " dynamic per block");
  item_detail::launch_rows(tr, k.correlation_id, k.start_ns);
  ImGui::EndTable();
  counters_table(tr, k);
}

size_t count(const storage::RunData& d) {
  return d.kernels.size();
}

}  // namespace

const ItemType kKernelItem = {ItemKind::kKernel, "kernel", extent, look, name_of, links,
                              tooltip,           details,  count};

}  // namespace fusionscope::ui
