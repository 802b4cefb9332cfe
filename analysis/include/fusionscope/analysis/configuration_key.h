// Which runs are variants of one configuration: the views pair them (the comparison's default
// pair, the bandwidth and roofline views' variants of the selected run).
#pragma once

#include <string>

#include "fusionscope/storage/session_store.h"

namespace fusionscope::analysis {

// Equal for runs that are variants of one configuration: their configuration text (or, for runs
// without one, the part of their name before " / "), and whether they replay a CUDA graph.
std::string configuration_key(const storage::RunInfo& info);

}  // namespace fusionscope::analysis
