// Writes an in-memory session through the store's API (the sample session, test fixtures).
#pragma once

#include <filesystem>

#include "sample_session.h"

namespace fusionscope::sample {

// Creates `path` (which must not exist) and stores every run with its records; each run's
// strings are interned into the session's table. Throws storage::StoreError.
void write_session(const SampleSession& sample, const std::filesystem::path& path);

}  // namespace fusionscope::sample
