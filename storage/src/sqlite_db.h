// Thin RAII wrappers over the SQLite C API: a connection, cached prepared statements, and
// transactions. Every SQLite failure becomes a StoreError that names the file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include <sqlite3.h>

namespace fusionscope::storage::detail {

class Statement;

class Database {
 public:
  // `uri` is an SQLite "file:" URI; `display_path` is what error messages name.
  Database(const std::string& uri, int flags, std::string display_path);
  Database(Database&&) = delete;
  Database& operator=(Database&&) = delete;
  ~Database();

  sqlite3* handle() const { return db_; }
  const std::string& display_path() const { return display_path_; }

  void exec(std::string_view sql);
  // A cached prepared statement, reset and with its bindings cleared.
  Statement& statement(std::string_view sql);
  // Throws a StoreError describing `rc` for `what` ("reading runs", ...).
  [[noreturn]] void fail(int rc, std::string_view what) const;
  void check(int rc, std::string_view what) const {
    if (rc != SQLITE_OK) fail(rc, what);
  }
  int64_t pragma_int(std::string_view name);
  bool is_read_only() const;
  void finalize_statements();

 private:
  sqlite3* db_ = nullptr;
  std::string display_path_;
  std::unordered_map<std::string, std::unique_ptr<Statement>> statements_;
};

class Statement {
 public:
  Statement(Database& db, std::string_view sql);
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  sqlite3_stmt* handle() const { return stmt_; }
  void reset();

  // Parameters are 1-based, as in SQLite.
  void bind(int i, int64_t v) { check_bind(sqlite3_bind_int64(stmt_, i, v)); }
  void bind(int i, double v) { check_bind(sqlite3_bind_double(stmt_, i, v)); }
  void bind(int i, std::string_view v) {
    check_bind(sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  void bind_null(int i) { check_bind(sqlite3_bind_null(stmt_, i)); }

  // Steps once: true when a row is available, false when done.
  bool step();
  // Steps a statement that returns no rows, then resets it.
  void run();

  int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }
  double real(int col) const { return sqlite3_column_double(stmt_, col); }
  std::string text(int col) const;
  std::string_view text_view(int col) const;

 private:
  void check_bind(int rc) const {
    if (rc != SQLITE_OK) db_.fail(rc, "binding a statement parameter");
  }
  Database& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// A write transaction (BEGIN IMMEDIATE): commits only via commit(); rolls back otherwise.
class Transaction {
 public:
  explicit Transaction(Database& db);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  void commit();

 private:
  Database& db_;
  bool open_ = false;
};

// Quotes an absolute `path` into an SQLite "file:" URI with the given query ("mode=ro", ...).
std::string file_uri(const std::string& path, std::string_view query);

}  // namespace fusionscope::storage::detail
