// SessionStore: opening, creating and validating session files; the session row, strings and
// properties; Save As. Runs are in run_access.cpp, the writer of new runs in run_writer.cpp.
#include "fusionscope/storage/session_store.h"
#include "fusionscope/storage/utc_time.h"

#include <unistd.h>

#include <algorithm>
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

std::string_view to_string(RunState s) {
  switch (s) {
    case RunState::kWriting:
      return "being written";
    case RunState::kComplete:
      return "complete";
    case RunState::kInterrupted:
      return "interrupted";
  }
  return "unknown";
}

const std::string& RunData::process_name(uint32_t pid) const {
  static const std::string empty;
  auto it = std::lower_bound(processes.begin(), processes.end(), pid,
                             [](const ProcessRecord& p, uint32_t v) { return p.pid < v; });
  return it != processes.end() && it->pid == pid ? str(it->name) : empty;
}

const std::string& RunData::thread_name(uint32_t pid, uint32_t thread_id) const {
  static const std::string empty;
  auto it = std::lower_bound(threads.begin(), threads.end(), std::pair{pid, thread_id},
                             [](const ThreadRecord& t, std::pair<uint32_t, uint32_t> v) {
                               return std::pair{t.pid, t.thread_id} < v;
                             });
  return it != threads.end() && it->pid == pid && it->thread_id == thread_id ? str(it->name)
                                                                             : empty;
}

const std::string* RunData::extra(std::string_view key) const {
  auto it = std::lower_bound(extras.begin(), extras.end(), key,
                             [](const RunExtraRecord& e, std::string_view k) { return e.key < k; });
  return it != extras.end() && it->key == key ? &it->value : nullptr;
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
  // A file with our identity but without our tables (a foreign tool, a damaged schema).
  Statement st(db,
               "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
               "('session', 'runs', 'strings', 'kernels', 'api_calls', 'ranges', 'memops', "
               "'kernel_metrics', 'samples')");
  if (!st.step() || st.int64(0) != 9)
    fail_open(path, "it says it is a fusionscope session, but its tables are missing or damaged");
  return version;
}

void remove_with_sidecars(const fs::path& path) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    fs::remove(detail::sidecar(path, suffix), ec);
}

std::string first_lines(const std::vector<std::string>& lines, size_t n) {
  std::string out;
  for (size_t i = 0; i < lines.size() && i < n; ++i) out += (i ? "; " : "") + lines[i];
  if (lines.size() > n) out += "; and " + std::to_string(lines.size() - n) + " more";
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Impl helpers

void detail::StoreState::require_writable(std::string_view what) const {
  if (read_only)
    throw StoreError("session '" + path.string() + "' is open read-only: cannot " +
                     std::string(what));
}

std::optional<StringId> detail::StoreState::find_string(std::string_view text) {
  if (text.empty()) return kNoString;
  if (const StringId* id = string_ids.find(text)) return *id;
  Statement& st = db->statement("SELECT id FROM strings WHERE text = ?");
  st.bind(1, text);
  std::optional<StringId> out;
  if (st.step()) {
    const int64_t id = st.int64(0);
    if (id >= 0 && id < (int64_t{1} << 32)) out = static_cast<StringId>(id);
  }
  st.reset();
  if (out) string_ids.insert(text, *out);
  return out;
}

std::optional<std::string> detail::StoreState::string_text(StringId id) {
  Statement& st = db->statement("SELECT text FROM strings WHERE id = ?");
  st.bind(1, int64_t{id});
  std::optional<std::string> out;
  if (st.step()) out = st.text(0);
  st.reset();
  if (!out && id < string_end) out.emplace();
  return out;
}

void detail::StoreState::refresh_string_end() {
  Statement& st = db->statement("SELECT max(id) FROM strings");
  const int64_t last = st.step() ? st.int64(0) : 0;
  st.reset();
  if (last < 0 || last >= (int64_t{1} << 32))
    throw StoreError("session '" + path.string() + "': the string table is damaged (id " +
                     std::to_string(last) + ")");
  string_end = static_cast<StringId>(last + 1);
}

StringId detail::StoreState::add_string(std::string_view text) {
  if (const std::optional<StringId> known = find_string(text)) return *known;
  if (string_end >= (StringId{1} << 28))
    throw StoreError("session '" + path.string() + "': the string table is full");
  const StringId id = string_end;
  Statement& st = db->statement("INSERT INTO strings (id, text) VALUES (?, ?)");
  st.bind(1, int64_t{id});
  st.bind(2, text);
  st.run();
  ++string_end;
  string_ids.insert(text, id);
  string_hashes.remember(id, text);
  return id;
}

void detail::StoreState::require_string(StringId id) {
  if (id < string_end) return;
  refresh_string_end();  // another writer may have added it
  if (id >= string_end)
    throw StoreError("session '" + path.string() + "': a record refers to string id " +
                     std::to_string(id) + ", which was not interned in this session");
}

void detail::StoreState::require_run(int64_t run_id) {
  Statement& st = db->statement("SELECT 1 FROM runs WHERE id = ?");
  st.bind(1, run_id);
  const bool exists = st.step();
  st.reset();
  if (!exists) no_such_run(run_id);
}

void detail::StoreState::no_such_run(int64_t run_id) const {
  throw StoreError("session '" + path.string() + "' has no run " + std::to_string(run_id));
}

// ---------------------------------------------------------------------------------------------
// Creating and opening

SessionStore::SessionStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SessionStore::SessionStore(SessionStore&&) noexcept = default;
SessionStore& SessionStore::operator=(SessionStore&&) noexcept = default;
SessionStore::~SessionStore() = default;

SessionStore SessionStore::create(const fs::path& path, const SessionInfo& info) {
  const fs::path abs = absolute_path(path);
  auto fail = [&](const std::string& why) -> void {
    throw StoreError("cannot create session '" + path.string() + "': " + why);
  };
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(abs, ec);
  if (fs::is_symlink(link)) fail("it is a symbolic link; give the path of a new file");
  if (fs::exists(link)) fail("the file already exists");
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
    impl->file = detail::SessionFile::acquire(abs, path.string());
    impl->refresh_string_end();
    SessionStore store(std::move(impl));
    SessionInfo filled = info;
    if (filled.created_utc.empty()) filled.created_utc = utc_now();
    store.update_session(filled);
    return store;
  } catch (...) {
    // The connection closes first, so that no journal beside the file outlives it.
    if (impl) {
      impl->db.reset();
      impl->file.reset();
    }
    impl.reset();
    remove_with_sidecars(abs);
    throw;
  }
}

