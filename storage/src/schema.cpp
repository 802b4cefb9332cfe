#include "schema.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "digest.h"
#include "fusionscope/storage/session_store.h"
#include "record_io.h"
#include "sqlite_db.h"

namespace fusionscope::storage::detail {

namespace {

// Version 1. Frozen: a change to the layout is a new migration below, never an edit here.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE session (
  id                        INTEGER PRIMARY KEY CHECK (id = 1),
  name                      TEXT    NOT NULL DEFAULT '',
  created_utc               TEXT    NOT NULL DEFAULT '',
  host                      TEXT    NOT NULL DEFAULT '',
  gpu_name                  TEXT    NOT NULL DEFAULT '',
  cc_major                  INTEGER NOT NULL DEFAULT 0,
  cc_minor                  INTEGER NOT NULL DEFAULT 0,
  sm_count                  INTEGER NOT NULL DEFAULT 0,
  mem_bandwidth_gbs         REAL    NOT NULL DEFAULT 0,
  peak_fp32_tflops          REAL    NOT NULL DEFAULT 0,
  peak_tensor_tflops        REAL    NOT NULL DEFAULT 0,
  calibrated_bandwidth_gbs  REAL    NOT NULL DEFAULT 0,
  calibrated_tensor_tflops  REAL    NOT NULL DEFAULT 0,
  driver_version            TEXT    NOT NULL DEFAULT '',
  cuda_version              TEXT    NOT NULL DEFAULT '',
  cupti_version             TEXT    NOT NULL DEFAULT '',
  notes                     TEXT    NOT NULL DEFAULT ''
);
CREATE TABLE runs (
  id               INTEGER PRIMARY KEY,
  name             TEXT    NOT NULL DEFAULT '',
  config_json      TEXT    NOT NULL DEFAULT '',
  kind             TEXT    NOT NULL DEFAULT '',
  variant          TEXT    NOT NULL DEFAULT '',
  dtype            TEXT    NOT NULL DEFAULT '',
  warmup           INTEGER NOT NULL DEFAULT 0,
  iterations       INTEGER NOT NULL DEFAULT 0,
  cuda_graph       INTEGER NOT NULL DEFAULT 0,
  wall_ns          INTEGER NOT NULL DEFAULT 0,
  status           INTEGER NOT NULL DEFAULT 0,
  error            TEXT    NOT NULL DEFAULT '',
  trace_status     TEXT    NOT NULL DEFAULT '',
  dropped_records  INTEGER NOT NULL DEFAULT 0,
  created_utc      TEXT    NOT NULL DEFAULT ''
);
CREATE TABLE strings (
  id    INTEGER PRIMARY KEY,
  text  TEXT NOT NULL UNIQUE
);
INSERT INTO strings (id, text) VALUES (0, '');
CREATE TABLE kernels (
  id              INTEGER PRIMARY KEY,
  run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  start_ns        INTEGER NOT NULL,
  end_ns          INTEGER NOT NULL,
  device          INTEGER NOT NULL,
  stream          INTEGER NOT NULL,
  correlation_id  INTEGER NOT NULL,
  name_id         INTEGER NOT NULL,
  op_id           INTEGER NOT NULL,
  grid_x          INTEGER NOT NULL,
  grid_y          INTEGER NOT NULL,
  grid_z          INTEGER NOT NULL,
  block_x         INTEGER NOT NULL,
  block_y         INTEGER NOT NULL,
  block_z         INTEGER NOT NULL,
  registers       INTEGER NOT NULL,
  static_smem     INTEGER NOT NULL,
  dynamic_smem    INTEGER NOT NULL
);
CREATE INDEX kernels_by_run_start ON kernels (run_id, start_ns);
CREATE TABLE api_calls (
  id              INTEGER PRIMARY KEY,
  run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  start_ns        INTEGER NOT NULL,
  end_ns          INTEGER NOT NULL,
  thread_id       INTEGER NOT NULL,
  correlation_id  INTEGER NOT NULL,
  name_id         INTEGER NOT NULL,
  domain          INTEGER NOT NULL
);
CREATE INDEX api_calls_by_run_start ON api_calls (run_id, start_ns);
CREATE TABLE ranges (
  id         INTEGER PRIMARY KEY,
  run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  start_ns   INTEGER NOT NULL,
  end_ns     INTEGER NOT NULL,
  thread_id  INTEGER NOT NULL,
  name_id    INTEGER NOT NULL,
  kind       INTEGER NOT NULL
);
CREATE INDEX ranges_by_run_start ON ranges (run_id, start_ns);
CREATE TABLE memops (
  id              INTEGER PRIMARY KEY,
  run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  start_ns        INTEGER NOT NULL,
  end_ns          INTEGER NOT NULL,
  device          INTEGER NOT NULL,
  stream          INTEGER NOT NULL,
  correlation_id  INTEGER NOT NULL,
  bytes           INTEGER NOT NULL,
  kind            INTEGER NOT NULL,
  copy_kind       INTEGER NOT NULL
);
CREATE INDEX memops_by_run_start ON memops (run_id, start_ns);
CREATE TABLE kernel_metrics (
  id              INTEGER PRIMARY KEY,
  run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  correlation_id  INTEGER NOT NULL,
  name_id         INTEGER NOT NULL,
  unit_id         INTEGER NOT NULL,
  value           REAL    NOT NULL
);
CREATE INDEX kernel_metrics_by_run ON kernel_metrics (run_id, correlation_id);
CREATE TABLE samples (
  id         INTEGER PRIMARY KEY,
  run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  t_ns       INTEGER NOT NULL,
  metric_id  INTEGER NOT NULL,
  value      REAL    NOT NULL
);
CREATE INDEX samples_by_run_metric ON samples (run_id, metric_id, t_ns);
)sql";

