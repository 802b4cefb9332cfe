// SessionStore's private state, shared by the files that implement it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "digest.h"
#include "fusionscope/storage/session_store.h"
#include "record_io.h"
#include "session_file.h"
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
  std::shared_ptr<SessionFile> file;  // before db: closed after the connection
  std::unique_ptr<detail::Database> db;

  // The string table as far as this store has read it: ids index `strings`. Every string here
  // is in the file (intern writes new ones at once).
  std::vector<std::string> strings;
  std::unordered_map<std::string, StringId, StringHash, std::equal_to<>> string_ids;
  StringHashes string_hashes{strings};

  void require_writable(std::string_view what) const;
  [[noreturn]] void no_such_run(int64_t run_id) const;
  // Reads the strings other writers added since this store last looked.
  void refresh_strings();
  void migrate_in_memory();
  void require_run(int64_t run_id);
  StringId add_string(std::string_view text);  // inside a write transaction

  // A stored row as readers see it: a kWriting run whose writer is gone reads kInterrupted, and
  // a description that differs from its digest reads kDamaged.
  RunInfo present(RunRow row) const;
  // Marks, in the file, the runs whose writers are gone (a read-write open does it).
  void record_interrupted_runs();
};

}  // namespace detail

struct SessionStore::Impl : detail::StoreState {};

}  // namespace fusionscope::storage
