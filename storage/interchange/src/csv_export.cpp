#include "fusionscope/interchange/csv_export.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <ostream>

#include "compressed_io.h"
#include "json_writer.h"

namespace fusionscope::interchange {
namespace {

using detail::append_int;
using detail::append_micros;
using detail::saturating_sub;

// A text cell a spreadsheet would run as a formula ("=HYPERLINK(...)", "+cmd", "-1+1", "@SUM")
// starts with an apostrophe instead, which shows it as the text it is (OWASP's CSV injection
// guard); a tab or carriage return first is treated the same.
bool looks_like_formula(std::string_view text) {
  return !text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos;
}

// RFC 4180: quote fields holding a comma, quote, or line break; double the quotes inside.
void append_field(std::string& out, std::string_view text) {
  const bool formula = looks_like_formula(text);
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) {
    if (formula) out += '\'';
    out += text;
    return;
  }
  out += '"';
  if (formula) out += '\'';
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

void append_fixed3(std::string& out, double value) {
  char buffer[64];
  const int n = std::snprintf(buffer, sizeof buffer, "%.3f", value);
  if (n > 0) out.append(buffer, std::min<size_t>(static_cast<size_t>(n), sizeof buffer - 1));
}

std::string kernel_csv(const storage::RunData& run) {
  std::vector<size_t> order(run.kernels.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&run](size_t a, size_t b) {
    return run.kernels[a].start_ns < run.kernels[b].start_ns;
  });
  std::string out =
      "name,op,device,stream,correlation_id,start_ns,duration_ns,grid_x,grid_y,grid_z,block_x,"
      "block_y,block_z,registers_per_thread,static_smem_bytes,dynamic_smem_bytes\r\n";
  for (size_t i : order) {
    const auto& k = run.kernels[i];
    append_field(out, run.str(k.name));
    out += ',';
    append_field(out, run.str(k.op));
    for (int64_t v : {int64_t{k.device}, int64_t{k.stream}, int64_t{k.correlation_id},
                      saturating_sub(k.start_ns, run.begin_ns),
                      saturating_sub(k.end_ns, k.start_ns), int64_t{k.grid.x}, int64_t{k.grid.y},
                      int64_t{k.grid.z}, int64_t{k.block.x}, int64_t{k.block.y}, int64_t{k.block.z},
                      int64_t{k.registers}, int64_t{k.static_smem}, int64_t{k.dynamic_smem}}) {
      out += ',';
      append_int(out, v);
    }
    out += "\r\n";
  }
  return out;
}

std::string summary_csv(std::span<const KernelSummaryRow> rows) {
  std::string out = "name,count,total_us,mean_us,min_us,max_us,percent_gpu_time\r\n";
  for (const auto& row : rows) {
    append_field(out, row.name);
    out += ',';
    append_int(out, row.count);
    out += ',';
    append_micros(out, row.total_ns);
    out += ',';
    append_fixed3(out, row.mean_ns / 1000.0);
    out += ',';
    append_micros(out, row.min_ns);
    out += ',';
    append_micros(out, row.max_ns);
    out += ',';
    append_fixed3(out, row.percent_of_gpu_time);
    out += "\r\n";
  }
  return out;
}

}  // namespace

void write_kernel_csv(std::ostream& out, const storage::RunData& run) {
  const std::string text = kernel_csv(run);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

void write_kernel_summary_csv(std::ostream& out, std::span<const KernelSummaryRow> rows) {
  const std::string text = summary_csv(rows);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

void export_kernel_csv(const std::filesystem::path& file, const storage::RunData& run) {
  detail::write_file(file, kernel_csv(run));
}

void export_kernel_summary_csv(const std::filesystem::path& file,
                               std::span<const KernelSummaryRow> rows) {
  detail::write_file(file, summary_csv(rows));
}

}  // namespace fusionscope::interchange
