// SessionStore's private state, shared by the files that implement it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "digest.h"
#include "fusionscope/storage/bounded_cache.h"
#include "fusionscope/storage/session_store.h"
#include "record_io.h"
#include "session_file.h"
#include "sqlite_db.h"

namespace fusionscope::storage {

namespace detail {

// The string ids a store keeps in memory, at most: two generations of 2^16 strings or 8 MiB
// each. Enough that the names a session repeats (kernels, operators, API calls, their common
// argument objects) stay, while a trace whose every event names a new string costs lookups in
// the file rather than memory.
inline constexpr size_t kStringCacheEntries = size_t{1} << 16;
inline constexpr size_t kStringCacheBytes = size_t{8} << 20;

// Kept outside SessionStore so that the implementation files' free functions can take it.
struct StoreState {
  std::filesystem::path path;
  bool read_only = true;
  int file_version = 0;
  std::shared_ptr<SessionFile> file;  // before db: closed after the connection
  std::unique_ptr<detail::Database> db;

  // The string table is the file's: this store keeps only the ids of the texts it used lately
  // and the hashes of their texts (for digests), in bounded caches, and looks the others up in
  // the file (the UNIQUE index on `strings.text`). Every string cached is in the file (intern
  // writes new ones at once).
  TextCache<StringId> string_ids{kStringCacheEntries, kStringCacheBytes};
  StringHashes string_hashes{[this](StringId id) { return string_text(id); }};
  // Ids below this one may name strings (the highest id read from the file, plus one).
  StringId string_end = 1;

  // The id of `text` in the file, if it is there.
  std::optional<StringId> find_string(std::string_view text);
  // The text of string `id`: "" for an id below string_end that has no row, nullopt beyond it.
  std::optional<std::string> string_text(StringId id);
  // Reads string_end from the file.
  void refresh_string_end();
  // The id of `text`, added to the file if it is not there (inside a write transaction, after
  // refresh_string_end(), so that a new id is never one another writer took).
  StringId add_string(std::string_view text);
  // Throws unless `id` names a string of the file.
  void require_string(StringId id);

  void require_writable(std::string_view what) const;
  [[noreturn]] void no_such_run(int64_t run_id) const;
  void migrate_in_memory();
  void require_run(int64_t run_id);

  // A stored row as readers see it: a kWriting run whose writer is gone reads kInterrupted, and
  // a description that differs from its digest reads kDamaged.
  RunInfo present(RunRow row) const;
  // Marks, in the file, the runs whose writers are gone (a read-write open does it).
  void record_interrupted_runs();
};

}  // namespace detail

struct SessionStore::Impl : detail::StoreState {};

}  // namespace fusionscope::storage
