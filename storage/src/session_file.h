// One open descriptor per session file per process, shared by every store and writer of that file.
//
// Why one: POSIX record locks belong to a process and a file, and closing *any* descriptor of the
// file drops all of them, SQLite's own included. A reader that opened the file to look at its
// header and closed it again would silently unlock a live SQLite connection of the same process
// (SQLite's "How To Corrupt Your Database Files", 2.2). So the store opens each file once, reads
// through that descriptor, and closes it only when no store or writer of this process uses the
// file any more (their SQLite connections are closed first).
//
// The descriptor also carries the writers' marks: a RunWriter holds an open-file-description lock
// on one byte per run, far beyond any real file offset (SQLite locks bytes near 1 GiB). The
// operating system drops it when the writing process ends, however it ends; a run still marked
// kWriting whose byte no process locks has lost its writer.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace fusionscope::storage::detail {

class SessionFile {
 public:
  // Opens (or shares) the descriptor of an existing file. Throws StoreError naming `display`.
  static std::shared_ptr<SessionFile> acquire(const std::filesystem::path& absolute,
                                              const std::string& display);
  ~SessionFile();
  SessionFile(const SessionFile&) = delete;
  SessionFile& operator=(const SessionFile&) = delete;

  // Reads up to `size` bytes at `offset`; returns how many were read (short at the end).
  size_t read_at(uint64_t offset, void* out, size_t size) const;

  // The writer's mark of run `run_id`: true when taken (false when the file system has no
  // open-file-description locks, in which case liveness cannot be told; see writer_alive).
  bool mark_writer(int64_t run_id);
  void unmark_writer(int64_t run_id);
  // Whether some process (this one included) holds run `run_id`'s writer mark. When the file
  // system cannot tell, a writer is presumed alive: a run is never called interrupted wrongly.
  bool writer_alive(int64_t run_id) const;

  // A read lock over the bytes SQLite's connections share-lock: while held, no connection can
  // take the file's exclusive lock (the last one closing, which checkpoints and deletes the
  // journal files; a rollback-journal writer). Waits up to `timeout_ms`; false if it cannot.
  bool lock_shared(int timeout_ms);
  void unlock_shared();

 private:
  SessionFile() = default;
  int writable_fd();

  mutable std::mutex mutex_;
  std::string display_;
  std::filesystem::path path_;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  int fd_ = -1;                 // read-only
  int write_fd_ = -1;           // read-write, opened for the first writer mark
  std::vector<int> spare_fds_;  // descriptors that must not be closed before this file's
  std::set<int64_t> marks_;     // runs this process writes
};

}  // namespace fusionscope::storage::detail
