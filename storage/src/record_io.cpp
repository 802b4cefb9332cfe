// The session's tables: record batches in (multi-row INSERTs through cached statements) and out,
// run rows, the session row and its properties.
#include "record_io.h"

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "digest.h"
#include "sqlite_db.h"

namespace fusionscope::storage::detail {

namespace {

// Rows per INSERT statement: amortizes the per-statement cost of SQLite's VM over many rows.
constexpr size_t kRowsPerStatement = 64;

// Binds one row's values to consecutive parameters; collects the first error.
class RowBinder {
 public:
  RowBinder(sqlite3_stmt* st, int first) : st_(st), next_(first) {}
  RowBinder& operator<<(int64_t v) {
    rc_ |= sqlite3_bind_int64(st_, next_++, v);
    return *this;
  }
  RowBinder& operator<<(uint32_t v) { return *this << int64_t{v}; }
  RowBinder& operator<<(int32_t v) { return *this << int64_t{v}; }
  RowBinder& operator<<(double v) {
    rc_ |= sqlite3_bind_double(st_, next_++, v);
    return *this;
  }
  RowBinder& operator<<(const std::string& v) {
    rc_ |= sqlite3_bind_text(st_, next_++, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  int rc() const { return rc_; }

 private:
  sqlite3_stmt* st_;
  int next_;
  int rc_ = SQLITE_OK;
};

void bind_row(RowBinder& b, const KernelRecord& r) {
  b << r.start_ns << r.end_ns << r.device << r.stream << r.correlation_id << r.name << r.op
    << r.grid.x << r.grid.y << r.grid.z << r.block.x << r.block.y << r.block.z << r.registers
    << r.static_smem << r.dynamic_smem << r.pid << r.external_id << r.extra;
}
void bind_row(RowBinder& b, const ApiCallRecord& r) {
  b << r.start_ns << r.end_ns << r.thread_id << r.correlation_id << r.name
    << static_cast<uint32_t>(r.domain) << r.pid << r.external_id << r.extra;
}
void bind_row(RowBinder& b, const RangeRecord& r) {
  b << r.start_ns << r.end_ns << r.thread_id << r.name << static_cast<uint32_t>(r.kind) << r.pid
    << r.external_id << r.extra << r.event_index;
}
void bind_row(RowBinder& b, const MemopRecord& r) {
  b << r.start_ns << r.end_ns << r.device << r.stream << r.correlation_id
    << static_cast<int64_t>(r.bytes) << static_cast<uint32_t>(r.kind)
    << static_cast<uint32_t>(r.copy_kind) << r.pid << r.external_id << r.extra;
}
void bind_row(RowBinder& b, const KernelMetricRecord& r) {
  b << r.correlation_id << r.name << r.unit << r.value;
}
void bind_row(RowBinder& b, const SampleRecord& r) {
  b << r.t_ns << r.metric << r.value;
}
void bind_row(RowBinder& b, const ProcessRecord& r) {
  b << r.pid << r.name;
}
void bind_row(RowBinder& b, const ThreadRecord& r) {
  b << r.pid << r.thread_id << r.name;
}
void bind_row(RowBinder& b, const RunExtraRecord& r) {
  b << r.key << r.value;
}

// Table and columns (after run_id) of each record type, in bind_row order. `v3_columns` reads a
// table as version 3 laid it out (the columns version 4 added read as their defaults), for the
// version-3 step of a migration; `since` is the version that added the table.
struct TableSpec {
  const char* table;
  const char* columns;
  int count;
  const char* v3_columns = nullptr;  // nullptr: the same as `columns`
  int since = 1;
};
constexpr TableSpec spec_of(const KernelRecord*) {
  return {
      "kernels",
      "start_ns, end_ns, device, stream, correlation_id, name_id, op_id, grid_x, grid_y, grid_z, "
      "block_x, block_y, block_z, registers, static_smem, dynamic_smem, pid, external_id, extra_id",
      19,
      "start_ns, end_ns, device, stream, correlation_id, name_id, op_id, grid_x, grid_y, grid_z, "
      "block_x, block_y, block_z, registers, static_smem, dynamic_smem, pid, 0, 0"};
}
constexpr TableSpec spec_of(const ApiCallRecord*) {
  return {
      "api_calls",
      "start_ns, end_ns, thread_id, correlation_id, name_id, domain, pid, external_id, extra_id", 9,
      "start_ns, end_ns, thread_id, correlation_id, name_id, domain, pid, 0, 0"};
}
constexpr TableSpec spec_of(const RangeRecord*) {
  return {"ranges",
          "start_ns, end_ns, thread_id, name_id, kind, pid, external_id, extra_id, ev_idx", 9,
          "start_ns, end_ns, thread_id, name_id, kind, pid, 0, 0, -1"};
}
constexpr TableSpec spec_of(const MemopRecord*) {
  return {"memops",
          "start_ns, end_ns, device, stream, correlation_id, bytes, kind, copy_kind, pid, "
          "external_id, extra_id",
          11,
          "start_ns, end_ns, device, stream, correlation_id, bytes, kind, copy_kind, pid, 0, 0"};
}
constexpr TableSpec spec_of(const KernelMetricRecord*) {
  return {"kernel_metrics", "correlation_id, name_id, unit_id, value", 4};
}
constexpr TableSpec spec_of(const SampleRecord*) {
  return {"samples", "t_ns, metric_id, value", 3};
}
constexpr TableSpec spec_of(const ProcessRecord*) {
  return {"processes", "pid, name_id", 2};
}
constexpr TableSpec spec_of(const ThreadRecord*) {
  return {"threads", "pid, thread_id, name_id", 3, nullptr, 4};
}
constexpr TableSpec spec_of(const RunExtraRecord*) {
  return {"run_extras", "key, value", 2, nullptr, 4};
}

std::string insert_sql(const TableSpec& spec, size_t rows, bool replace) {
  std::string row = "(?1";
  for (int i = 0; i < spec.count; ++i) row += ",?";
  row += ')';
  std::string sql = std::string(replace ? "INSERT OR REPLACE INTO " : "INSERT INTO ") + spec.table +
                    " (run_id, " + spec.columns + ") VALUES ";
  for (size_t r = 0; r < rows; ++r) {
    if (r) sql += ',';
    sql += row;
  }
  return sql;
}

uint32_t u32(const Statement& st, int col) {
  return static_cast<uint32_t>(st.int64(col));
}

KernelRecord read_kernel(const Statement& st) {
  KernelRecord r;
  r.start_ns = st.int64(0);
  r.end_ns = st.int64(1);
  r.device = u32(st, 2);
  r.stream = u32(st, 3);
  r.correlation_id = u32(st, 4);
  r.name = u32(st, 5);
  r.op = u32(st, 6);
  r.grid = {u32(st, 7), u32(st, 8), u32(st, 9)};
  r.block = {u32(st, 10), u32(st, 11), u32(st, 12)};
  r.registers = u32(st, 13);
  r.static_smem = u32(st, 14);
  r.dynamic_smem = u32(st, 15);
  r.pid = u32(st, 16);
  r.external_id = st.int64(17);
  r.extra = u32(st, 18);
  return r;
}
ApiCallRecord read_api_call(const Statement& st) {
  ApiCallRecord r;
  r.start_ns = st.int64(0);
  r.end_ns = st.int64(1);
  r.thread_id = u32(st, 2);
  r.correlation_id = u32(st, 3);
  r.name = u32(st, 4);
  r.domain = static_cast<ApiDomain>(st.int64(5));
  r.pid = u32(st, 6);
  r.external_id = st.int64(7);
  r.extra = u32(st, 8);
  return r;
}
RangeRecord read_range(const Statement& st) {
  RangeRecord r;
  r.start_ns = st.int64(0);
  r.end_ns = st.int64(1);
  r.thread_id = u32(st, 2);
  r.name = u32(st, 3);
  r.kind = static_cast<RangeKind>(st.int64(4));
  r.pid = u32(st, 5);
  r.external_id = st.int64(6);
  r.extra = u32(st, 7);
  r.event_index = static_cast<int32_t>(st.int64(8));
  return r;
}
MemopRecord read_memop(const Statement& st) {
  MemopRecord r;
  r.start_ns = st.int64(0);
  r.end_ns = st.int64(1);
  r.device = u32(st, 2);
  r.stream = u32(st, 3);
  r.correlation_id = u32(st, 4);
  r.bytes = static_cast<uint64_t>(st.int64(5));
  r.kind = static_cast<MemopKind>(st.int64(6));
  r.copy_kind = static_cast<CopyKind>(st.int64(7));
  r.pid = u32(st, 8);
  r.external_id = st.int64(9);
  r.extra = u32(st, 10);
  return r;
}
KernelMetricRecord read_metric(const Statement& st) {
  KernelMetricRecord r;
  r.correlation_id = u32(st, 0);
  r.name = u32(st, 1);
  r.unit = u32(st, 2);
  r.value = st.real(3);
  return r;
}
SampleRecord read_sample(const Statement& st) {
  SampleRecord r;
  r.t_ns = st.int64(0);
  r.metric = u32(st, 1);
  r.value = st.real(2);
  return r;
}
ProcessRecord read_process(const Statement& st) {
  ProcessRecord r;
  r.pid = u32(st, 0);
  r.name = u32(st, 1);
  return r;
}
ThreadRecord read_thread(const Statement& st) {
  ThreadRecord r;
  r.pid = u32(st, 0);
  r.thread_id = u32(st, 1);
  r.name = u32(st, 2);
  return r;
}
RunExtraRecord read_extra(const Statement& st) {
  return {st.text(0), st.text(1)};
}

// The order each table is read in. Timeline records need none (arrange_run sorts them into
// lanes; an ORDER BY here would make SQLite sort a copy first). Metrics keep insertion order per
// kernel, samples come in (metric, t), processes by pid: each straight from its index.
template <typename R>
constexpr const char* read_order() {
  if constexpr (std::is_same_v<R, KernelMetricRecord>) return " ORDER BY correlation_id, id";
  if constexpr (std::is_same_v<R, SampleRecord>) return " ORDER BY metric_id, t_ns";
  if constexpr (std::is_same_v<R, ProcessRecord>) return " ORDER BY pid";
  if constexpr (std::is_same_v<R, ThreadRecord>) return " ORDER BY pid, thread_id";
  if constexpr (std::is_same_v<R, RunExtraRecord>) return " ORDER BY key";
  return "";
}

struct RowExtent {
  size_t count = 0;
  int64_t first_id = 0, last_id = -1;
};

// How many rows a run has in `table` and where they lie in rowid order (from the run_id index).
RowExtent row_extent(Database& db, const char* table, int64_t run_id) {
  Statement& st = db.statement(std::string("SELECT count(*), min(id), max(id) FROM ") + table +
                               " WHERE run_id = ?");
  st.bind(1, run_id);
  RowExtent e;
  if (st.step() && st.int64(0) > 0)
    e = {static_cast<size_t>(st.int64(0)), st.int64(1), st.int64(2)};
  st.reset();
  return e;
}

template <typename R, typename Read>
void load_table(Database& db, int64_t run_id, std::vector<R>& out, Read read, int version) {
  const TableSpec spec = spec_of(static_cast<const R*>(nullptr));
  if (version < spec.since) return;
  const bool ordered = read_order<R>()[0] != '\0';
  const char* columns = version < 4 && spec.v3_columns != nullptr ? spec.v3_columns : spec.columns;
  std::string sql = std::string("SELECT ") + columns + " FROM " + spec.table;
  RowExtent extent;
  if (ordered) {
    sql += std::string(" WHERE run_id = ?1") + read_order<R>();
  } else {
    extent = row_extent(db, spec.table, run_id);
    if (extent.count == 0) return;
    out.reserve(extent.count);
    // A rowid range scan reads the table sequentially whatever order the rows were inserted in;
    // following the (run_id, start) index would visit them in start order, one seek per row.
    // "+run_id" keeps SQLite from choosing that index.
    sql += " WHERE id BETWEEN ?2 AND ?3 AND +run_id = ?1";
  }
  Statement& st = db.statement(sql);
  st.bind(1, run_id);
  if (!ordered) {
    st.bind(2, extent.first_id);
    st.bind(3, extent.last_id);
  }
  while (st.step()) out.push_back(read(st));
}

constexpr const char* kRunColumns =
    "id, name, config_json, kind, variant, dtype, warmup, iterations, cuda_graph, wall_ns, status, "
    "error, trace_status, dropped_records, created_utc, state, records_digest, info_digest";

RunRow read_run(const Statement& st) {
  RunRow row;
  RunInfo& r = row.info;
  r.id = st.int64(0);
  r.name = st.text(1);
  r.config_json = st.text(2);
  r.kind = st.text(3);
  r.variant = st.text(4);
  r.dtype = st.text(5);
  r.warmup = static_cast<int>(st.int64(6));
  r.iterations = static_cast<int>(st.int64(7));
  r.cuda_graph = st.int64(8) != 0;
  r.wall_ns = st.int64(9);
  r.status = static_cast<RunStatus>(st.int64(10));
  r.error = st.text(11);
  r.trace_status = st.text(12);
  r.dropped_records = static_cast<uint64_t>(st.int64(13));
  r.created_utc = st.text(14);
  r.state = static_cast<RunState>(st.int64(15));
  row.records_digest = st.text(16);
  row.info_digest = st.text(17);
  return row;
}

}  // namespace

template <typename R>
void insert_records(Database& db, int64_t run_id, std::span<const R> records) {
  const TableSpec spec = spec_of(static_cast<const R*>(nullptr));
  const bool replace = std::is_same_v<R, ProcessRecord> || std::is_same_v<R, ThreadRecord> ||
                       std::is_same_v<R, RunExtraRecord>;
  auto insert = [&](Statement& st, std::span<const R> rows) {
    sqlite3_stmt* h = st.handle();
    sqlite3_reset(h);
    int rc = sqlite3_bind_int64(h, 1, run_id);
    for (size_t i = 0; i < rows.size(); ++i) {
      RowBinder b(h, 2 + static_cast<int>(i) * spec.count);
      bind_row(b, rows[i]);
      rc |= b.rc();
    }
    if (rc != SQLITE_OK) db.fail(rc, std::string("writing ") + spec.table);
    st.run();
  };
  size_t i = 0;
  if (!replace && records.size() >= kRowsPerStatement) {
    Statement& many = db.statement(insert_sql(spec, kRowsPerStatement, replace));
    for (; i + kRowsPerStatement <= records.size(); i += kRowsPerStatement)
      insert(many, records.subspan(i, kRowsPerStatement));
  }
  if (i < records.size()) {
    Statement& one = db.statement(insert_sql(spec, 1, replace));
    for (; i < records.size(); ++i) insert(one, records.subspan(i, 1));
  }
}

template void insert_records(Database&, int64_t, std::span<const KernelRecord>);
template void insert_records(Database&, int64_t, std::span<const ApiCallRecord>);
template void insert_records(Database&, int64_t, std::span<const RangeRecord>);
template void insert_records(Database&, int64_t, std::span<const MemopRecord>);
template void insert_records(Database&, int64_t, std::span<const KernelMetricRecord>);
template void insert_records(Database&, int64_t, std::span<const SampleRecord>);
template void insert_records(Database&, int64_t, std::span<const ProcessRecord>);
template void insert_records(Database&, int64_t, std::span<const ThreadRecord>);
template void insert_records(Database&, int64_t, std::span<const RunExtraRecord>);

void read_run_records(Database& db, int64_t run_id, RunData& d, int version) {
  load_table(db, run_id, d.kernels, read_kernel, version);
  load_table(db, run_id, d.api_calls, read_api_call, version);
  load_table(db, run_id, d.ranges, read_range, version);
  load_table(db, run_id, d.memops, read_memop, version);
  load_table(db, run_id, d.kernel_metrics, read_metric, version);
  load_table(db, run_id, d.samples, read_sample, version);
  load_table(db, run_id, d.processes, read_process, version);
  load_table(db, run_id, d.threads, read_thread, version);
  load_table(db, run_id, d.extras, read_extra, version);
}

std::optional<RunRow> read_run_row(Database& db, int64_t run_id) {
  Statement& st = db.statement(std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?");
  st.bind(1, run_id);
  std::optional<RunRow> out;
  if (st.step()) out = read_run(st);
  st.reset();
  return out;
}

std::vector<RunRow> read_run_rows(Database& db) {
  std::vector<RunRow> out;
  Statement& st = db.statement(std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY id");
  while (st.step()) out.push_back(read_run(st));
  return out;
}

void bind_run_description(Statement& st, const RunInfo& r) {
  st.bind(1, std::string_view(r.name));
  st.bind(2, std::string_view(r.config_json));
  st.bind(3, std::string_view(r.kind));
  st.bind(4, std::string_view(r.variant));
  st.bind(5, std::string_view(r.dtype));
  st.bind(6, int64_t{r.warmup});
  st.bind(7, int64_t{r.iterations});
  st.bind(8, int64_t{r.cuda_graph ? 1 : 0});
  st.bind(9, r.wall_ns);
  st.bind(10, static_cast<int64_t>(r.status));
  st.bind(11, std::string_view(r.error));
  st.bind(12, std::string_view(r.trace_status));
  st.bind(13, static_cast<int64_t>(r.dropped_records));
  st.bind(14, std::string_view(r.created_utc));
}

SessionInfo read_session_row(Database& db) {
  SessionInfo s;
  Statement& st = db.statement(
      "SELECT name, created_utc, host, gpu_name, cc_major, cc_minor, sm_count, mem_bandwidth_gbs, "
      "peak_fp32_tflops, peak_tensor_tflops, calibrated_bandwidth_gbs, calibrated_tensor_tflops, "
      "driver_version, cuda_version, cupti_version, notes FROM session WHERE id = 1");
  if (st.step()) {
    s.name = st.text(0);
    s.created_utc = st.text(1);
    s.host = st.text(2);
    s.gpu_name = st.text(3);
    s.cc_major = static_cast<int>(st.int64(4));
    s.cc_minor = static_cast<int>(st.int64(5));
    s.sm_count = static_cast<int>(st.int64(6));
    s.mem_bandwidth_gbs = st.real(7);
    s.peak_fp32_tflops = st.real(8);
    s.peak_tensor_tflops = st.real(9);
    s.calibrated_bandwidth_gbs = st.real(10);
    s.calibrated_tensor_tflops = st.real(11);
    s.driver_version = st.text(12);
    s.cuda_version = st.text(13);
    s.cupti_version = st.text(14);
    s.notes = st.text(15);
  }
  st.reset();
  return s;
}

std::vector<std::pair<std::string, std::string>> read_properties(Database& db) {
  std::vector<std::pair<std::string, std::string>> out;
  Statement& st = db.statement("SELECT key, value FROM properties ORDER BY key");
  while (st.step()) out.emplace_back(st.text(0), st.text(1));
  return out;
}

std::string read_session_digest(Database& db) {
  Statement& st = db.statement("SELECT digest FROM session WHERE id = 1");
  std::string out;
  if (st.step()) out = st.text(0);
  st.reset();
  return out;
}

void write_session_digest(Database& db) {
  Statement& st = db.statement("UPDATE session SET digest = ? WHERE id = 1");
  st.bind(1, std::string_view(session_digest(read_session_row(db), read_properties(db))));
  st.run();
}

int64_t string_id_limit(Database& db, int64_t first) {
  Statement& st = db.statement("SELECT count(*) FROM strings WHERE id >= ?");
  st.bind(1, first);
  const int64_t rows = st.step() ? st.int64(0) : 0;
  st.reset();
  // Ids are dense in files fusionscope writes; a few gaps are tolerated (another tool's file),
  // an id far beyond the row count is damage (and would cost memory for nothing).
  return std::min<int64_t>(first + 2 * rows + 65536, int64_t{1} << 28);
}

std::vector<std::string> read_all_strings(Database& db) {
  std::vector<std::string> out(1);
  const int64_t limit = string_id_limit(db, 1);
  Statement& st = db.statement("SELECT id, text FROM strings WHERE id > 0 ORDER BY id");
  while (st.step()) {
    const int64_t id = st.int64(0);
    if (id > limit)
      throw StoreError("session '" + db.display_path() + "': the string table is damaged (id " +
                       std::to_string(id) + ")");
    const auto index = static_cast<size_t>(id);
    if (index >= out.size()) out.resize(index + 1);
    out[index] = st.text(1);
  }
  return out;
}

bool delete_run_rows(Database& db, int64_t run_id) {
  // Explicit deletes rather than relying only on ON DELETE CASCADE: a file written by a tool
  // that left foreign keys off must not keep orphans either.
  for (const char* table : {"kernels", "api_calls", "ranges", "memops", "kernel_metrics", "samples",
                            "processes", "threads", "run_extras"}) {
    Statement& st = db.statement(std::string("DELETE FROM ") + table + " WHERE run_id = ?");
    st.bind(1, run_id);
    st.run();
  }
  Statement& st = db.statement("DELETE FROM runs WHERE id = ?");
  st.bind(1, run_id);
  st.run();
  return sqlite3_changes(db.handle()) > 0;
}

}  // namespace fusionscope::storage::detail
