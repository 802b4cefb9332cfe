// Checks a path before SQLite touches it, so that a missing, empty, foreign or truncated file
// gets a message a person understands instead of a generic SQLite error.
#pragma once

#include <cstdint>
#include <filesystem>

namespace fusionscope::storage::detail {

struct FileProbe {
  uint64_t size = 0;
  bool wal_exists = false;   // a "-wal" file sits beside it (a writer is open, or crashed)
  bool has_wal = false;      // ... and holds frames
  bool has_shm = false;      // a "-shm" file sits beside it
  bool has_journal = false;  // a non-empty rollback "-journal": a transaction was cut short
};

// Throws StoreError unless `path` is a readable, complete SQLite database file.
FileProbe probe_session_file(const std::filesystem::path& path);

std::filesystem::path sidecar(const std::filesystem::path& path, const char* suffix);

}  // namespace fusionscope::storage::detail
