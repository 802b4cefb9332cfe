#include "file_probe.h"

#include <array>
#include <cstring>
#include <string>
#include <system_error>

#include "fusionscope/storage/session_store.h"
#include "session_file.h"

namespace fusionscope::storage::detail {

namespace {

constexpr size_t kHeaderSize = 100;
constexpr char kMagic[] = "SQLite format 3";  // followed by a NUL: 16 bytes
// How long a probe waits for a closing writer to finish.
constexpr int kLockTimeoutMs = 5000;

uint32_t be32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

[[noreturn]] void reject(const std::filesystem::path& path, const std::string& why) {
  throw StoreError("cannot open session '" + path.string() + "': " + why);
}

class SharedLock {
 public:
  explicit SharedLock(SessionFile& f) : file_(f), held_(f.lock_shared(kLockTimeoutMs)) {}
  ~SharedLock() {
    if (held_) file_.unlock_shared();
  }
  SharedLock(const SharedLock&) = delete;
  SharedLock& operator=(const SharedLock&) = delete;

 private:
  SessionFile& file_;
  bool held_;
};

}  // namespace

std::filesystem::path sidecar(const std::filesystem::path& path, const char* suffix) {
  return std::filesystem::path(path.string() + suffix);
}

void check_session_path(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) reject(path, "no such file");
  if (fs::is_directory(st)) reject(path, "it is a folder, not a session file");
  if (!fs::is_regular_file(st)) reject(path, "it is not a regular file");
  const uint64_t size = fs::file_size(path, ec);
  if (ec) reject(path, ec.message());
  if (size == 0) reject(path, "the file is empty (not a fusionscope session)");
}

FileProbe probe_session_file(const std::filesystem::path& path, SessionFile& file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  SharedLock lock(file);
  FileProbe probe;
  probe.size = fs::file_size(path, ec);
  if (ec) reject(path, ec.message());
  if (probe.size == 0) reject(path, "the file is empty (not a fusionscope session)");

  std::array<unsigned char, kHeaderSize> header{};
  const size_t got = file.read_at(0, header.data(), header.size());
  const bool magic = got >= sizeof kMagic && std::memcmp(header.data(), kMagic, sizeof kMagic) == 0;
  if (!magic) reject(path, "not a fusionscope session (the file is not an SQLite database)");
  if (got < kHeaderSize) reject(path, "the file is truncated (shorter than a database header)");

  const fs::path wal = sidecar(path, "-wal");
  probe.wal_exists = fs::exists(wal, ec);
  probe.has_wal = probe.wal_exists && fs::file_size(wal, ec) > 0 && !ec;
  probe.has_shm = fs::exists(sidecar(path, "-shm"), ec);
  const fs::path journal = sidecar(path, "-journal");
  probe.has_journal = fs::exists(journal, ec) && fs::file_size(journal, ec) > 0 && !ec;

  // Header layout: https://www.sqlite.org/fileformat2.html#the_database_header
  uint32_t page_size = (uint32_t{header[16]} << 8) | header[17];
  if (page_size == 1) page_size = 65536;
  const uint32_t page_count = be32(&header[28]);
  const bool count_valid = page_count != 0 && be32(&header[92]) == be32(&header[24]);
  if (page_size < 512 || (page_size & (page_size - 1)) != 0)
    reject(path, "the database header is damaged (invalid page size)");
  if (count_valid && !probe.wal_exists) {
    const uint64_t expected = uint64_t{page_size} * page_count;
    if (probe.size < expected)
      reject(path, "the file is truncated (" + std::to_string(probe.size) + " of " +
                       std::to_string(expected) + " bytes present)");
  }
  return probe;
}

}  // namespace fusionscope::storage::detail
