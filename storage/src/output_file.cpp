#include "fusionscope/storage/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fusionscope::storage {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse(const fs::path& target, const std::string& why,
                         OutputError::Kind kind = OutputError::Kind::kArguments) {
  throw OutputError(kind, "cannot write '" + target.string() + "': " + why);
}

// Two paths name the same file: the same inode when both exist, else the same absolute path.
bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) {
    const bool same = fs::equivalent(a, b, ec);
    if (!ec) return same;
  }
  const fs::path ca = fs::weakly_canonical(a, ec);
  const fs::path cb = fs::weakly_canonical(b, ec);
  return ca == cb;
}

}  // namespace

std::string write_error_reason(int error) {
  switch (error) {
    case ENOSPC:
    case EDQUOT:
      return "the disk is full";
    case EFBIG:
      return "the file size limit was reached (ulimit -f)";
    case EROFS:
      return "the file system is read-only";
    case EACCES:
    case EPERM:
      return "permission denied";
    case EIO:
      return "an I/O error occurred (the disk or its connection failed)";
    default:
      return std::strerror(error);
  }
}

bool is_session_file(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return false;
  unsigned char header[72] = {};
  const ssize_t n = ::pread(fd, header, sizeof header, 0);
  ::close(fd);
  // "SQLite format 3\0", then the application id "FSDB" at offset 68.
  return n == static_cast<ssize_t>(sizeof header) &&
         std::memcmp(header, "SQLite format 3", 16) == 0 &&
         std::memcmp(header + 68, "FSDB", 4) == 0;
}

void check_output(const fs::path& target, const OutputRules& rules) {
  if (target.empty()) refuse(target, "no file name given");
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(target, ec);
  const fs::file_status st = fs::status(target, ec);
  if (fs::is_directory(st) && !fs::is_symlink(link)) refuse(target, "it is a folder");
  for (const fs::path& in : rules.inputs)
    if (!in.empty() && same_file(target, in))
      refuse(target, "it is an input of this command ('" + in.string() + "')");
  for (const fs::path& other : rules.others)
    if (!other.empty() && same_file(target, other))
      refuse(target, "it is given as two outputs of this command");
  if (fs::exists(st) && fs::is_regular_file(st) && is_session_file(target))
    refuse(target,
           "it is a fusionscope session; sessions are only changed through the session "
           "commands, never overwritten by an export");
  if (fs::exists(link) && !rules.force)
    refuse(target,
           std::string(fs::is_symlink(link) ? "it is a symbolic link" : "the file already exists") +
               "; pass --force to replace it");
  if (fs::exists(st) && !fs::is_regular_file(st) && !fs::is_symlink(link))
    refuse(target, "it is not a regular file");
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    refuse(target, "the folder '" + dir.string() + "' does not exist",
           OutputError::Kind::kFileSystem);
}

OutputFile::OutputFile(fs::path target, const OutputRules& rules) : target_(std::move(target)) {
  check_output(target_, rules);
  const fs::path dir = target_.has_parent_path() ? target_.parent_path() : fs::path(".");
  const std::string name = target_.filename().string();
  for (int attempt = 0;; ++attempt) {
    temp_ = dir /
            (".partial-" + std::to_string(::getpid()) + "-" + std::to_string(attempt) + "-" + name);
    const int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      return;
    }
    if (errno != EEXIST || attempt > 100)
      refuse(target_, "cannot create a file in its folder (" + write_error_reason(errno) + ")",
             OutputError::Kind::kFileSystem);
  }
}

OutputFile::~OutputFile() {
  if (done_) return;
  std::error_code ec;
  fs::remove(temp_, ec);
}

std::string OutputFile::explain(std::string message) const {
  const std::string temp = temp_.string(), target = target_.string();
  for (size_t at; (at = message.find(temp)) != std::string::npos;)
    message.replace(at, temp.size(), target);
  return message;
}

void OutputFile::commit() {
  auto fail = [&](const std::string& why) {
    std::error_code ec;
    fs::remove(temp_, ec);
    done_ = true;
    throw OutputError(
        OutputError::Kind::kFileSystem,
        "writing '" + target_.string() + "' failed: " + why + "; nothing was written");
  };
  const int fd = ::open(temp_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(write_error_reason(errno));
  const int synced = ::fsync(fd);
  const int sync_error = errno;
  ::close(fd);
  if (synced != 0 && sync_error != EINVAL) fail(write_error_reason(sync_error));
  if (::rename(temp_.c_str(), target_.c_str()) != 0) fail(write_error_reason(errno));
  done_ = true;
}

}  // namespace fusionscope::storage
