#include "fusionscope/storage/new_session.h"

#include <unistd.h>

#include <cerrno>
#include <string>

#include "fusionscope/storage/output_file.h"

namespace fusionscope::storage {

namespace fs = std::filesystem;

namespace {

fs::path temporary_beside(const fs::path& path) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  return dir / (".partial-" + std::to_string(::getpid()) + "-" + path.filename().string());
}

}  // namespace

NewSession::NewSession(fs::path path, const SessionInfo& info)
    : path_(std::move(path)), temp_(temporary_beside(path_)) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(path_, ec)))
    throw StoreError("cannot create session '" + path_.string() + "': the file already exists");
  remove_temporary();  // a leftover of this process id, long dead
  store_.emplace(SessionStore::create(temp_, info));
}

NewSession::~NewSession() {
  if (published_) return;
  store_.reset();
  remove_temporary();
}

void NewSession::remove_temporary() {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    fs::remove(temp_.string() + suffix, ec);
}

void NewSession::publish() {
  try {
    store_->close();
  } catch (const StoreError& e) {
    store_.reset();
    remove_temporary();
    throw StoreError("cannot create session '" + path_.string() + "': " + e.what());
  }
  store_.reset();
  // link() never replaces: a file that appeared at the path meanwhile is kept.
  int linked = ::link(temp_.c_str(), path_.c_str());
  if (linked != 0 && (errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP)) {
    // A file system without hard links: rename, after looking once more that the path is free.
    std::error_code ec;
    linked = fs::exists(fs::symlink_status(path_, ec)) ? (errno = EEXIST, -1)
                                                       : ::rename(temp_.c_str(), path_.c_str());
  }
  if (linked != 0) {
    const int error = errno;
    remove_temporary();
    throw StoreError(
        "cannot create session '" + path_.string() + "': " +
        (error == EEXIST ? std::string("the file appeared meanwhile") : write_error_reason(error)));
  }
  remove_temporary();
  published_ = true;
}

}  // namespace fusionscope::storage
