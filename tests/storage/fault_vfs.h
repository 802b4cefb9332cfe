// A failing file system for tests: an SQLite VFS that wraps the default one, counts every
// operation that changes a file (write, truncate, sync) and, at a chosen one, fails it as a full
// disk or an I/O error, or kills the process (before it, or half-way through a write).
// Installed as the default VFS, it is what every SessionStore of the process then writes through.
#pragma once

#include <atomic>
#include <cstdint>

namespace fusionscope::storage::testing {

enum class Fault {
  kNone,
  kDiskFull,       // the operation and every later one fails with SQLITE_FULL (the disk stays full)
  kIoError,        // this one operation fails with SQLITE_IOERR_WRITE
  kKill,           // SIGKILL before the operation
  kKillTornWrite,  // a write: half of its bytes are written, then SIGKILL (others: as kKill)
};

struct FaultPlan {
  Fault fault = Fault::kNone;
  int64_t at = -1;                // the 0-based index of the operation, counted from arm()
  std::atomic<int64_t> count{0};  // operations seen since arm()
  std::atomic<bool> tripped{false};
};

// Registers the faulty VFS as SQLite's default (once per process) and makes it follow `plan`.
// `plan` must outlive every connection opened afterwards; nullptr disarms.
void install_fault_vfs(FaultPlan* plan);

}  // namespace fusionscope::storage::testing
