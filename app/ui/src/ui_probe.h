// For tests that drive the real window with xdotool: when $FUSIONSCOPE_UI_STATE names a file,
// the app writes there, whenever it changes, what it shows (session, selected runs, the
// comparison's runs, the view, the lab's state and refusals, the status line, the open popup)
// and where some widgets are (window pixels), so a test can click them and check the outcome.
#pragma once

#include <string>

#include "app_state.h"

namespace fusionscope::ui {

// Reads $FUSIONSCOPE_UI_STATE into app.probe.path (empty: the probe is off).
void init_ui_probe(AppState& app);

// Records the last ImGui item's rectangle under `name` (no-op when the probe is off).
void probe_item(AppState& app, const std::string& name);

// Records a rectangle (x, y, width, height in window pixels) under `name`.
void probe_rect(AppState& app, const std::string& name, float x, float y, float w, float h);

// Writes the frame's state if it changed, then forgets the frame's rectangles.
void write_ui_probe(AppState& app);

// The state text write_ui_probe() writes (also used by tests without a window).
std::string ui_probe_text(const AppState& app);

}  // namespace fusionscope::ui
