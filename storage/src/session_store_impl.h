// SessionStore's private state, shared by the files that implement it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fusionscope/storage/session_store.h"
#include "sqlite_db.h"

namespace fusionscope::storage {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

namespace detail {

// Kept outside SessionStore so that the implementation files' free functions can take it.
struct StoreState {
  std::filesystem::path path;
  bool read_only = true;
  int file_version = 0;
  std::unique_ptr<detail::Database> db;

  // The string table, kept whole in memory: ids index `strings`. Strings at and after
  // `persisted_strings` are not in the file yet (see flush_strings).
  std::vector<std::string> strings;
  std::unordered_map<std::string, StringId, StringHash, std::equal_to<>> string_ids;
  size_t persisted_strings = 0;

  void require_writable(std::string_view what) const;
  [[noreturn]] void no_such_run(int64_t run_id) const;
  void load_strings();
  // A reader picks up strings a live writer added since.
  void refresh_strings();
  void migrate_in_memory();
  void require_run(int64_t run_id);

  // Runs `body` in one write transaction that first writes the strings interned since the last
  // one, so that no committed record refers to a string the file lacks.
  template <typename Body>
  void write_transaction(Body&& body) {
    Transaction tx(*db);
    const size_t upto = strings.size();
    write_strings(persisted_strings, upto);
    body();
    tx.commit();
    persisted_strings = upto;  // only now: a rolled-back transaction wrote nothing
  }

 private:
  void read_strings_from(size_t first);
  void write_strings(size_t begin, size_t end);
};

}  // namespace detail

struct SessionStore::Impl : detail::StoreState {};

}  // namespace fusionscope::storage