SessionStore SessionStore::open(const fs::path& path, OpenMode mode) {
  const fs::path abs = absolute_path(path);
  detail::check_session_path(abs);
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
  impl->file = detail::SessionFile::acquire(abs, path.string());
  const detail::FileProbe probe = detail::probe_session_file(abs, *impl->file);
  // A reader never writes: with no writer's journal present the file is opened immutable (no
  // locks, no -wal/-shm created). When a writer is open (or crashed) its -wal and -shm exist,
  // and a plain read-only connection reads its committed data through them.
  std::string query = "mode=rw";
  if (!writable) query = probe.wal_exists && probe.has_shm ? "mode=ro" : "immutable=1";
  // Journals that only a writer can resolve; reading past them would show a wrong state.
  if (!writable && probe.has_wal && !probe.has_shm)
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
    // Nothing is written into a damaged file: not a journal mode, not a migration, not a run.
    SessionStore store(std::move(impl));
    if (const auto problems = store.quick_check(); !problems.empty())
      throw StoreError("session '" + path.string() + "' is damaged, so nothing is written to it (" +
                       first_lines(problems, 2) + "); open it read-only to read what is intact");
    Impl& s = *store.impl_;
    configure_writer(db);
    detail::migrate_to_current(db);
    s.file_version = detail::kCurrentSchemaVersion;
    if (std::string why = store.session_damage(); !why.empty())
      throw StoreError("session '" + path.string() + "' is damaged, so nothing is written to it (" +
                       why + "); open it read-only to read what is intact");
    s.refresh_string_end();
    s.record_interrupted_runs();
    return store;
  }
  if (impl->file_version < detail::kCurrentSchemaVersion) impl->migrate_in_memory();
  impl->db->exec("PRAGMA query_only = 1");
  impl->refresh_string_end();
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
// Damage

std::vector<std::string> SessionStore::quick_check() const {
  std::vector<std::string> out;
  try {
    Statement st(*impl_->db, "PRAGMA quick_check(20)");
    while (st.step()) {
      std::string line = st.text(0);
      if (line != "ok") out.push_back(std::move(line));
    }
    // A definition changed by one byte can still parse, and read the data wrongly ("INTEGER
    // PRIMARI KEY" is a type name, and the id column no longer the row's id).
    for (std::string& d : detail::schema_differences(*impl_->db)) out.push_back(std::move(d));
  } catch (const StoreError& e) {
    out.push_back(e.what());
  }
  return out;
}

