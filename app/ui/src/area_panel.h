// The area selection's panel beside the timeline: what lies in the selected range of the selected
// rows, as tables of kernels, ops, memcpy/memset, API calls and ranges (area_summary.h), and zoom
// to the selection.
#pragma once

#include <span>

#include "app_state.h"

namespace fusionscope::ui {

// Draws the panel when the timeline has an area selection; false (nothing drawn) otherwise.
bool draw_area_panel(AppState& app, std::span<const TimelineRun> runs);

// The summary of the timeline's area selection, recomputed when the selection changed.
const AreaSummary& current_area_summary(AppState& app, std::span<const TimelineRun> runs);

}  // namespace fusionscope::ui
