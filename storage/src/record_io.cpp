// Record ingest (one transaction per batch, multi-row INSERTs through cached statements) and
// loading a run into memory.
#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "fusionscope/storage/session_store.h"
#include "session_store_impl.h"

namespace fusionscope::storage {

using detail::Database;
using detail::Statement;

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
  RowBinder& operator<<(double v) {
    rc_ |= sqlite3_bind_double(st_, next_++, v);
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
    << r.static_smem << r.dynamic_smem;
}
void bind_row(RowBinder& b, const ApiCallRecord& r) {
  b << r.start_ns << r.end_ns << r.thread_id << r.correlation_id << r.name
    << static_cast<uint32_t>(r.domain);
}
void bind_row(RowBinder& b, const RangeRecord& r) {
  b << r.start_ns << r.end_ns << r.thread_id << r.name << static_cast<uint32_t>(r.kind);
}
void bind_row(RowBinder& b, const MemopRecord& r) {
  b << r.start_ns << r.end_ns << r.device << r.stream << r.correlation_id
    << static_cast<int64_t>(r.bytes) << static_cast<uint32_t>(r.kind)
    << static_cast<uint32_t>(r.copy_kind);
}
void bind_row(RowBinder& b, const KernelMetricRecord& r) {
  b << r.correlation_id << r.name << r.unit << r.value;
}
void bind_row(RowBinder& b, const SampleRecord& r) {
  b << r.t_ns << r.metric << r.value;
}

// Table and columns (after run_id) of each record type, in bind_row order.
struct TableSpec {
  const char* table;
  const char* columns;
  int count;
};
constexpr TableSpec spec_of(const KernelRecord*) {
  return {
      "kernels",
      "start_ns, end_ns, device, stream, correlation_id, name_id, op_id, grid_x, grid_y, grid_z, "
      "block_x, block_y, block_z, registers, static_smem, dynamic_smem",
      16};
}
constexpr TableSpec spec_of(const ApiCallRecord*) {
  return {"api_calls", "start_ns, end_ns, thread_id, correlation_id, name_id, domain", 6};
}
constexpr TableSpec spec_of(const RangeRecord*) {
  return {"ranges", "start_ns, end_ns, thread_id, name_id, kind", 5};
}
constexpr TableSpec spec_of(const MemopRecord*) {
  return {"memops", "start_ns, end_ns, device, stream, correlation_id, bytes, kind, copy_kind", 8};
}
constexpr TableSpec spec_of(const KernelMetricRecord*) {
  return {"kernel_metrics", "correlation_id, name_id, unit_id, value", 4};
}
constexpr TableSpec spec_of(const SampleRecord*) {
  return {"samples", "t_ns, metric_id, value", 3};
}

std::string insert_sql(const TableSpec& spec, size_t rows) {
  std::string row = "(?1";
  for (int i = 0; i < spec.count; ++i) row += ",?";
  row += ')';
  std::string sql =
      std::string("INSERT INTO ") + spec.table + " (run_id, " + spec.columns + ") VALUES ";
  for (size_t r = 0; r < rows; ++r) {
    if (r) sql += ',';
    sql += row;
  }
  return sql;
}

// String ids a record refers to must exist in the session.
template <typename R>
void check_strings(const detail::StoreState& s, const R& r) {
  auto check = [&](StringId id) {
    if (id >= s.strings.size())
      throw StoreError("session '" + s.path.string() + "': a record refers to string id " +
                       std::to_string(id) + ", which was not interned in this session");
  };
  if constexpr (std::is_same_v<R, KernelRecord>) {
    check(r.name);
    check(r.op);
  } else if constexpr (std::is_same_v<R, KernelMetricRecord>) {
    check(r.name);
    check(r.unit);
  } else if constexpr (std::is_same_v<R, SampleRecord>) {
    check(r.metric);
  } else if constexpr (std::is_same_v<R, MemopRecord>) {
  } else {
    check(r.name);
  }
}

template <typename R>
void insert_batch(detail::StoreState& s, int64_t run_id, std::span<const R> records) {
  const TableSpec spec = spec_of(static_cast<const R*>(nullptr));
  s.require_writable(std::string("insert ") + spec.table);
  if (records.empty()) return;
  for (const R& r : records) check_strings(s, r);

  // Rows go in in start order: the (run_id, start) index then grows at its end, and a run's
  // rows lie in the table in the order they are read back.
  std::vector<R> sorted;
  if constexpr (requires(const R& r) { r.start_ns; }) {
    auto by_start = [](const R& a, const R& b) { return a.start_ns < b.start_ns; };
    if (!std::is_sorted(records.begin(), records.end(), by_start)) {
      sorted.assign(records.begin(), records.end());
      std::stable_sort(sorted.begin(), sorted.end(), by_start);
      records = sorted;
    }
  }

  Database& db = *s.db;
  auto insert = [&](Statement& st, std::span<const R> rows) {
    sqlite3_stmt* h = st.handle();
    sqlite3_reset(h);
    int rc = sqlite3_bind_int64(h, 1, run_id);
    for (size_t i = 0; i < rows.size(); ++i) {
      RowBinder b(h, 2 + static_cast<int>(i) * spec.count);
      bind_row(b, rows[i]);
      rc |= b.rc();
    }
    if (rc != SQLITE_OK) db.fail(rc, std::string("binding ") + spec.table + " values");
    st.run();
  };
  s.write_transaction([&] {
    s.require_run(run_id);
    size_t i = 0;
    if (records.size() >= kRowsPerStatement) {
      Statement& many = db.statement(insert_sql(spec, kRowsPerStatement));
      for (; i + kRowsPerStatement <= records.size(); i += kRowsPerStatement)
        insert(many, records.subspan(i, kRowsPerStatement));
    }
    if (i < records.size()) {
      Statement& one = db.statement(insert_sql(spec, 1));
      for (; i < records.size(); ++i) insert(one, records.subspan(i, 1));
    }
  });
}

// A read transaction, so that a load sees one consistent state while a writer goes on.
class ReadTransaction {
 public:
  explicit ReadTransaction(Database& db) : db_(db) { db_.statement("BEGIN").run(); }
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;
  ~ReadTransaction() { sqlite3_exec(db_.handle(), "COMMIT", nullptr, nullptr, nullptr); }

