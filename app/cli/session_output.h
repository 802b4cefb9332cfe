// Where a capture writes its runs: the session named by --out, created when it does not exist,
// opened for writing when it does (the caller has already refused an existing file without
// --append, and checked that there is a GPU, so that a refusal never leaves an empty session).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "fusionscope/storage/session_store.h"

namespace fusionscope::cli {

// The session at `out`, or null after printing the store's reason ("fusionscope capture: ...").
// A new session is named `new_name`.
std::unique_ptr<storage::SessionStore> open_capture_output(const std::filesystem::path& out,
                                                           const std::string& new_name);

}  // namespace fusionscope::cli
