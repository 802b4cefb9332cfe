// The live lab without a person at the window: `fusionscope screenshot SESSION --lab PRESET`
// fills the Lab panel, presses Run, keeps drawing the app while the worker runs (as the window
// would), and captures the picture half-way through the job and after it. The same code paths as
// the interactive app: the panel's request, the controller, the runs arriving in the views.
#pragma once

#include <functional>
#include <string>

#include "app_state.h"
#include "ui/gui_main.h"

namespace fusionscope::ui {

// Fills the lab's panel state from the options (preset, variants, sweep, iterations); false with
// a reason for a person when an option is not understood.
bool apply_lab_options(AppState& app, const ScreenshotOptions& options, std::string* error);

// Runs the job the panel describes, calling `frame()` to draw the app about ten times a second
// and `capture(path)` for the pictures. Returns the process exit code: 0 when every run
// succeeded, 1 when one failed or the job could not start (printed for a person).
int run_lab_frames(AppState& app, const ScreenshotOptions& options,
                   const std::function<void()>& frame,
                   const std::function<bool(const std::string&)>& capture);

}  // namespace fusionscope::ui