void write_digests(Database& db);

struct Migration {
  int to_version;
  const char* sql;
  void (*after)(Database&) = nullptr;  // work SQL cannot do, in the same transaction
};

// Each entry moves a file from to_version - 1 to to_version.
constexpr Migration kMigrations[] = {
    // v2: free-form key/value properties of the session (capture settings, app state, notes
    // that tools attach) without a schema change each time.
    {2, R"sql(
CREATE TABLE properties (
  key    TEXT PRIMARY KEY NOT NULL,
  value  TEXT NOT NULL
) WITHOUT ROWID;
)sql"},
    // v3: a run is complete only once every record is written (state), digests that make later
    // damage visible, and process ids with a per-run table of process names. Runs of older files
    // are complete as they are (but a lab run that was still "running" was interrupted), and get
    // their digests now.
    {3, R"sql(
ALTER TABLE runs ADD COLUMN state INTEGER NOT NULL DEFAULT 1;
ALTER TABLE runs ADD COLUMN records_digest TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN info_digest TEXT NOT NULL DEFAULT '';
UPDATE runs SET state = 2 WHERE status = 1;
ALTER TABLE kernels ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE api_calls ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ranges ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memops ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;
CREATE TABLE processes (
  run_id   INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  pid      INTEGER NOT NULL,
  name_id  INTEGER NOT NULL,
  PRIMARY KEY (run_id, pid)
) WITHOUT ROWID;
ALTER TABLE session ADD COLUMN digest TEXT NOT NULL DEFAULT '';
ALTER TABLE session ADD COLUMN last_run_id INTEGER NOT NULL DEFAULT 0;
UPDATE session SET last_run_id = (SELECT coalesce(max(id), 0) FROM runs);
)sql",
     write_digests},
    // v4: what a trace says that no column held, kept so that an export gives it back: the
    // trace's `External id` and an interned JSON object of each event's other members on every
    // timeline record, Kineto's event index on ranges, thread names, and texts a run carries
    // (the trace's own top level, its metadata events). Existing rows take the defaults, which
    // the record digests leave out, so the digests written by version 3 stay valid.
    {4, R"sql(
ALTER TABLE kernels ADD COLUMN external_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE kernels ADD COLUMN extra_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE api_calls ADD COLUMN external_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE api_calls ADD COLUMN extra_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ranges ADD COLUMN external_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ranges ADD COLUMN extra_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ranges ADD COLUMN ev_idx INTEGER NOT NULL DEFAULT -1;
ALTER TABLE memops ADD COLUMN external_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memops ADD COLUMN extra_id INTEGER NOT NULL DEFAULT 0;
CREATE TABLE threads (
  run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  pid        INTEGER NOT NULL,
  thread_id  INTEGER NOT NULL,
  name_id    INTEGER NOT NULL,
  PRIMARY KEY (run_id, pid, thread_id)
) WITHOUT ROWID;
CREATE TABLE run_extras (
  run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  key     TEXT    NOT NULL,
  value   TEXT    NOT NULL,
  PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
)sql"},
};
static_assert(std::size(kMigrations) == kCurrentSchemaVersion - 1,
              "one migration per version after 1");