std::string SessionStore::session_damage() const {
  try {
    {
      Statement st(*impl_->db, "SELECT count(*) FROM session WHERE id = 1");
      if (!st.step() || st.int64(0) != 1) return "the session's description is missing";
    }
    const std::string stored = detail::read_session_digest(*impl_->db);
    if (stored.empty()) return {};  // written by another tool: nothing to check against
    const std::string now =
        detail::session_digest(detail::read_session_row(*impl_->db), properties());
    if (now == stored) return {};
    return "the session's description or properties differ from what was written";
  } catch (const StoreError& e) {
    return e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// Session

SessionInfo SessionStore::session() const {
  return detail::read_session_row(*impl_->db);
}

void SessionStore::update_session(const SessionInfo& s) {
  impl_->require_writable("update the session");
  Database& db = *impl_->db;
  Transaction tx(db);
  Statement& st = db.statement(
      "INSERT INTO session (id, name, created_utc, host, gpu_name, cc_major, cc_minor, "
      "sm_count, mem_bandwidth_gbs, peak_fp32_tflops, peak_tensor_tflops, "
      "calibrated_bandwidth_gbs, calibrated_tensor_tflops, driver_version, cuda_version, "
      "cupti_version, notes) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT (id) DO UPDATE SET name = excluded.name, created_utc = excluded.created_utc, "
      "host = excluded.host, gpu_name = excluded.gpu_name, cc_major = excluded.cc_major, "
      "cc_minor = excluded.cc_minor, sm_count = excluded.sm_count, "
      "mem_bandwidth_gbs = excluded.mem_bandwidth_gbs, "
      "peak_fp32_tflops = excluded.peak_fp32_tflops, "
      "peak_tensor_tflops = excluded.peak_tensor_tflops, "
      "calibrated_bandwidth_gbs = excluded.calibrated_bandwidth_gbs, "
      "calibrated_tensor_tflops = excluded.calibrated_tensor_tflops, "
      "driver_version = excluded.driver_version, cuda_version = excluded.cuda_version, "
      "cupti_version = excluded.cupti_version, notes = excluded.notes");
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
  detail::write_session_digest(db);
  tx.commit();
}

// ---------------------------------------------------------------------------------------------
// Strings and properties

StringId SessionStore::intern(std::string_view text) {
  if (const StringId* id = impl_->string_ids.find(text)) return *id;
  const std::string copy(text);
  return intern_all(std::span<const std::string>(&copy, 1)).front();
}

std::vector<StringId> SessionStore::intern_all(std::span<const std::string> texts) {
  detail::StoreState& s = *impl_;
  std::vector<StringId> ids(texts.size(), kNoString);
  std::vector<size_t> missing;
  for (size_t i = 0; i < texts.size(); ++i) {
    if (texts[i].empty()) continue;
    if (const StringId* id = s.string_ids.find(texts[i]))
      ids[i] = *id;
    else
      missing.push_back(i);
  }
  if (missing.empty()) return ids;
  if (s.read_only) {
    for (size_t i : missing) {
      const std::optional<StringId> id = s.find_string(texts[i]);
      if (!id) s.require_writable("add the string '" + texts[i].substr(0, 60) + "'");
      ids[i] = *id;
    }
    return ids;
  }
  // Inside the write transaction the table cannot change under us: the ids others added are
  // read first, so a new id is never one someone else took.
  Transaction tx(*s.db);
  try {
    s.refresh_string_end();
    for (size_t i : missing) ids[i] = s.add_string(texts[i]);
    tx.commit();
  } catch (...) {
    // What this transaction added is not in the file: forget what was cached of it.
    s.string_ids.clear();
    s.string_hashes.forget();
    throw;
  }
  return ids;
}

std::optional<StringId> SessionStore::find_string(std::string_view text) const {
  return impl_->find_string(text);
}

std::vector<std::string> SessionStore::strings() const {
  return detail::read_all_strings(*impl_->db);
}

std::vector<std::pair<std::string, std::string>> SessionStore::properties() const {
  return detail::read_properties(*impl_->db);
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
  Transaction tx(*impl_->db);
  Statement& st =
      impl_->db->statement("INSERT OR REPLACE INTO properties (key, value) VALUES (?, ?)");
  st.bind(1, key);
  st.bind(2, value);
  st.run();
  detail::write_session_digest(*impl_->db);
  tx.commit();
}

void SessionStore::erase_property(std::string_view key) {
  impl_->require_writable("erase a property");
  Transaction tx(*impl_->db);
  Statement& st = impl_->db->statement("DELETE FROM properties WHERE key = ?");
  st.bind(1, key);
  st.run();
  detail::write_session_digest(*impl_->db);
  tx.commit();
}

// ---------------------------------------------------------------------------------------------
// Checkpoints and closing

void SessionStore::checkpoint() {
  impl_->require_writable("checkpoint");
  int log = 0, copied = 0;
  const int rc = sqlite3_wal_checkpoint_v2(impl_->db->handle(), "main", SQLITE_CHECKPOINT_PASSIVE,
                                           &log, &copied);
  if (rc != SQLITE_OK && rc != SQLITE_BUSY) impl_->db->fail(rc, "writing the log into the file");
}

void SessionStore::close() {
  if (!impl_ || !impl_->db) return;
  if (!impl_->read_only) {
    // TRUNCATE waits (up to the busy timeout) for readers and leaves an empty log: what remains
    // beside the file afterwards holds nothing.
    const int rc = sqlite3_wal_checkpoint_v2(impl_->db->handle(), "main",
                                             SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
    if (rc != SQLITE_OK && rc != SQLITE_BUSY) {
      try {
        impl_->db->fail(rc, "writing the log into the file");
      } catch (...) {
        impl_->db.reset();
        impl_->file.reset();
        throw;
      }
    }
  }
  impl_->db.reset();
  impl_->file.reset();
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
