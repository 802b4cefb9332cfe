// Changes to sessions from the app: new, Save As, notes, renaming and deleting runs, and bringing
// runs the lab has just stored into the open session. No ImGui here. Each write opens the file
// read-write only for the moment it takes (a SQLite transaction), so the file on disk is always a
// consistent session; the app's copy in memory follows. The built-in sample and files that cannot
// be written are never written: their edits are refused with the reason.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "app_state.h"

namespace fusionscope::ui {

// Whether the lab and the editing commands may write the session; if not, why (for a person).
bool session_writable(const Session& session, std::string* why = nullptr);

// Whether two paths name the same file (whether or not it exists yet).
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

// Whether a lab job is writing the open session right now (edits wait for it).
bool lab_writing_session(const AppState& app);

// Creates an empty session file (named after the file) and opens it. On failure the current
// session stays and an error popup says why.
bool create_and_open_session(AppState& app, const std::filesystem::path& path);

// Copies the open session to `path` (consistent, compacted) and opens the copy.
bool save_session_as(AppState& app, const std::filesystem::path& path);

// Each returns false with the reason in *why when the session cannot be written or the run is
// gone; the session on disk and in the app change together.
bool rename_run(AppState& app, int64_t run_id, const std::string& name, std::string* why);
bool delete_runs(AppState& app, const std::vector<int64_t>& run_ids, std::string* why);
bool set_session_notes(AppState& app, const std::string& notes, std::string* why);

// Loads the given runs (new ones, or newer states of ones already there) from the session's
// file, in id order, with the session's header and properties. Returns how many were loaded;
// a run that cannot be read stays listed with its error, as when a session is opened.
size_t load_runs_into(Session& session, const std::vector<int64_t>& run_ids);

}  // namespace fusionscope::ui
