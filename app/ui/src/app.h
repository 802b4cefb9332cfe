// The application's frame: menu, session header, runs, the views, status bar and popups.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "app_state.h"

namespace fusionscope::ui {

// Draws one frame of the whole app (or of app.solo alone).
void draw_app(AppState& app);

// Opens a session, replacing the current one. On failure the current one stays and an error
// popup says why; returns whether the new session is open.
bool open_session_file(AppState& app, const std::filesystem::path& path, bool is_sample = false);

// Opens the built-in sample session, or says where it was looked for.
void open_sample_session(AppState& app);

// The same on a worker thread (session_loader.h): the window keeps drawing, with the progress
// and a Cancel; the session replaces the open one when it has loaded. Another load in progress
// is cancelled.
// `done_status` replaces the status line's "Opened ..." once it has opened.
void begin_open_session(AppState& app, const std::filesystem::path& path, bool is_sample = false,
                        std::string done_status = {});
void begin_open_sample_session(AppState& app);

// Once a frame (draw_app does it): takes a load that has finished. True while one is running.
bool poll_loading(AppState& app);

// Opens or imports each file dropped on the window: sessions (.fsdb) and traces (.json,
// .json.gz); anything else is refused with the reason.
void open_dropped_files(AppState& app, const std::vector<std::string>& paths);

// Picks what the views show for a freshly opened session: the first run with kernels on the
// timeline, and a pair of variants of one configuration to compare.
void choose_default_runs(AppState& app);

void show_error(AppState& app, std::string title, std::string message);
// Once the background check of the open session (Session::integrity_check) has ended: keeps what
// it found and, if anything, says so in an error popup. draw_app() calls it every frame.
void poll_integrity(AppState& app);

// Resolves run names or ids ("3", "geglu-8192x768x3072 / eager", or a unique part of a name) to
// ids; throws std::invalid_argument naming the run that matches nothing or several.
std::vector<int64_t> resolve_runs(const Session& session, const std::vector<std::string>& names);

}  // namespace fusionscope::ui
