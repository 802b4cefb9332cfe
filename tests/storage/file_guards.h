// Test helpers around files: making a path read-only even for root, raw SQLite access, and
// snapshots of a file's bytes and times.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace fusionscope::storage::testing {

// Makes a file or folder unwritable for the guard's lifetime: by permission bits for a normal
// user, by the immutable attribute for root (whom permission bits do not stop). ok() is false,
// with why(), where neither works (then the test skips).
class ReadOnlyGuard {
 public:
  explicit ReadOnlyGuard(std::filesystem::path path);
  ReadOnlyGuard(const ReadOnlyGuard&) = delete;
  ReadOnlyGuard& operator=(const ReadOnlyGuard&) = delete;
  ~ReadOnlyGuard();
  bool ok() const { return ok_; }
  const std::string& why() const { return why_; }

 private:
  std::filesystem::path path_;
  bool ok_ = false;
  bool immutable_ = false;
  std::filesystem::perms old_perms_{};
  std::string why_;
};

struct FileSnapshot {
  std::vector<char> bytes;
  std::filesystem::file_time_type mtime;
  friend bool operator==(const FileSnapshot&, const FileSnapshot&) = default;
};
FileSnapshot snapshot(const std::filesystem::path& path);

// Runs SQL on a file directly (no store), for corrupting or inspecting fixtures.
void raw_exec(const std::filesystem::path& path, const std::string& sql);
int64_t raw_int(const std::filesystem::path& path, const std::string& sql);

void write_bytes(const std::filesystem::path& path, const std::string& bytes);

}  // namespace fusionscope::storage::testing
