// SessionStore: opening, creating and validating session files; the session row, runs, strings
// and properties. Record ingest and loading live in record_io.cpp.
#include "fusionscope/storage/session_store.h"
#include "fusionscope/storage/utc_time.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "file_probe.h"
#include "schema.h"
#include "session_store_impl.h"

namespace fusionscope::storage {

namespace fs = std::filesystem;
using detail::Database;
using detail::Statement;
using detail::Transaction;

std::string_view to_string(RunStatus s) {
  switch (s) {
    case RunStatus::kPending:
      return "pending";
    case RunStatus::kRunning:
      return "running";
    case RunStatus::kOk:
      return "ok";
    case RunStatus::kFailed:
      return "failed";
    case RunStatus::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

namespace {

fs::path absolute_path(const fs::path& p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  return ec ? p : abs.lexically_normal();
}

[[noreturn]] void fail_open(const fs::path& path, const std::string& why) {
  throw StoreError("cannot open session '" + path.string() + "': " + why);
}

// Connection settings for a writer: WAL with NORMAL sync (durable at checkpoints, consistent
// always), checkpoints every 64 MiB of WAL rather than every 16 (fewer fsyncs during a capture),
// enforced foreign keys, a cache large enough for bulk ingest.
void configure_writer(Database& db) {
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  sqlite3_wal_autocheckpoint(db.handle(), (64 << 20) / detail::kPageSize);
  db.exec("PRAGMA foreign_keys = ON");
  db.exec("PRAGMA cache_size = -65536");
  db.exec("PRAGMA temp_store = MEMORY");
}

// The file must carry our application_id and a schema version this build understands.
int check_identity(Database& db, const fs::path& path) {
  const auto app_id = static_cast<int32_t>(db.pragma_int("application_id"));
  if (app_id != detail::kApplicationId) {
    if (app_id == 0 && db.pragma_int("page_count") == 0)
      fail_open(path, "the SQLite database is empty (not a fusionscope session)");
    fail_open(path, "it is an SQLite database, but not a fusionscope session (application_id is " +
                        std::to_string(app_id) + ")");
  }
  const int version = static_cast<int>(db.pragma_int("user_version"));
  if (version > detail::kCurrentSchemaVersion)
    fail_open(path, "it was written by a newer fusionscope (session format version " +
                        std::to_string(version) + "; this build reads versions 1 to " +
                        std::to_string(detail::kCurrentSchemaVersion) +
                        "). Update fusionscope to open it");
  if (version < 1)
    fail_open(path,
              "its session format version is " + std::to_string(version) + ", which is not valid");
  return version;
}

void remove_with_sidecars(const fs::path& path) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    fs::remove(detail::sidecar(path, suffix), ec);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Impl helpers

void detail::StoreState::require_writable(std::string_view what) const {
  if (read_only)
    throw StoreError("session '" + path.string() + "' is open read-only: cannot " +
                     std::string(what));
}

void detail::StoreState::load_strings() {
  strings.assign(1, std::string());
  string_ids.clear();
  string_ids.emplace(std::string(), kNoString);
  read_strings_from(1);
}

void detail::StoreState::refresh_strings() {
  // Only a reader can be behind: a writer's table is the file's plus its own pending strings.
  if (read_only) read_strings_from(strings.size());
}

void detail::StoreState::read_strings_from(size_t first) {
  Statement& st = db->statement("SELECT id, text FROM strings WHERE id >= ? ORDER BY id");
  st.bind(1, static_cast<int64_t>(first));
  while (st.step()) {
    const int64_t id = st.int64(0);
    if (id <= 0) continue;
    if (id > int64_t{1} << 28)
      throw StoreError("session '" + path.string() + "': the string table is damaged (id " +
                       std::to_string(id) + ")");
    const auto index = static_cast<size_t>(id);
    if (index >= strings.size()) strings.resize(index + 1);
    strings[index] = st.text(1);
    string_ids.emplace(strings[index], static_cast<StringId>(id));
  }
  persisted_strings = strings.size();
}

void detail::StoreState::write_strings(size_t begin, size_t end) {
  if (begin >= end) return;
  Statement& st = db->statement("INSERT INTO strings (id, text) VALUES (?, ?)");
  for (size_t i = begin; i < end; ++i) {
    st.reset();
    st.bind(1, static_cast<int64_t>(i));
    st.bind(2, std::string_view(strings[i]));
    st.run();
  }
}

void detail::StoreState::require_run(int64_t run_id) {
  Statement& st = db->statement("SELECT 1 FROM runs WHERE id = ?");
  st.bind(1, run_id);
  const bool exists = st.step();
  st.reset();
  if (!exists) no_such_run(run_id);
}

// ---------------------------------------------------------------------------------------------
// Creating and opening

SessionStore::SessionStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SessionStore::SessionStore(SessionStore&&) noexcept = default;
SessionStore& SessionStore::operator=(SessionStore&&) noexcept = default;

SessionStore::~SessionStore() {
  if (!impl_ || !impl_->db) return;
  // Strings interned since the last batch are written now; a failure here cannot be reported,
  // and loses only strings no stored record refers to.
  if (!impl_->read_only && impl_->persisted_strings < impl_->strings.size()) {
    try {
      impl_->write_transaction([] {});
    } catch (const StoreError&) {
    }
  }
  impl_->db.reset();
}

SessionStore SessionStore::create(const fs::path& path, const SessionInfo& info) {
  const fs::path abs = absolute_path(path);
  auto fail = [&](const std::string& why) -> void {
    throw StoreError("cannot create session '" + path.string() + "': " + why);
  };
  std::error_code ec;
  if (fs::exists(abs, ec)) fail("the file already exists");
  const fs::path dir = abs.parent_path();
  if (!fs::is_directory(dir, ec)) fail("the folder '" + dir.string() + "' does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    fail("the folder '" + dir.string() + "' is not writable (" + std::strerror(errno) + ")");
  // Leftovers of an earlier file of this name would be replayed into the new one.
  remove_with_sidecars(abs);

  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->read_only = false;
  try {
    impl->db =
        std::make_unique<Database>(detail::file_uri(abs.string(), "mode=rwc"),
                                   SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, path.string());
    Database& db = *impl->db;
    db.exec("PRAGMA page_size = " + std::to_string(detail::kPageSize));
    configure_writer(db);
    db.exec("PRAGMA application_id = " + std::to_string(detail::kApplicationId));
    detail::create_schema_v1(db);
    detail::migrate_to_current(db);
    impl->file_version = detail::kCurrentSchemaVersion;
    impl->load_strings();
    SessionStore store(std::move(impl));
    SessionInfo filled = info;
    if (filled.created_utc.empty()) filled.created_utc = utc_now();
    store.update_session(filled);
    return store;
  } catch (...) {
    impl.reset();
    remove_with_sidecars(abs);
    throw;
  }
}

SessionStore SessionStore::open(const fs::path& path, OpenMode mode) {
  const fs::path abs = absolute_path(path);
  const detail::FileProbe probe = detail::probe_session_file(abs);
  const bool writable = mode == OpenMode::kReadWrite;
  if (writable) {
    if (::access(abs.c_str(), W_OK) != 0)
      fail_open(path, std::string("the file is read-only (") + std::strerror(errno) +
                          "); open it read-only, or Save As to a writable place");
    if (::access(abs.parent_path().c_str(), W_OK) != 0)
      fail_open(path,
                "its folder is not writable (" + std::string(std::strerror(errno)) +
                    "), and a writer needs to keep a journal beside the file; open it read-only");
  }

  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->read_only = !writable;
  // A reader never writes: with no writer's journal present the file is opened immutable (no
  // locks, no -wal/-shm created). When a writer is open (or crashed) its -wal and -shm exist,
  // and a plain read-only connection reads its committed data through them.
  std::string query = "mode=rw";
  if (!writable) query = probe.wal_exists && probe.has_shm ? "mode=ro" : "immutable=1";
  const bool shared_wal = !writable && query == "mode=ro";
  // Journals that only a writer can resolve; reading past them would show a wrong state.
  if (!writable && !shared_wal && probe.has_wal)
    fail_open(path,
              "its '-wal' file holds changes of a writer that did not close; "
              "open it read-write once to recover them");
  if (!writable && probe.has_journal)
    fail_open(path,
              "its '-journal' file holds a transaction that was cut short; "
              "open it read-write once to roll it back");
  impl->db = std::make_unique<Database>(detail::file_uri(abs.string(), query),
                                        writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY,
                                        path.string());
  Database& db = *impl->db;
  if (writable && db.is_read_only())
    fail_open(path, "the file is read-only; open it read-only, or Save As to a writable place");
  impl->file_version = check_identity(db, path);

  if (writable) {
    configure_writer(db);
    detail::migrate_to_current(db);
    impl->file_version = detail::kCurrentSchemaVersion;
  } else {
    if (impl->file_version < detail::kCurrentSchemaVersion) impl->migrate_in_memory();
    impl->db->exec("PRAGMA query_only = 1");
  }
  impl->load_strings();
  return SessionStore(std::move(impl));
}

// An older file opened read-only is copied into memory and migrated there, so every reader sees
// the current layout while the file stays untouched.
void detail::StoreState::migrate_in_memory() {
  auto memory =
      std::make_unique<Database>("file:fusionscope-migrated?mode=memory",
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, path.string());
  sqlite3_backup* backup = sqlite3_backup_init(memory->handle(), "main", db->handle(), "main");
  if (!backup) memory->fail(sqlite3_errcode(memory->handle()), "copying the session into memory");
  const int rc = sqlite3_backup_step(backup, -1);
  sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE) memory->fail(rc, "copying the session into memory");
  db = std::move(memory);
  detail::migrate_to_current(*db);
}

const fs::path& SessionStore::path() const {
  return impl_->path;
}
bool SessionStore::read_only() const {
  return impl_->read_only;
}
int SessionStore::schema_version() const {
  return impl_->file_version;
}
int SessionStore::current_schema_version() {
  return detail::kCurrentSchemaVersion;
}

// ---------------------------------------------------------------------------------------------
// Session

SessionInfo SessionStore::session() const {
  SessionInfo s;
  Statement& st = impl_->db->statement(
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

void SessionStore::update_session(const SessionInfo& s) {
  impl_->require_writable("update the session");
  Statement& st = impl_->db->statement(
      "INSERT OR REPLACE INTO session (id, name, created_utc, host, gpu_name, cc_major, cc_minor, "
      "sm_count, mem_bandwidth_gbs, peak_fp32_tflops, peak_tensor_tflops, "
      "calibrated_bandwidth_gbs, "
      "calibrated_tensor_tflops, driver_version, cuda_version, cupti_version, notes) "
      "VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  st.bind(1, std::string_view(s.name));
  st.bind(2, std::string_view(s.created_utc));
  st.bind(3, std::string_view(s.host));
  st.bind(4, std::string_view(s.gpu_name));
  st.bind(5, int64_t{s.cc_major});
  st.bind(6, int64_t{s.cc_minor});
  st.bind(7, int64_t{s.sm_count});
  st.bind(8, s.mem_bandwidth_gbs);
  st.bind(9, s.peak_fp32_tflops);
  st.bind(10, s.peak_tensor_tflops);
  st.bind(11, s.calibrated_bandwidth_gbs);
  st.bind(12, s.calibrated_tensor_tflops);
  st.bind(13, std::string_view(s.driver_version));
  st.bind(14, std::string_view(s.cuda_version));
  st.bind(15, std::string_view(s.cupti_version));
  st.bind(16, std::string_view(s.notes));
  st.run();
}

// ---------------------------------------------------------------------------------------------
// Runs

namespace {

constexpr const char* kRunColumns =
    "id, name, config_json, kind, variant, dtype, warmup, iterations, cuda_graph, wall_ns, status, "
    "error, trace_status, dropped_records, created_utc";

RunInfo read_run(const Statement& st) {
  RunInfo r;
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
  return r;
}

// Binds every column but id, starting at parameter 1.
void bind_run(Statement& st, const RunInfo& r) {
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

}  // namespace

int64_t SessionStore::add_run(const RunInfo& run) {
  impl_->require_writable("add a run");
  RunInfo r = run;
  if (r.created_utc.empty()) r.created_utc = utc_now();
  Statement& st = impl_->db->statement(
      "INSERT INTO runs (name, config_json, kind, variant, dtype, warmup, iterations, cuda_graph, "
      "wall_ns, status, error, trace_status, dropped_records, created_utc) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  bind_run(st, r);
  st.run();
  return sqlite3_last_insert_rowid(impl_->db->handle());
}

void SessionStore::update_run(const RunInfo& run) {
  impl_->require_writable("update a run");
  Statement& st = impl_->db->statement(
      "UPDATE runs SET name = ?, config_json = ?, kind = ?, variant = ?, dtype = ?, warmup = ?, "
      "iterations = ?, cuda_graph = ?, wall_ns = ?, status = ?, error = ?, trace_status = ?, "
      "dropped_records = ?, created_utc = ? WHERE id = ?");
  bind_run(st, run);
  st.bind(15, run.id);
  st.run();
  if (sqlite3_changes(impl_->db->handle()) == 0) impl_->no_such_run(run.id);
}

void SessionStore::rename_run(int64_t run_id, std::string_view name) {
  impl_->require_writable("rename a run");
  Statement& st = impl_->db->statement("UPDATE runs SET name = ? WHERE id = ?");
  st.bind(1, name);
  st.bind(2, run_id);
  st.run();
  if (sqlite3_changes(impl_->db->handle()) == 0) impl_->no_such_run(run_id);
}

void SessionStore::delete_run(int64_t run_id) {
  impl_->require_writable("delete a run");
  Transaction tx(*impl_->db);
  // Explicit deletes rather than relying only on ON DELETE CASCADE: a file written by a tool
  // that left foreign keys off must not keep orphans either.
  for (const char* table :
       {"kernels", "api_calls", "ranges", "memops", "kernel_metrics", "samples"}) {
    Statement& st = impl_->db->statement(std::string("DELETE FROM ") + table + " WHERE run_id = ?");
    st.bind(1, run_id);
    st.run();
  }
  Statement& st = impl_->db->statement("DELETE FROM runs WHERE id = ?");
  st.bind(1, run_id);
  st.run();
  if (sqlite3_changes(impl_->db->handle()) == 0) impl_->no_such_run(run_id);
  tx.commit();
}

std::vector<RunInfo> SessionStore::runs() const {
  std::vector<RunInfo> out;
  Statement& st =
      impl_->db->statement(std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY id");
  while (st.step()) out.push_back(read_run(st));
  return out;
}

std::optional<RunInfo> SessionStore::run(int64_t run_id) const {
  Statement& st =
      impl_->db->statement(std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?");
  st.bind(1, run_id);
  std::optional<RunInfo> out;
  if (st.step()) out = read_run(st);
  st.reset();
  return out;
}

void detail::StoreState::no_such_run(int64_t run_id) const {
  throw StoreError("session '" + path.string() + "' has no run with id " + std::to_string(run_id));
}

// ---------------------------------------------------------------------------------------------
// Strings and properties

StringId SessionStore::intern(std::string_view text) {
  if (auto it = impl_->string_ids.find(text); it != impl_->string_ids.end()) return it->second;
  impl_->require_writable("add the string '" + std::string(text.substr(0, 60)) + "'");
  if (impl_->strings.size() >= UINT32_MAX)
    throw StoreError("session '" + impl_->path.string() + "': the string table is full");
  const auto id = static_cast<StringId>(impl_->strings.size());
  impl_->strings.emplace_back(text);
  impl_->string_ids.emplace(impl_->strings.back(), id);
  // Written with the next batch (or on close), so interning costs no transaction of its own.
  return id;
}

std::optional<StringId> SessionStore::find_string(std::string_view text) const {
  if (auto it = impl_->string_ids.find(text); it != impl_->string_ids.end()) return it->second;
  return std::nullopt;
}

std::vector<std::string> SessionStore::strings() const {
  impl_->refresh_strings();
  return impl_->strings;
}

std::vector<std::pair<std::string, std::string>> SessionStore::properties() const {
  std::vector<std::pair<std::string, std::string>> out;
  Statement& st = impl_->db->statement("SELECT key, value FROM properties ORDER BY key");
  while (st.step()) out.emplace_back(st.text(0), st.text(1));
  return out;
}

std::optional<std::string> SessionStore::property(std::string_view key) const {
  Statement& st = impl_->db->statement("SELECT value FROM properties WHERE key = ?");
  st.bind(1, key);
  std::optional<std::string> out;
  if (st.step()) out = st.text(0);
  st.reset();
  return out;
}

void SessionStore::set_property(std::string_view key, std::string_view value) {
  impl_->require_writable("set a property");
  Statement& st =
      impl_->db->statement("INSERT OR REPLACE INTO properties (key, value) VALUES (?, ?)");
  st.bind(1, key);
  st.bind(2, value);
  st.run();
}

void SessionStore::erase_property(std::string_view key) {
  impl_->require_writable("erase a property");
  Statement& st = impl_->db->statement("DELETE FROM properties WHERE key = ?");
  st.bind(1, key);
  st.run();
}

// ---------------------------------------------------------------------------------------------
// Save As

void SessionStore::save_as(const fs::path& target) const {
  const fs::path abs = absolute_path(target);
  auto fail = [&](const std::string& why) -> void {
    throw StoreError("cannot save session as '" + target.string() + "': " + why);
  };
  std::error_code ec;
  if (abs == absolute_path(impl_->path)) fail("it is the file this session is stored in");
  if (!fs::is_directory(abs.parent_path(), ec))
    fail("the folder '" + abs.parent_path().string() + "' does not exist");
  if (fs::is_directory(abs, ec)) fail("it is a folder");
  if (!impl_->read_only) impl_->write_transaction([] {});
  // Written beside the target and renamed over it: a failure never leaves a half-written file.
  const fs::path partial = detail::sidecar(abs, (".partial-" + std::to_string(::getpid())).c_str());
  remove_with_sidecars(partial);
  // A reader's connection is query_only, which refuses VACUUM INTO although it writes only the
  // new file; the connection itself is opened read-only, so lifting it for this is safe.
  if (impl_->read_only) impl_->db->exec("PRAGMA query_only = 0");
  try {
    Statement& st = impl_->db->statement("VACUUM INTO ?");
    st.bind(1, std::string_view(partial.string()));
    st.run();
  } catch (const StoreError& e) {
    if (impl_->read_only) impl_->db->exec("PRAGMA query_only = 1");
    remove_with_sidecars(partial);
    fail(e.what());
  }
  if (impl_->read_only) impl_->db->exec("PRAGMA query_only = 1");
  fs::rename(partial, abs, ec);
  if (ec) {
    remove_with_sidecars(partial);
    fail(ec.message());
  }
}

}  // namespace fusionscope::storage
