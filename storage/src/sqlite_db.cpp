#include "sqlite_db.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>

#include "fusionscope/storage/session_store.h"

namespace fusionscope::storage::detail {

namespace {

// A sentence a person can act on, for the SQLite result codes a user can actually cause.
std::string_view hint_for(int rc) {
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
      return "the file is damaged or truncated";
    case SQLITE_NOTADB:
      return "the file is not an SQLite database";
    case SQLITE_FULL:
      return "the disk is full";
    case SQLITE_READONLY:
      return "the file or its folder is read-only";
    case SQLITE_CANTOPEN:
      return "the file cannot be opened (missing, a folder, or no permission)";
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return "permission denied";
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return "another program is writing to this session";
    case SQLITE_IOERR:
      return "an I/O error occurred";
    case SQLITE_NOMEM:
      return "out of memory";
    case SQLITE_TOOBIG:
      return "a value is too large to store";
    case SQLITE_CONSTRAINT:
      return "it conflicts with what the session holds (damaged, or changed by another program)";
    case SQLITE_ERROR:
    case SQLITE_SCHEMA:
    case SQLITE_MISMATCH:
    case SQLITE_FORMAT:
    case SQLITE_RANGE:
      // "no such table", "no such column", ...: never shown as such, the SQL is ours.
      return "the session's tables are not as fusionscope writes them (damaged, or changed by "
             "another program)";
    default:
      return {};
  }
}

// SQLite keeps the errno of a failed write with the file that failed (often the log), and what
// sqlite3_system_errno() reports may be a later call's: when that says nothing, the two causes a
// user can do something about are looked for directly.
std::string write_failure_cause(sqlite3* db) {
  const char* main = db ? sqlite3_db_filename(db, "main") : nullptr;
  if (main == nullptr || *main == '\0') return {};
  const std::string path = main;
  rlimit limit{};
  if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    for (const std::string& p : {path, path + "-wal"}) {
      struct stat st {};
      if (::stat(p.c_str(), &st) == 0 && static_cast<rlim_t>(st.st_size) + 65536 >= limit.rlim_cur)
        return "the file size limit was reached (ulimit -f)";
    }
  }
  const std::string dir = path.substr(0, path.find_last_of('/') + 1);
  struct statvfs fs {};
  if (::statvfs(dir.empty() ? "." : dir.c_str(), &fs) == 0 &&
      static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize < (uint64_t{1} << 20))
    return "the disk is full";
  return {};
}

// Why a failed operation failed, for a person: SQLite's own words only where they say more than
// the hint and quote no SQL (an I/O error's errno does: "the file size limit was reached").
std::string reason(sqlite3* db, int rc) {
  const int sys = db ? sqlite3_system_errno(db) : 0;
  if ((rc & 0xff) == SQLITE_IOERR || (rc & 0xff) == SQLITE_FULL) {
    if (sys == ENOSPC || sys == EDQUOT) return "the disk is full";
    if (sys == EFBIG) return "the file size limit was reached (ulimit -f)";
    if (sys == EROFS) return "the file system is read-only";
    if (std::string cause = write_failure_cause(db); !cause.empty()) return cause;
    if (sys == EIO) return "an I/O error occurred (the disk or its connection failed)";
  }
  if (auto hint = hint_for(rc); !hint.empty()) return std::string(hint);
  return sqlite3_errstr(rc);
}

}  // namespace

// NOMUTEX: a store is used by one thread at a time (its caches are not shared either), so
// SQLite's per-call locking is pure cost during bulk ingest.
Database::Database(const std::string& uri, int flags, std::string display_path)
    : display_path_(std::move(display_path)) {
  const int rc =
      sqlite3_open_v2(uri.c_str(), &db_, flags | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = "cannot open session '" + display_path_ + "': " + reason(db_, rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError(message);
  }
  sqlite3_extended_result_codes(db_, 1);
  // A live writer and its readers briefly wait on each other's locks (checkpoints, recovery).
  sqlite3_busy_timeout(db_, 5000);
}

Database::~Database() {
  finalize_statements();
  sqlite3_close(db_);
}

void Database::finalize_statements() {
  statements_.clear();
}

void Database::fail(int rc, std::string_view what) const {
  throw StoreError("session '" + display_path_ + "': " + std::string(what) +
                   " failed: " + reason(db_, rc));
}

void Database::exec(std::string_view sql) {
  char* error = nullptr;
  const std::string text(sql);
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
  if (rc != SQLITE_OK) {
    sqlite3_free(error);
    fail(rc, "changing the session");
  }
}

Statement& Database::statement(std::string_view sql) {
  auto it = statements_.find(std::string(sql));
  if (it == statements_.end())
    it = statements_.emplace(std::string(sql), std::make_unique<Statement>(*this, sql)).first;
  it->second->reset();
  return *it->second;
}

int64_t Database::pragma_int(std::string_view name) {
  Statement st(*this, "PRAGMA " + std::string(name));
  return st.step() ? st.int64(0) : 0;
}

bool Database::is_read_only() const {
  return sqlite3_db_readonly(db_, "main") == 1;
}

Statement::Statement(Database& db, std::string_view sql) : db_(db) {
  const int rc = sqlite3_prepare_v3(db.handle(), sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  if (rc != SQLITE_OK) db.fail(rc, "reading the session's tables");
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // COMMIT counts as read-only to SQLite, but it is where a transaction's writes happen.
  const std::string_view sql = sqlite3_sql(stmt_);
  const bool reads =
      sqlite3_stmt_readonly(stmt_) != 0 && !sql.starts_with("COMMIT") && !sql.starts_with("BEGIN");
  sqlite3_reset(stmt_);
  db_.fail(rc, reads ? "reading the session" : "writing the session");
}

void Statement::run() {
  while (step()) {
  }
  sqlite3_reset(stmt_);
}

std::string Statement::text(int col) const {
  return std::string(text_view(col));
}

std::string_view Statement::text_view(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  if (!p) return {};
  return {p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col))};
}

Transaction::Transaction(Database& db) : db_(db) {
  db_.statement("BEGIN IMMEDIATE").run();
  open_ = true;
}

Transaction::~Transaction() {
  if (open_) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  db_.statement("COMMIT").run();
  open_ = false;
}

std::string file_uri(const std::string& path, std::string_view query) {
  // RFC 3986 percent-encoding of everything that could be read as URI syntax.
  // "file://" plus an absolute path: an empty authority, so a path starting with "//" stays a path.
  std::string uri = "file://";
  for (unsigned char c : path) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '/' || c == '-' || c == '_' || c == '.' || c == '~';
    if (plain) {
      uri += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      uri += buf;
    }
  }
  if (!query.empty()) {
    uri += '?';
    uri += query;
  }
  return uri;
}

}  // namespace fusionscope::storage::detail
