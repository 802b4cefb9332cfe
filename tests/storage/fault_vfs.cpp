#include "fault_vfs.h"

#include <csignal>
#include <cstring>

#include <sqlite3.h>

namespace fusionscope::storage::testing {

namespace {

std::atomic<FaultPlan*> g_plan{nullptr};
sqlite3_vfs* g_base = nullptr;

// What to do with the next file-changing operation.
enum class Verdict { kGo, kFull, kIo, kTorn };

Verdict next_operation() {
  FaultPlan* plan = g_plan.load();
  if (plan == nullptr) return Verdict::kGo;
  const int64_t n = plan->count.fetch_add(1);
  if (plan->fault == Fault::kNone) return Verdict::kGo;
  if (plan->fault == Fault::kDiskFull && n >= plan->at) {
    plan->tripped = true;
    return Verdict::kFull;
  }
  if (n != plan->at) return Verdict::kGo;
  plan->tripped = true;
  switch (plan->fault) {
    case Fault::kIoError:
      return Verdict::kIo;
    case Fault::kKill:
      ::raise(SIGKILL);
      return Verdict::kGo;
    case Fault::kKillTornWrite:
      return Verdict::kTorn;
    default:
      return Verdict::kGo;
  }
}

// A file of the faulty VFS: the base VFS's file follows this header in the same allocation.
struct FaultFile {
  sqlite3_file base;  // pMethods = &kMethods
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};

int f_close(sqlite3_file* f) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  return ff->real()->pMethods->xClose(ff->real());
}
int f_read(sqlite3_file* f, void* p, int n, sqlite3_int64 off) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  return ff->real()->pMethods->xRead(ff->real(), p, n, off);
}
int f_write(sqlite3_file* f, const void* p, int n, sqlite3_int64 off) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  switch (next_operation()) {
    case Verdict::kFull:
      return SQLITE_FULL;
    case Verdict::kIo:
      return SQLITE_IOERR_WRITE;
    case Verdict::kTorn:
      ff->real()->pMethods->xWrite(ff->real(), p, n / 2, off);
      ::raise(SIGKILL);
      return SQLITE_IOERR_WRITE;
    case Verdict::kGo:
      break;
  }
  return ff->real()->pMethods->xWrite(ff->real(), p, n, off);
}
int f_truncate(sqlite3_file* f, sqlite3_int64 size) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  switch (next_operation()) {
    case Verdict::kFull:
      return SQLITE_FULL;
    case Verdict::kIo:
      return SQLITE_IOERR_TRUNCATE;
    case Verdict::kTorn:
      ::raise(SIGKILL);
      return SQLITE_IOERR_TRUNCATE;
    case Verdict::kGo:
      break;
  }
  return ff->real()->pMethods->xTruncate(ff->real(), size);
}
int f_sync(sqlite3_file* f, int flags) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  switch (next_operation()) {
    case Verdict::kFull:
      return SQLITE_FULL;
    case Verdict::kIo:
      return SQLITE_IOERR_FSYNC;
    case Verdict::kTorn:
      ::raise(SIGKILL);
      return SQLITE_IOERR_FSYNC;
    case Verdict::kGo:
      break;
  }
  return ff->real()->pMethods->xSync(ff->real(), flags);
}
int f_size(sqlite3_file* f, sqlite3_int64* size) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  return ff->real()->pMethods->xFileSize(ff->real(), size);
}
int f_lock(sqlite3_file* f, int level) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  return ff->real()->pMethods->xLock(ff->real(), level);
}
int f_unlock(sqlite3_file* f, int level) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  return ff->real()->pMethods->xUnlock(ff->real(), level);
}
int f_check_reserved(sqlite3_file* f, int* out) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  return ff->real()->pMethods->xCheckReservedLock(ff->real(), out);
}
int f_control(sqlite3_file* f, int op, void* arg) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  return ff->real()->pMethods->xFileControl(ff->real(), op, arg);
}
int f_sector(sqlite3_file* f) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  return ff->real()->pMethods->xSectorSize(ff->real());
}
int f_device(sqlite3_file* f) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  return ff->real()->pMethods->xDeviceCharacteristics(ff->real());
}
int f_shm_map(sqlite3_file* f, int page, int size, int extend, void volatile** out) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  return ff->real()->pMethods->xShmMap(ff->real(), page, size, extend, out);
}
int f_shm_lock(sqlite3_file* f, int offset, int n, int flags) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  return ff->real()->pMethods->xShmLock(ff->real(), offset, n, flags);
}
void f_shm_barrier(sqlite3_file* f) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  ff->real()->pMethods->xShmBarrier(ff->real());
}
int f_shm_unmap(sqlite3_file* f, int del) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  return ff->real()->pMethods->xShmUnmap(ff->real(), del);
}
int f_fetch(sqlite3_file* f, sqlite3_int64 off, int n, void** out) {
  // No memory-mapped reads: every page goes through f_read, so the plan sees the whole picture.
  (void)f;
  (void)off;
  (void)n;
  *out = nullptr;
  return SQLITE_OK;
}
int f_unfetch(sqlite3_file* f, sqlite3_int64 off, void* p) {
  (void)f;
  (void)off;
  (void)p;
  return SQLITE_OK;
}

