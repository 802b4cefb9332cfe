// A new session file that appears at its path only once it is complete: the store is created
// under a temporary name beside the path and moved there by publish(). Until then a failure (a
// bad input, a full disk, a cancel, a kill) leaves nothing at the path and, but for a kill,
// nothing beside it either. For commands that make a session in one go (`import` into a new
// file); a capture, which the app may watch while it runs, creates its session in place.
#pragma once

#include <filesystem>
#include <optional>

#include "fusionscope/storage/session_store.h"

namespace fusionscope::storage {

class NewSession {
 public:
  // Throws StoreError as SessionStore::create does (the path exists, the folder is missing, ...).
  NewSession(std::filesystem::path path, const SessionInfo& info);
  NewSession(const NewSession&) = delete;
  NewSession& operator=(const NewSession&) = delete;
  // Not published: the temporary file and its journals are removed.
  ~NewSession();

  SessionStore& store() { return *store_; }

  // Closes the store (its log checkpointed into the file, so the file is whole on its own) and
  // moves the file to the path, refusing to replace a file that appeared there meanwhile.
  // Throws StoreError; on failure nothing is left behind.
  void publish();

 private:
  void remove_temporary();

  std::filesystem::path path_;
  std::filesystem::path temp_;
  std::optional<SessionStore> store_;
  bool published_ = false;
};

}  // namespace fusionscope::storage
