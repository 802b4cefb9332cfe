// Where the built-in sample session is: installed beside the executable
// (<prefix>/bin/../share/fusionscope/sample.fsdb), at the configured install prefix, or in the
// build tree. $FUSIONSCOPE_SAMPLE_SESSION overrides all of them.
#pragma once

#include <filesystem>
#include <vector>

namespace fusionscope::ui {

// Every place looked at, in order.
std::vector<std::filesystem::path> sample_session_candidates();
// The first candidate that exists; empty if none does.
std::filesystem::path find_sample_session();

}  // namespace fusionscope::ui
