// The session commands in the window: File > New session / Save As / Session notes, the runs
// table's right-click menu (rename, delete, compare), their popups, and the offer of a new
// session (or a copy) when the lab is asked to run into a session it must not write.
#pragma once

#include <filesystem>
#include <string>

#include "app_state.h"

namespace fusionscope::ui {

// File menu items: "New session..." (at the top) and "Save As..." / "Session notes..." (after
// Recent).
void draw_file_menu_new_item(AppState& app);
void draw_file_menu_session_items(AppState& app);

// The right-click menu of a row of the runs table (call right after the row's item).
void draw_run_context_menu(AppState& app, const storage::RunInfo& run);

// What the file browser was opened for by these commands; true when `purpose` was one of them.
bool handle_session_file_choice(AppState& app, const std::string& purpose,
                                const std::filesystem::path& chosen);

// Rename, delete, notes and the read-only offer popups.
void draw_session_popups(AppState& app);

// "session-20260101-120000.fsdb": a new session's suggested name.
std::string suggested_session_name();

}  // namespace fusionscope::ui
