// CSV export: one row per kernel, and per-name statistics, readable back by an RFC 4180 reader
// (kernel names such as "void at::native::vectorized_elementwise_kernel<8, ...>" hold commas).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "csv_reader.h"
#include "fixture_json.h"
#include "fusionscope/interchange/csv_export.h"
#include "fusionscope/interchange/torch_trace_import.h"

namespace {

using fusionscope::interchange::read_torch_trace;
using fusionscope::interchange::to_run_data;
using fusionscope::storage::RunData;
namespace t = fusionscope::testing;

using fusionscope::testing::read_csv;
using fusionscope::testing::Rows;

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

TEST(CsvExport, SummaryWritesTheGivenRowsInOrderQuotedAndExact) {
  using fusionscope::interchange::KernelSummaryRow;
  std::vector<KernelSummaryRow> given(2);
  given[0] = {"void k<8, \"x\">(float*, int)", 3, 1'234'567, 100, 900'000, 411'522.333, 75.25};
  given[1] = {"gelu", 1, 1'000, 1'000, 1'000, 1'000.0, 24.75};
  std::ostringstream out;
  fusionscope::interchange::write_kernel_summary_csv(out, given);
  const Rows rows = read_csv(out.str());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"name", "count", "total_us", "mean_us", "min_us",
                                               "max_us", "percent_gpu_time"}));
  // Commas and quotes in a name survive; microseconds are the nanoseconds exactly.
  EXPECT_EQ(rows[1], (std::vector<std::string>{given[0].name, "3", "1234.567", "411.522", "0.100",
                                               "900.000", "75.250"}));
  EXPECT_EQ(rows[2],
            (std::vector<std::string>{"gelu", "1", "1.000", "1.000", "1.000", "1.000", "24.750"}));
}

TEST(CsvExport, EmptyRunHasOnlyHeaders) {
  const RunData run;
  std::ostringstream kernels, summary;
  fusionscope::interchange::write_kernel_csv(kernels, run);
  fusionscope::interchange::write_kernel_summary_csv(summary, {});
  EXPECT_EQ(read_csv(kernels.str()).size(), 1u);
  EXPECT_EQ(read_csv(summary.str()).size(), 1u);
}

}  // namespace
