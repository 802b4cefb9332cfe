// The Lab tab: choose a configuration and variants, see what each should cost before running
// ("guess first"), run them on the GPU on a worker thread, and see the measured runs next to the
// guess ("then look"). The runs land in the open session and every view shows them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app_state.h"

namespace fusionscope::ui {

// Makes the lab's controller (it probes the GPU in the background) if there is none yet.
void ensure_lab_controller(AppState& app);

// Once a frame: brings the runs the lab has finished into the open session, shows the job's
// progress in the status bar, and points the views at the job's runs when it ends.
void sync_lab(AppState& app);

void draw_lab_panel(AppState& app);

// Starts the request in the open session; when the session cannot be written (the sample, a
// read-only file) or none is open, keeps it and offers a new session or a copy first.
void start_lab_run(AppState& app, lab::LabRequest request);

// Checks the form again when it changed (lab_form_check.h) and recomputes the predictions and
// measured rows when their inputs changed.
void update_lab_rows(AppState& app);

}  // namespace fusionscope::ui
