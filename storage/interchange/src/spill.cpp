#include "spill.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include "fusionscope/interchange/interchange_error.h"

namespace fusionscope::interchange::detail {
namespace {

// An unlinked file in `dir`: O_TMPFILE where the file system has it, else a named one removed
// at once. -1 when neither can be made.
int anonymous_file(const std::filesystem::path& dir) {
  if (dir.empty()) return -1;
#ifdef O_TMPFILE
  const int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
#endif
  std::string name = (dir / "fusionscope-import-XXXXXX").string();
  const int named = ::mkostemp(name.data(), O_CLOEXEC);
  if (named >= 0) ::unlink(name.c_str());
  return named;
}

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& where) {
  throw InterchangeError(what + " (temporary file in " + where.string() +
                         "): " + std::strerror(errno));
}

}  // namespace

TempFile::TempFile(const std::filesystem::path& dir) : where_(dir) {
  fd_ = anonymous_file(dir);
  if (fd_ < 0) {
    std::error_code ec;
    where_ = std::filesystem::temp_directory_path(ec);
    fd_ = anonymous_file(where_);
  }
  if (fd_ < 0) fail("cannot make a temporary file", dir);
}

TempFile::~TempFile() {
  if (fd_ >= 0) ::close(fd_);
}

uint64_t TempFile::append(const void* data, size_t bytes) {
  const uint64_t at = size_;
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd_, p, bytes, static_cast<off_t>(size_));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot write", where_);
    p += n;
    bytes -= static_cast<size_t>(n);
    size_ += static_cast<uint64_t>(n);
  }
  return at;
}

void TempFile::read(uint64_t offset, void* data, size_t bytes) const {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::pread(fd_, p, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot read back", where_);
    p += n;
    bytes -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
}

void TempFile::discard(uint64_t offset, uint64_t bytes) {
  // Only room: where the file system cannot punch holes, the bytes stay until the file goes.
  (void)::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                    static_cast<off_t>(bytes));
}

}  // namespace fusionscope::interchange::detail
