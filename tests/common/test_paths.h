// Where tests find the repository's files, and a scratch directory per test.
#pragma once

#include <filesystem>

namespace fusionscope::testing {
std::filesystem::path source_dir();
// The PyTorch profiler traces of the reference workloads (read-only fixtures).
std::filesystem::path torch_fixtures_dir();
// A fresh, empty directory for the calling test, under the build directory's test-scratch/ (or
// $FUSIONSCOPE_SCRATCH_DIR); removed at the start of its next use.
std::filesystem::path scratch_dir();
}  // namespace fusionscope::testing
