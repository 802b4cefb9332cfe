// Export of a run's kernels to CSV (RFC 4180: comma-separated, quoted where needed, one header
// row): one row per kernel execution, or one row per kernel name with its statistics. The
// statistics are the caller's (the command line gives analysis' figures, as the app's statistics
// view shows them): the file formats need nothing beyond the store.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include "fusionscope/storage/session_store.h"

namespace fusionscope::interchange {

// Statistics of every execution of one kernel name within a run.
struct KernelSummaryRow {
  std::string name;
  uint64_t count = 0;
  int64_t total_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  double mean_ns = 0.0;
  double percent_of_gpu_time = 0.0;  // share of the summed duration of all the run's kernels
};

// Columns: name, op, device, stream, correlation_id, start_ns (from the run's first record),
// duration_ns, grid_x..z, block_x..z, registers_per_thread, static_smem_bytes, dynamic_smem_bytes.
// Rows in start order.
void write_kernel_csv(std::ostream& out, const storage::RunData& run);

// Columns: name, count, total_us, mean_us, min_us, max_us, percent_gpu_time; one row per given
// row, in the given order.
void write_kernel_summary_csv(std::ostream& out, std::span<const KernelSummaryRow> rows);

// File versions of the above. Throw InterchangeError when the file cannot be written.
void export_kernel_csv(const std::filesystem::path& file, const storage::RunData& run);
void export_kernel_summary_csv(const std::filesystem::path& file,
                               std::span<const KernelSummaryRow> rows);

}  // namespace fusionscope::interchange
