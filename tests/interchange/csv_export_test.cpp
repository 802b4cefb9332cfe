// CSV export: one row per kernel, and per-name statistics, readable back by an RFC 4180 reader
// (kernel names such as "void at::native::vectorized_elementwise_kernel<8, ...>" hold commas).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fixture_json.h"
#include "fusionscope/interchange/csv_export.h"
#include "fusionscope/interchange/torch_trace_import.h"

namespace {

using fusionscope::interchange::read_torch_trace;
using fusionscope::interchange::summarize_kernels;
using fusionscope::interchange::to_run_data;
using fusionscope::storage::RunData;
namespace t = fusionscope::testing;

using Rows = std::vector<std::vector<std::string>>;

// A small RFC 4180 reader, written for the test.
Rows read_csv(const std::string& text) {
  Rows rows(1);
  std::string field;
  bool quoted = false, row_has_data = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
      row_has_data = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
      row_has_data = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      rows.back().push_back(field);
      field.clear();
      rows.emplace_back();
      row_has_data = false;
    } else {
      field += c;
      row_has_data = true;
    }
  }
  if (row_has_data) rows.back().push_back(field);
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

RunData eager_run() {
  return to_run_data(read_torch_trace(t::fixture_path(t::kGegluEager)));
}

TEST(CsvExport, OneRowPerKernelInStartOrder) {
  const RunData run = eager_run();
  std::ostringstream out;
  fusionscope::interchange::write_kernel_csv(out, run);
  const Rows rows = read_csv(out.str());
  ASSERT_EQ(rows.size(), run.kernels.size() + 1);
  const auto& header = rows[0];
  ASSERT_EQ(header.size(), 16u);
  EXPECT_EQ(header[0], "name");
  EXPECT_EQ(header[6], "duration_ns");

  std::vector<fusionscope::storage::KernelRecord> by_start = run.kernels;
  std::stable_sort(by_start.begin(), by_start.end(),
                   [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  for (size_t i = 0; i < by_start.size(); ++i) {
    const auto& row = rows[i + 1];
    const auto& k = by_start[i];
    ASSERT_EQ(row.size(), header.size()) << "row " << i;
    EXPECT_EQ(row[0], run.str(k.name));  // commas inside survive quoting
    EXPECT_EQ(row[1], run.str(k.op));
    EXPECT_EQ(row[4], std::to_string(k.correlation_id));
    EXPECT_EQ(row[5], std::to_string(k.start_ns - run.begin_ns));
    EXPECT_EQ(row[6], std::to_string(k.end_ns - k.start_ns));
    EXPECT_EQ(row[7], std::to_string(k.grid.x));
    EXPECT_EQ(row[13], std::to_string(k.registers));
  }
}

TEST(CsvExport, SummaryHasOneRowPerNameWithItsStatistics) {
  const RunData run = eager_run();
  struct Expected {
    int count = 0;
    int64_t total = 0, min = INT64_MAX, max = 0;
  };
  std::map<std::string, Expected> expected;
  int64_t all = 0;
  for (const auto& k : run.kernels) {
    auto& e = expected[run.str(k.name)];
    const int64_t d = k.end_ns - k.start_ns;
    ++e.count;
    e.total += d;
    e.min = std::min(e.min, d);
    e.max = std::max(e.max, d);
    all += d;
  }
  const auto summary = summarize_kernels(run);
  ASSERT_EQ(summary.size(), expected.size());
  ASSERT_EQ(summary.size(), 4u);  // two GEMM shapes, gelu, mul
  double percent = 0;
  for (size_t i = 0; i < summary.size(); ++i) {
    const auto& row = summary[i];
    const auto& e = expected.at(row.name);
    EXPECT_EQ(row.count, static_cast<uint64_t>(e.count));
    EXPECT_EQ(row.total_ns, e.total);
    EXPECT_EQ(row.min_ns, e.min);
    EXPECT_EQ(row.max_ns, e.max);
    EXPECT_DOUBLE_EQ(row.mean_ns, static_cast<double>(e.total) / e.count);
    EXPECT_NEAR(row.percent_of_gpu_time,
                100.0 * static_cast<double>(e.total) / static_cast<double>(all), 1e-9);
    if (i > 0) {
      EXPECT_GE(summary[i - 1].total_ns, row.total_ns);
    }
    percent += row.percent_of_gpu_time;
  }
  EXPECT_NEAR(percent, 100.0, 1e-9);

  std::ostringstream out;
  fusionscope::interchange::write_kernel_summary_csv(out, run);
  const Rows rows = read_csv(out.str());
  ASSERT_EQ(rows.size(), summary.size() + 1);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"name", "count", "total_us", "mean_us", "min_us",
                                               "max_us", "percent_gpu_time"}));
  for (size_t i = 0; i < summary.size(); ++i) {
    EXPECT_EQ(rows[i + 1][0], summary[i].name);
    EXPECT_EQ(rows[i + 1][1], std::to_string(summary[i].count));
    // Microseconds with three decimals: the nanoseconds, exactly.
    const std::string total = rows[i + 1][2];
    const auto dot = total.find('.');
    ASSERT_NE(dot, std::string::npos);
    EXPECT_EQ(total.substr(0, dot) + total.substr(dot + 1), std::to_string(summary[i].total_ns));
  }
}

TEST(CsvExport, EmptyRunHasOnlyHeaders) {
  const RunData run;
  std::ostringstream kernels, summary;
  fusionscope::interchange::write_kernel_csv(kernels, run);
  fusionscope::interchange::write_kernel_summary_csv(summary, run);
  EXPECT_EQ(read_csv(kernels.str()).size(), 1u);
  EXPECT_EQ(read_csv(summary.str()).size(), 1u);
}

}  // namespace
