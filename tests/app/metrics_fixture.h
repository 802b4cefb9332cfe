// A small session with hardware counters, written for the metrics views' tests: the post's GeGLU
// in eager and gated-gemm, iterations as the lab records them, per-kernel counters of the first
// timed iteration, PM samples across the iterations, calibrated ceilings; and a third run
// without counters whose property says why.
#pragma once

#include <filesystem>

namespace fusionscope::testing {

// Writes the session at `path` (which must not exist).
void write_metrics_session(const std::filesystem::path& path);

}  // namespace fusionscope::testing
