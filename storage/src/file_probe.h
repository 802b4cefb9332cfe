// Checks a path before SQLite touches it, so that a missing, empty, foreign or truncated file
// gets a message a person understands instead of a generic SQLite error.
#pragma once

#include <cstdint>
#include <filesystem>

namespace fusionscope::storage::detail {

class SessionFile;

struct FileProbe {
  uint64_t size = 0;
  bool wal_exists = false;   // a "-wal" file sits beside it (a writer is open, or crashed)
  bool has_wal = false;      // ... and holds frames
  bool has_shm = false;      // a "-shm" file sits beside it
  bool has_journal = false;  // a non-empty rollback "-journal": a transaction was cut short
};

// Throws StoreError unless `path` names an existing, non-empty regular file.
void check_session_path(const std::filesystem::path& path);

// Throws StoreError unless `path` (already open as `file`) is a readable, complete SQLite database
// file. Looks under a shared lock, as an SQLite reader would: no connection can be closing the
// file (checkpointing, deleting its journals) meanwhile. The size check is skipped while a
// write-ahead log sits beside the file: pages may then be on their way from the log into the file
// (a checkpoint), and SQLite reads them from the log.
FileProbe probe_session_file(const std::filesystem::path& path, SessionFile& file);

std::filesystem::path sidecar(const std::filesystem::path& path, const char* suffix);

}  // namespace fusionscope::storage::detail
