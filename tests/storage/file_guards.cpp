#include "file_guards.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <sqlite3.h>

namespace fusionscope::storage::testing {

namespace fs = std::filesystem;

namespace {

// Sets or clears the ext2/3/4-style immutable attribute (needs CAP_LINUX_IMMUTABLE).
bool set_immutable(const fs::path& path, bool on, std::string* why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (why) *why = std::string("open: ") + std::strerror(errno);
    return false;
  }
  int flags = 0;
  bool ok = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
  if (ok) {
    flags = on ? (flags | FS_IMMUTABLE_FL) : (flags & ~FS_IMMUTABLE_FL);
    ok = ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
  }
  if (!ok && why) *why = std::string("setting the immutable attribute: ") + std::strerror(errno);
  ::close(fd);
  return ok;
}

}  // namespace

ReadOnlyGuard::ReadOnlyGuard(fs::path path) : path_(std::move(path)) {
  if (::geteuid() != 0) {
    old_perms_ = fs::status(path_).permissions();
    fs::permissions(path_,
                    fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                    fs::perm_options::remove);
    ok_ = ::access(path_.c_str(), W_OK) != 0;
    if (!ok_) why_ = "removing write permission did not make the path read-only";
    return;
  }
  immutable_ = set_immutable(path_, true, &why_);
  ok_ = immutable_ && ::access(path_.c_str(), W_OK) != 0;
  if (immutable_ && !ok_) why_ = "the immutable attribute did not make the path read-only";
  if (!ok_) why_ = "running as root and cannot make '" + path_.string() + "' read-only: " + why_;
}

ReadOnlyGuard::~ReadOnlyGuard() {
  std::error_code ec;
  if (immutable_)
    set_immutable(path_, false, nullptr);
  else if (::geteuid() != 0)
    fs::permissions(path_, old_perms_, ec);
}

FileSnapshot snapshot(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  FileSnapshot s;
  s.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  s.mtime = fs::last_write_time(path);
  return s;
}

void raw_exec(const fs::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open(path.c_str(), &db);
  char* error = nullptr;
  if (rc == SQLITE_OK) rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  const std::string message = error ? error : (db ? sqlite3_errmsg(db) : "open failed");
  sqlite3_free(error);
  sqlite3_close(db);
  if (rc != SQLITE_OK) throw std::runtime_error("raw SQL on " + path.string() + ": " + message);
}

int64_t raw_int(const fs::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_stmt* st = nullptr;
  int64_t value = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK &&
      sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    value = sqlite3_column_int64(st, 0);
  const std::string message = db ? sqlite3_errmsg(db) : "open failed";
  sqlite3_finalize(st);
  sqlite3_close(db);
  if (value == -1 && message != "not an error")
    throw std::runtime_error("raw SQL on " + path.string() + ": " + message);
  return value;
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace fusionscope::storage::testing
