#include "sqlite_db.h"

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
    default:
      return {};
  }
}

}  // namespace

// NOMUTEX: a store is used by one thread at a time (its caches are not shared either), so
// SQLite's per-call locking is pure cost during bulk ingest.
Database::Database(const std::string& uri, int flags, std::string display_path)
    : display_path_(std::move(display_path)) {
  const int rc =
      sqlite3_open_v2(uri.c_str(), &db_, flags | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = "cannot open session '" + display_path_ + "': ";
    message += db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    if (auto hint = hint_for(rc); !hint.empty()) message += " (" + std::string(hint) + ")";
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
  std::string message = "session '" + display_path_ + "': " + std::string(what) + " failed: ";
  const char* detail = db_ ? sqlite3_errmsg(db_) : nullptr;
  message += detail && *detail ? detail : sqlite3_errstr(rc);
  if (auto hint = hint_for(rc); !hint.empty()) message += " (" + std::string(hint) + ")";
  throw StoreError(message);
}

void Database::exec(std::string_view sql) {
  char* error = nullptr;
  const std::string text(sql);
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
  if (rc != SQLITE_OK) {
    sqlite3_free(error);
    fail(rc, "executing '" + text.substr(0, 60) + "'");
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
  if (rc != SQLITE_OK) db.fail(rc, "preparing '" + std::string(sql.substr(0, 60)) + "'");
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
  sqlite3_reset(stmt_);
  db_.fail(rc, "running '" + std::string(sqlite3_sql(stmt_)).substr(0, 60) + "'");
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
