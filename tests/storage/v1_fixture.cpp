#include "v1_fixture.h"

#include <stdexcept>
#include <string>

#include <sqlite3.h>

namespace fusionscope::storage::testing {

namespace {

// Version 1 of the session format, frozen (a copy, on purpose: see the header).
constexpr const char* kV1 = R"sql(
PRAGMA page_size = 4096;
PRAGMA journal_mode = WAL;
PRAGMA application_id = 1179862082;  -- "FSDB"
CREATE TABLE session (id INTEGER PRIMARY KEY CHECK (id = 1), name TEXT NOT NULL DEFAULT '',
  created_utc TEXT NOT NULL DEFAULT '', host TEXT NOT NULL DEFAULT '', gpu_name TEXT NOT NULL DEFAULT '',
  cc_major INTEGER NOT NULL DEFAULT 0, cc_minor INTEGER NOT NULL DEFAULT 0, sm_count INTEGER NOT NULL DEFAULT 0,
  mem_bandwidth_gbs REAL NOT NULL DEFAULT 0, peak_fp32_tflops REAL NOT NULL DEFAULT 0,
  peak_tensor_tflops REAL NOT NULL DEFAULT 0, calibrated_bandwidth_gbs REAL NOT NULL DEFAULT 0,
  calibrated_tensor_tflops REAL NOT NULL DEFAULT 0, driver_version TEXT NOT NULL DEFAULT '',
  cuda_version TEXT NOT NULL DEFAULT '', cupti_version TEXT NOT NULL DEFAULT '', notes TEXT NOT NULL DEFAULT '');
CREATE TABLE runs (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '', config_json TEXT NOT NULL DEFAULT '',
  kind TEXT NOT NULL DEFAULT '', variant TEXT NOT NULL DEFAULT '', dtype TEXT NOT NULL DEFAULT '',
  warmup INTEGER NOT NULL DEFAULT 0, iterations INTEGER NOT NULL DEFAULT 0, cuda_graph INTEGER NOT NULL DEFAULT 0,
  wall_ns INTEGER NOT NULL DEFAULT 0, status INTEGER NOT NULL DEFAULT 0, error TEXT NOT NULL DEFAULT '',
  trace_status TEXT NOT NULL DEFAULT '', dropped_records INTEGER NOT NULL DEFAULT 0,
  created_utc TEXT NOT NULL DEFAULT '');
CREATE TABLE strings (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);
INSERT INTO strings (id, text) VALUES (0, '');
CREATE TABLE kernels (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, device INTEGER NOT NULL, stream INTEGER NOT NULL,
  correlation_id INTEGER NOT NULL, name_id INTEGER NOT NULL, op_id INTEGER NOT NULL, grid_x INTEGER NOT NULL,
  grid_y INTEGER NOT NULL, grid_z INTEGER NOT NULL, block_x INTEGER NOT NULL, block_y INTEGER NOT NULL,
  block_z INTEGER NOT NULL, registers INTEGER NOT NULL, static_smem INTEGER NOT NULL,
  dynamic_smem INTEGER NOT NULL);
CREATE INDEX kernels_by_run_start ON kernels (run_id, start_ns);
CREATE TABLE api_calls (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, thread_id INTEGER NOT NULL,
  correlation_id INTEGER NOT NULL, name_id INTEGER NOT NULL, domain INTEGER NOT NULL);
CREATE INDEX api_calls_by_run_start ON api_calls (run_id, start_ns);
CREATE TABLE ranges (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, thread_id INTEGER NOT NULL, name_id INTEGER NOT NULL,
  kind INTEGER NOT NULL);
CREATE INDEX ranges_by_run_start ON ranges (run_id, start_ns);
CREATE TABLE memops (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, device INTEGER NOT NULL, stream INTEGER NOT NULL,
  correlation_id INTEGER NOT NULL, bytes INTEGER NOT NULL, kind INTEGER NOT NULL, copy_kind INTEGER NOT NULL);
CREATE INDEX memops_by_run_start ON memops (run_id, start_ns);
CREATE TABLE kernel_metrics (id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE, correlation_id INTEGER NOT NULL,
  name_id INTEGER NOT NULL, unit_id INTEGER NOT NULL, value REAL NOT NULL);
CREATE INDEX kernel_metrics_by_run ON kernel_metrics (run_id, correlation_id);
CREATE TABLE samples (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  t_ns INTEGER NOT NULL, metric_id INTEGER NOT NULL, value REAL NOT NULL);
CREATE INDEX samples_by_run_metric ON samples (run_id, metric_id, t_ns);
PRAGMA user_version = 1;

INSERT INTO session (id, name, created_utc, gpu_name, cc_major, cc_minor, sm_count)
  VALUES (1, 'v1 session', '2025-06-01T10:00:00Z', 'NVIDIA A100-SXM4-80GB', 8, 0, 108);
INSERT INTO runs (id, name, kind, variant, dtype, iterations, status)
  VALUES (3, 'linear / eager', 'linear', 'eager', 'fp32', 10, 2);
INSERT INTO strings (id, text) VALUES (1, 'ampere_sgemm_64x32_sliced1x4_tn'), (2, 'cudaLaunchKernel'),
  (3, 'step'), (4, 'dram__bytes_read.sum'), (5, 'byte');
INSERT INTO kernels (run_id, start_ns, end_ns, device, stream, correlation_id, name_id, op_id, grid_x, grid_y,
  grid_z, block_x, block_y, block_z, registers, static_smem, dynamic_smem)
  VALUES (3, 2000, 2600, 0, 7, 11, 1, 3, 16, 1, 1, 128, 1, 1, 90, 8192, 0),
         (3, 1000, 1500, 0, 7, 10, 1, 3, 16, 1, 1, 128, 1, 1, 90, 8192, 0);
INSERT INTO api_calls (run_id, start_ns, end_ns, thread_id, correlation_id, name_id, domain)
  VALUES (3, 900, 950, 77, 10, 2, 0);
INSERT INTO ranges (run_id, start_ns, end_ns, thread_id, name_id, kind) VALUES (3, 800, 3000, 77, 3, 0);
INSERT INTO memops (run_id, start_ns, end_ns, device, stream, correlation_id, bytes, kind, copy_kind)
  VALUES (3, 3100, 3200, 0, 7, 12, 4096, 0, 2);
INSERT INTO kernel_metrics (run_id, correlation_id, name_id, unit_id, value) VALUES (3, 10, 4, 5, 1048576);
INSERT INTO samples (run_id, t_ns, metric_id, value) VALUES (3, 1200, 4, 0.5);
)sql";

void check(sqlite3* db, int rc, const char* what) {
  if (rc != SQLITE_OK) throw std::runtime_error(std::string(what) + ": " + sqlite3_errmsg(db));
}

}  // namespace

void write_v1_session(const std::filesystem::path& path, bool with_properties_table) {
  if (std::filesystem::exists(path))
    throw std::runtime_error("fixture path exists: " + path.string());
  sqlite3* db = nullptr;
  check(db, sqlite3_open(path.c_str(), &db), "open");
  check(db, sqlite3_exec(db, kV1, nullptr, nullptr, nullptr), "v1 schema");
  if (with_properties_table)
    check(db, sqlite3_exec(db, "CREATE TABLE properties (k TEXT)", nullptr, nullptr, nullptr),
          "extra");
  check(db, sqlite3_close(db), "close");
}

}  // namespace fusionscope::storage::testing
