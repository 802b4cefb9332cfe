// The Find bar above the timeline: the query, its options, the counts and total time of what
// matched, and stepping to the previous or next match (Enter, Shift+Enter).
#pragma once

#include <span>

#include "app_state.h"

namespace fusionscope::ui {

// Opens the bar on Ctrl+F or `/`, draws it while open; `runs` are the timeline's.
void draw_find_bar(AppState& app, std::span<const TimelineRun> runs);

// Selects the next (+1) or previous (-1) match and brings it into view.
void step_find(AppState& app, int direction, std::span<const TimelineRun> runs);

// "37 kernels (1.23 ms), 5 API calls (40 us)": what matched, for the bar and the probe.
std::string find_summary(const FindResults& results);

}  // namespace fusionscope::ui
