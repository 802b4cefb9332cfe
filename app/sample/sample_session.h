// The built-in sample session: synthetic runs of the reference workloads (the presets linear-post
// and geglu-post, unfused and fused) whose kernel times follow the reference figures measured on an
// H100, laid out the way a capture records them (NVTX iteration and op ranges, launch calls,
// kernels on one stream). It lets the app show every view before any capture exists; a real
// capture replaces it when assets/sample.fsdb is present in the source tree.
#pragma once

#include <vector>

#include "fusionscope/storage/session_store.h"

namespace fusionscope::sample {

struct SampleSession {
  storage::SessionInfo info;
  std::vector<storage::RunData> runs;  // RunData::info.id is 0 until written to a store
};

// Deterministic: the same session every time.
SampleSession make_sample_session();

}  // namespace fusionscope::sample
