#include "session_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>
#include <utility>

#include "fusionscope/storage/session_store.h"

namespace fusionscope::storage::detail {

namespace {

// Writer marks: byte kMarkBase + run id. SQLite's own locks lie at 1 GiB (its pending byte) and
// the 510 bytes after it; 2^40 is far beyond both and beyond any session's size.
constexpr off_t kMarkBase = off_t{1} << 40;
// SQLite's unix VFS: the shared-lock range starts two bytes after the pending byte (1 GiB).
constexpr off_t kSharedFirst = 0x40000000 + 2;
constexpr off_t kSharedSize = 510;

struct Registry {
  std::mutex mutex;
  std::map<std::pair<dev_t, ino_t>, std::weak_ptr<SessionFile>> files;
};
Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: stores may outlive static destruction
  return *r;
}

int ofd_lock(int fd, short type, off_t start, off_t len, bool wait) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = start;
  fl.l_len = len;
  return ::fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl);
}

[[noreturn]] void fail(const std::string& display, const std::string& why) {
  throw StoreError("cannot open session '" + display + "': " + why);
}

}  // namespace

std::shared_ptr<SessionFile> SessionFile::acquire(const std::filesystem::path& absolute,
                                                  const std::string& display) {
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  struct stat st {};
  if (::stat(absolute.c_str(), &st) == 0) {
    auto it = reg.files.find({st.st_dev, st.st_ino});
    if (it != reg.files.end())
      if (auto file = it->second.lock()) return file;
  }
  const int fd = ::open(absolute.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) fail(display, std::string("cannot read it: ") + std::strerror(errno));
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);  // not registered: no lock of this process can hang on this descriptor yet
    fail(display, std::string("cannot read it: ") + std::strerror(e));
  }
  auto& slot = reg.files[{st.st_dev, st.st_ino}];
  if (auto file = slot.lock()) {
    // The path was replaced between stat and open, by the file another store already has open.
    // Closing this descriptor would drop that store's locks: it goes with the file instead.
    std::lock_guard file_lock(file->mutex_);
    file->spare_fds_.push_back(fd);
    return file;
  }
  std::shared_ptr<SessionFile> file(new SessionFile);
  file->display_ = display;
  file->path_ = absolute;
  file->dev_ = st.st_dev;
  file->ino_ = st.st_ino;
  file->fd_ = fd;
  slot = file;
  return file;
}

SessionFile::~SessionFile() {
  std::vector<int> fds = spare_fds_;
  for (int fd : {fd_, write_fd_})
    if (fd >= 0) fds.push_back(fd);
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  auto it = reg.files.find({dev_, ino_});
  if (it != reg.files.end()) {
    if (auto successor = it->second.lock()) {
      // Another store of this process opened the file meanwhile: its SQLite connection may hold
      // locks that closing these descriptors would drop. They close with it.
      std::lock_guard file_lock(successor->mutex_);
      successor->spare_fds_.insert(successor->spare_fds_.end(), fds.begin(), fds.end());
      return;
    }
    reg.files.erase(it);
  }
  for (int fd : fds) ::close(fd);
}

size_t SessionFile::read_at(uint64_t offset, void* out, size_t size) const {
  size_t got = 0;
  auto* p = static_cast<char*>(out);
  while (got < size) {
    const ssize_t n = ::pread(fd_, p + got, size - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw StoreError("cannot open session '" + display_ +
                       "': reading it failed: " + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  return got;
}

int SessionFile::writable_fd() {
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags >= 0 && (flags & O_ACCMODE) == O_RDWR) return fd_;
  if (write_fd_ < 0) write_fd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC | O_NOCTTY);
  return write_fd_;
}

bool SessionFile::mark_writer(int64_t run_id) {
  std::lock_guard lock(mutex_);
  marks_.insert(run_id);
  const int fd = writable_fd();
  return fd >= 0 && ofd_lock(fd, F_WRLCK, kMarkBase + run_id, 1, false) == 0;
}

void SessionFile::unmark_writer(int64_t run_id) {
  std::lock_guard lock(mutex_);
  marks_.erase(run_id);
  const int fd = writable_fd();
  if (fd >= 0) ofd_lock(fd, F_UNLCK, kMarkBase + run_id, 1, false);
}

bool SessionFile::writer_alive(int64_t run_id) const {
  std::lock_guard lock(mutex_);
  if (marks_.count(run_id)) return true;
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = kMarkBase + run_id;
  fl.l_len = 1;
  if (::fcntl(fd_, F_OFD_GETLK, &fl) != 0) return true;  // cannot tell: presume alive
  return fl.l_type != F_UNLCK;
}

bool SessionFile::lock_shared(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    if (ofd_lock(fd_, F_RDLCK, kSharedFirst, kSharedSize, false) == 0) return true;
    if (errno != EAGAIN && errno != EACCES && errno != EINTR) return false;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void SessionFile::unlock_shared() {
  ofd_lock(fd_, F_UNLCK, kSharedFirst, kSharedSize, false);
}

}  // namespace fusionscope::storage::detail