 private:
  Database& db_;
};

uint32_t u32(const Statement& st, int col) {
  return static_cast<uint32_t>(st.int64(col));
}

// The order each table is read in. Timeline records need none (arrange_run sorts them into
// lanes; an ORDER BY here would make SQLite sort a copy first). Metrics keep insertion order per
// kernel, samples come in (metric, t): both straight from their index.
template <typename R>
constexpr const char* read_order() {
  if constexpr (std::is_same_v<R, KernelMetricRecord>) return " ORDER BY correlation_id, id";
  if constexpr (std::is_same_v<R, SampleRecord>) return " ORDER BY metric_id, t_ns";
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
void load_table(Database& db, int64_t run_id, std::vector<R>& out, Read read) {
  const TableSpec spec = spec_of(static_cast<const R*>(nullptr));
  const RowExtent extent = row_extent(db, spec.table, run_id);
  if (extent.count == 0) return;
  out.reserve(extent.count);
  std::string sql = std::string("SELECT ") + spec.columns + " FROM " + spec.table;
  if (read_order<R>()[0] != '\0') {
    sql += std::string(" WHERE run_id = ?1") + read_order<R>();
  } else {
    // A rowid range scan reads the table sequentially whatever order the rows were inserted in;
    // following the (run_id, start) index would visit them in start order, one seek per row.
    // "+run_id" keeps SQLite from choosing that index.
    sql += " WHERE id BETWEEN ?2 AND ?3 AND +run_id = ?1";
  }
  Statement& st = db.statement(sql);
  st.bind(1, run_id);
  if (read_order<R>()[0] == '\0') {
    st.bind(2, extent.first_id);
    st.bind(3, extent.last_id);
  }
  while (st.step()) out.push_back(read(st));
}

}  // namespace

void SessionStore::insert_kernels(int64_t run_id, std::span<const KernelRecord> records) {
  insert_batch(*impl_, run_id, records);
}
void SessionStore::insert_api_calls(int64_t run_id, std::span<const ApiCallRecord> records) {
  insert_batch(*impl_, run_id, records);
}
void SessionStore::insert_ranges(int64_t run_id, std::span<const RangeRecord> records) {
  insert_batch(*impl_, run_id, records);
}
void SessionStore::insert_memops(int64_t run_id, std::span<const MemopRecord> records) {
  insert_batch(*impl_, run_id, records);
}
void SessionStore::insert_kernel_metrics(int64_t run_id,
                                         std::span<const KernelMetricRecord> records) {
  insert_batch(*impl_, run_id, records);
}
void SessionStore::insert_samples(int64_t run_id, std::span<const SampleRecord> records) {
  insert_batch(*impl_, run_id, records);
}

RunData SessionStore::load_run(int64_t run_id) const {
  Database& db = *impl_->db;
  RunData d;
  {
    ReadTransaction read(db);
    impl_->refresh_strings();
    std::optional<RunInfo> info = run(run_id);
    if (!info) impl_->no_such_run(run_id);
    d.info = std::move(*info);
    load_table(db, run_id, d.kernels, [](const Statement& st) {
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
      return r;
    });
    load_table(db, run_id, d.api_calls, [](const Statement& st) {
      ApiCallRecord r;
      r.start_ns = st.int64(0);
      r.end_ns = st.int64(1);
      r.thread_id = u32(st, 2);
      r.correlation_id = u32(st, 3);
      r.name = u32(st, 4);
      r.domain = static_cast<ApiDomain>(st.int64(5));
      return r;
    });
    load_table(db, run_id, d.ranges, [](const Statement& st) {
      RangeRecord r;
      r.start_ns = st.int64(0);
      r.end_ns = st.int64(1);
      r.thread_id = u32(st, 2);
      r.name = u32(st, 3);
      r.kind = static_cast<RangeKind>(st.int64(4));
      return r;
    });
    load_table(db, run_id, d.memops, [](const Statement& st) {
      MemopRecord r;
      r.start_ns = st.int64(0);
      r.end_ns = st.int64(1);
      r.device = u32(st, 2);
      r.stream = u32(st, 3);
      r.correlation_id = u32(st, 4);
      r.bytes = static_cast<uint64_t>(st.int64(5));
      r.kind = static_cast<MemopKind>(st.int64(6));
      r.copy_kind = static_cast<CopyKind>(st.int64(7));
      return r;
    });
    load_table(db, run_id, d.kernel_metrics, [](const Statement& st) {
      KernelMetricRecord r;
      r.correlation_id = u32(st, 0);
      r.name = u32(st, 1);
      r.unit = u32(st, 2);
      r.value = st.real(3);
      return r;
    });
    load_table(db, run_id, d.samples, [](const Statement& st) {
      SampleRecord r;
      r.t_ns = st.int64(0);
      r.metric = u32(st, 1);
      r.value = st.real(2);
      return r;
    });
  }
  d.strings = impl_->strings;
  arrange_run(d);
  return d;
}

}  // namespace fusionscope::storage