const sqlite3_io_methods kMethods = {
    3,          f_close,       f_read,           f_write,   f_truncate, f_sync,   f_size,
    f_lock,     f_unlock,      f_check_reserved, f_control, f_sector,   f_device, f_shm_map,
    f_shm_lock, f_shm_barrier, f_shm_unmap,      f_fetch,   f_unfetch,
};

int v_open(sqlite3_vfs* vfs, const char* name, sqlite3_file* f, int flags, int* out_flags) {
  (void)vfs;
  auto* ff = reinterpret_cast<FaultFile*>(f);
  std::memset(ff, 0, sizeof(FaultFile));
  const int rc = g_base->xOpen(g_base, name, ff->real(), flags, out_flags);
  // SQLite calls xClose only when pMethods is set: leave it unset when the real open failed.
  ff->base.pMethods = ff->real()->pMethods != nullptr ? &kMethods : nullptr;
  return rc;
}
int v_delete(sqlite3_vfs*, const char* name, int sync) {
  return g_base->xDelete(g_base, name, sync);
}
int v_access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return g_base->xAccess(g_base, name, flags, out);
}
int v_full_path(sqlite3_vfs*, const char* name, int n, char* out) {
  return g_base->xFullPathname(g_base, name, n, out);
}
void* v_dl_open(sqlite3_vfs*, const char* name) {
  return g_base->xDlOpen(g_base, name);
}
void v_dl_error(sqlite3_vfs*, int n, char* out) {
  g_base->xDlError(g_base, n, out);
}
void (*v_dl_sym(sqlite3_vfs*, void* h, const char* sym))(void) {
  return g_base->xDlSym(g_base, h, sym);
}
void v_dl_close(sqlite3_vfs*, void* h) {
  g_base->xDlClose(g_base, h);
}
int v_random(sqlite3_vfs*, int n, char* out) {
  return g_base->xRandomness(g_base, n, out);
}
int v_sleep(sqlite3_vfs*, int us) {
  return g_base->xSleep(g_base, us);
}
int v_time(sqlite3_vfs*, double* out) {
  return g_base->xCurrentTime(g_base, out);
}
int v_last_error(sqlite3_vfs*, int n, char* out) {
  return g_base->xGetLastError(g_base, n, out);
}
int v_time64(sqlite3_vfs*, sqlite3_int64* out) {
  return g_base->xCurrentTimeInt64(g_base, out);
}

sqlite3_vfs g_vfs;

}  // namespace

void install_fault_vfs(FaultPlan* plan) {
  if (g_base == nullptr) {
    sqlite3_initialize();
    g_base = sqlite3_vfs_find(nullptr);
    g_vfs = sqlite3_vfs{};
    g_vfs.iVersion = 2;
    g_vfs.szOsFile = static_cast<int>(sizeof(FaultFile)) + g_base->szOsFile;
    g_vfs.mxPathname = g_base->mxPathname;
    g_vfs.zName = "fusionscope-fault";
    g_vfs.xOpen = v_open;
    g_vfs.xDelete = v_delete;
    g_vfs.xAccess = v_access;
    g_vfs.xFullPathname = v_full_path;
    g_vfs.xDlOpen = v_dl_open;
    g_vfs.xDlError = v_dl_error;
    g_vfs.xDlSym = v_dl_sym;
    g_vfs.xDlClose = v_dl_close;
    g_vfs.xRandomness = v_random;
    g_vfs.xSleep = v_sleep;
    g_vfs.xCurrentTime = v_time;
    g_vfs.xGetLastError = v_last_error;
    g_vfs.xCurrentTimeInt64 = v_time64;
    sqlite3_vfs_register(&g_vfs, /*makeDflt=*/1);
  }
  g_plan = plan;
}

}  // namespace fusionscope::storage::testing
