// Writes a session file in schema version 1 exactly as the first release laid it out, with raw
// SQL, so that migration tests do not depend on the store's own (current) schema code.
#pragma once

#include <filesystem>

namespace fusionscope::storage::testing {

// Contents of the fixture, for checks after loading it.
struct V1Fixture {
  static constexpr const char* kSessionName = "v1 session";
  static constexpr const char* kGpu = "NVIDIA A100-SXM4-80GB";
  static constexpr const char* kRunName = "linear / eager";
  static constexpr const char* kKernelName = "ampere_sgemm_64x32_sliced1x4_tn";
  static constexpr const char* kApiName = "cudaLaunchKernel";
  static constexpr const char* kRangeName = "step";
  static constexpr int64_t kRunId = 3;
  static constexpr int kKernels = 2;
};

// Creates `path` (which must not exist). With `with_properties_table`, the file also has a table
// named like the one version 2 adds, which makes the migration to version 2 fail.
void write_v1_session(const std::filesystem::path& path, bool with_properties_table = false);

}  // namespace fusionscope::storage::testing
