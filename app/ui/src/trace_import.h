// File > Import PyTorch trace...: a profiler trace read on a worker thread into a new session
// beside it (the streaming importer of storage/interchange), with a popup that shows how far it
// has come (bytes and events per second, then records written) and a Cancel that leaves nothing
// behind; the session opens when it is done.
#pragma once

#include <filesystem>

#include "app_state.h"

namespace fusionscope::ui {

// Starts importing `trace`; one import at a time (a second start while one runs is refused with
// a message).
void start_trace_import(AppState& app, const std::filesystem::path& trace);

// The progress popup while an import runs; opens the session (or shows the error) when it ends.
void draw_trace_import(AppState& app);

// Whether an import is running (for the state probe and tests).
bool trace_import_running();

// Where an import of `trace` writes its session: "<dir>/<stem>.fsdb", or "<stem>-2.fsdb" ... when
// that exists, in the trace's folder or, when that cannot be written, the temporary folder.
std::filesystem::path import_session_path(const std::filesystem::path& trace);

}  // namespace fusionscope::ui