// The v3 step: digests of every run and of the session, over what the file holds now.
void write_digests(Database& db) {
  const std::vector<std::string> strings = read_all_strings(db);
  StringHashes hashes(strings);
  std::vector<int64_t> ids;
  {
    Statement& st = db.statement("SELECT id FROM runs ORDER BY id");
    while (st.step()) ids.push_back(st.int64(0));
  }
  for (int64_t id : ids) {
    RunData run;
    run.strings = strings;
    read_run_records(db, id, run, /*version=*/3);
    const std::string records = digest_records(run, hashes).encode();
    const RunInfo info = read_run_row(db, id).value_or(RunRow{}).info;
    Statement& st =
        db.statement("UPDATE runs SET records_digest = ?, info_digest = ? WHERE id = ?");
    st.bind(1, std::string_view(records));
    st.bind(2, std::string_view(info_digest(info, records)));
    st.bind(3, id);
    st.run();
  }
  write_session_digest(db);
}

}  // namespace

namespace {

// A table or an index as SQLite understands it, whatever the spacing of its CREATE statement:
// its columns with their types, constraints and defaults, or the columns it indexes.
using Definitions = std::vector<std::pair<std::string, std::string>>;

Definitions read_definitions(Database& db) {
  std::vector<std::pair<std::string, std::string>> objects;
  {
    Statement st(db,
                 "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'index') AND sql "
                 "IS NOT NULL ORDER BY name");
    while (st.step()) objects.emplace_back(st.text(0), st.text(1));
  }
  Definitions out;
  for (const auto& [type, name] : objects) {
    std::string shape = type + ":";
    if (type == "table") {
      Statement st(db, "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_xinfo(?)");
      st.bind(1, std::string_view(name));
      while (st.step())
        shape += st.text(0) + " " + st.text(1) + " " + std::to_string(st.int64(2)) + " " +
                 st.text(3) + " " + std::to_string(st.int64(4)) + ";";
      Statement fk(db,
                   "SELECT \"table\", \"from\", \"to\", on_delete FROM pragma_foreign_key_list(?)");
      fk.bind(1, std::string_view(name));
      while (fk.step())
        shape += "fk " + fk.text(0) + " " + fk.text(1) + " " + fk.text(2) + " " + fk.text(3) + ";";
    } else {
      Statement st(db, "SELECT name FROM pragma_index_info(?) ORDER BY seqno");
      st.bind(1, std::string_view(name));
      while (st.step()) shape += st.text(0) + ";";
      Statement on(db, "SELECT tbl_name FROM sqlite_master WHERE name = ?");
      on.bind(1, std::string_view(name));
      if (on.step()) shape += "on " + on.text(0);
    }
    out.emplace_back(name, shape);
  }
  return out;
}

}  // namespace

std::vector<std::string> schema_differences(Database& db) {
  // Per version: what create_schema_v1 and the migrations up to it make.
  static const std::vector<Definitions> by_version = [] {
    std::vector<Definitions> out(kCurrentSchemaVersion + 1);
    Database memory("file:fusionscope-schema?mode=memory",
                    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "schema");
    create_schema_v1(memory);
    out[1] = read_definitions(memory);
    for (const Migration& m : kMigrations) {
      Transaction tx(memory);
      memory.exec(m.sql);
      memory.exec("PRAGMA user_version = " + std::to_string(m.to_version));
      tx.commit();
      out[static_cast<size_t>(m.to_version)] = read_definitions(memory);
    }
    return out;
  }();
  const int version = static_cast<int>(db.pragma_int("user_version"));
  if (version < 1 || version > kCurrentSchemaVersion) return {};  // refused elsewhere
  const Definitions& expected = by_version[static_cast<size_t>(version)];
  const Definitions found = read_definitions(db);
  std::vector<std::string> out;
  for (const auto& [name, shape] : expected) {
    auto it =
        std::find_if(found.begin(), found.end(), [&](const auto& f) { return f.first == name; });
    if (it == found.end())
      out.push_back("the definition of '" + name + "' is missing");
    else if (it->second != shape)
      out.push_back("the definition of '" + name + "' differs from fusionscope's");
  }
  return out;
}

void create_schema_v1(Database& db) {
  Transaction tx(db);
  db.exec(kSchemaV1);
  db.exec("PRAGMA user_version = 1");
  tx.commit();
}

void migrate_to_current(Database& db) {
  int version = static_cast<int>(db.pragma_int("user_version"));
  for (const Migration& m : kMigrations) {
    if (m.to_version <= version) continue;
    Transaction tx(db);
    try {
      db.exec(m.sql);
      if (m.after) m.after(db);
      db.exec("PRAGMA user_version = " + std::to_string(m.to_version));
    } catch (const StoreError& e) {
      throw StoreError("migrating session '" + db.display_path() + "' from schema version " +
                       std::to_string(version) + " to " + std::to_string(m.to_version) +
                       " failed: " + e.what());
    }
    tx.commit();
    version = m.to_version;
  }
}

}  // namespace fusionscope::storage::detail
