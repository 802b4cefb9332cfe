// The per-name summary that `export --summary-csv` writes: the statistics of every kernel name of a
// real PyTorch trace, computed here from its records, and their CSV.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/kernel_summary.h"
#include "csv_reader.h"
#include "fixture_json.h"
#include "fusionscope/interchange/csv_export.h"
#include "fusionscope/interchange/torch_trace_import.h"

namespace {

using fusionscope::cli::summarize_kernels;
using fusionscope::interchange::read_torch_trace;
using fusionscope::interchange::to_run_data;
using fusionscope::storage::RunData;
using fusionscope::testing::read_csv;
using fusionscope::testing::Rows;
namespace t = fusionscope::testing;

RunData eager_run() {
  return to_run_data(read_torch_trace(t::fixture_path(t::kGegluEager)));
}

TEST(KernelSummary, SummaryHasOneRowPerNameWithItsStatistics) {
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
  fusionscope::interchange::write_kernel_summary_csv(out, summary);
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

}  // namespace
