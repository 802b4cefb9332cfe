// What the views say about one timeline item: a short tooltip while hovering, and the details
// panel for the selection. Each kind of item says it its own way (timeline_items.h).
#pragma once

#include <span>

#include "theme.h"
#include "timeline.h"

namespace fusionscope::ui {

void draw_item_tooltip(const TimelineRun& run, const ItemRef& item, const Theme& theme);

// The details panel for `state.selected` (or a hint when nothing is selected).
void draw_item_details(const TimelineState& state, std::span<const TimelineRun> runs,
                       const Theme& theme);

}  // namespace fusionscope::ui
