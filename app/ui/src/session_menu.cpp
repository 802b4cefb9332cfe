#include "session_menu.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "app.h"
#include "lab_panel.h"
#include "session_edit.h"
#include "ui_probe.h"
#include "view_registry.h"
#include "views.h"

namespace fusionscope::ui {

namespace fs = std::filesystem;

namespace {

fs::path browse_dir(const AppState& app) {
  if (app.session && !app.session->is_sample) return fs::absolute(app.session->path).parent_path();
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  return ec ? fs::path() : cwd;
}

void ask_new_session(AppState& app, const char* purpose, const char* title) {
  open_file_browser(app.file_browser, FileBrowserMode::kSave, title, ".fsdb", purpose,
                    browse_dir(app), suggested_session_name());
}

void ask_save_as(AppState& app, const char* purpose, const char* title) {
  std::string name =
      app.session ? app.session->path.stem().string() + "-copy.fsdb" : suggested_session_name();
  open_file_browser(app.file_browser, FileBrowserMode::kSave, title, ".fsdb", purpose,
                    browse_dir(app), name);
}

void start_pending_run(AppState& app) {
  if (!app.edit.pending.request) return;
  lab::LabRequest request = std::move(*app.edit.pending.request);
  app.edit.pending.request.reset();
  start_lab_run(app, std::move(request));
}

bool modal_buttons_row(const char* ok_label, bool ok_enabled, bool* cancel) {
  const float w = ImGui::GetFontSize() * 8;
  if (!ok_enabled) ImGui::BeginDisabled();
  const bool ok = ImGui::Button(ok_label, ImVec2(w, 0));
  if (!ok_enabled) ImGui::EndDisabled();
  ImGui::SameLine();
  *cancel = ImGui::Button("Cancel", ImVec2(w, 0)) ||
            ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape));
  return ok;
}

}  // namespace

std::string suggested_session_name() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "session-%Y%m%d-%H%M%S.fsdb", &tm);
  return buf;
}

void draw_file_menu_new_item(AppState& app) {
  if (ImGui::MenuItem("New session...")) ask_new_session(app, "new-session", "New session");
}

void draw_file_menu_session_items(AppState& app) {
  const bool open = app.session != nullptr;
  if (ImGui::MenuItem("Save As...", nullptr, false, open && !lab_writing_session(app)))
    ask_save_as(app, "save-as", "Save the session as");
  std::string why;
  const bool writable = open && session_writable(*app.session, &why);
  if (ImGui::MenuItem("Session notes...", nullptr, false, open)) {
    app.edit.notes_requested = true;
    const std::string& notes = app.session->info.notes;
    app.edit.notes_buffer.assign(std::max<size_t>(notes.size() + 4096, 8192), '\0');
    std::copy(notes.begin(), notes.end(), app.edit.notes_buffer.begin());
  }
  if (open && !writable && ImGui::IsItemHovered()) ImGui::SetTooltip("read-only: %s", why.c_str());
}

void draw_run_context_menu(AppState& app, const storage::RunInfo& run) {
  if (!ImGui::BeginPopupContextItem("##run_menu")) return;
  app.probe.open_popup = "run menu";
  ImGui::TextDisabled("%s", run_label(run).c_str());
  ImGui::Separator();
  std::string why;
  const bool writable =
      app.session && session_writable(*app.session, &why) && !lab_writing_session(app);
  if (ImGui::MenuItem("Rename...", nullptr, false, writable)) {
    app.edit.rename_requested = true;
    app.edit.rename_run = run.id;
    std::snprintf(app.edit.rename_text, sizeof app.edit.rename_text, "%s", run.name.c_str());
  }
  const auto& sel = app.runs.selected;
  const bool in_selection = std::find(sel.begin(), sel.end(), run.id) != sel.end();
  const std::vector<int64_t> targets = in_selection ? sel : std::vector<int64_t>{run.id};
  const std::string del = targets.size() > 1
                              ? "Delete the " + std::to_string(targets.size()) + " selected runs..."
                              : std::string("Delete...");
  if (ImGui::MenuItem(del.c_str(), nullptr, false, writable)) {
    app.edit.delete_requested = true;
    app.edit.delete_runs = targets;
  }
  if (!writable && !why.empty()) ImGui::TextDisabled("read-only: %s", why.c_str());
  ImGui::Separator();
  if (ImGui::MenuItem("Compare as A")) {
    app.comparison.a = run.id;
    show_view(app, "comparison");
  }
  if (ImGui::MenuItem("Compare as B")) {
    app.comparison.b = run.id;
    show_view(app, "comparison");
  }
  ImGui::EndPopup();
}

bool handle_session_file_choice(AppState& app, const std::string& purpose, const fs::path& chosen) {
  if (purpose == "new-session") {
    create_and_open_session(app, chosen);
  } else if (purpose == "save-as") {
    save_session_as(app, chosen);
  } else if (purpose == "new-session-run") {
    if (create_and_open_session(app, chosen)) start_pending_run(app);
  } else if (purpose == "save-as-run") {
    if (save_session_as(app, chosen)) start_pending_run(app);
  } else {
    return false;
  }
  return true;
}

void draw_session_popups(AppState& app) {
  SessionEditState& e = app.edit;
  const float em = ImGui::GetFontSize();

  if (e.pending.offer_requested) {
    ImGui::OpenPopup("Runs need a session they can be written to");
    e.pending.offer_requested = false;
  }
  ImGui::SetNextWindowSize(ImVec2(em * 36, 0), ImGuiCond_Appearing);
  if (ImGui::BeginPopupModal("Runs need a session they can be written to", nullptr,
                             ImGuiWindowFlags_NoSavedSettings)) {
    app.probe.open_popup = "read-only offer";
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(e.pending.why_read_only.c_str());
    ImGui::Spacing();
    ImGui::TextDisabled(
        "The lab stores every run in the open session as it ends. Start a new session for "
        "them, or save a copy of this one and run into the copy.");
    ImGui::PopTextWrapPos();
    ImGui::Spacing();
    const float w = em * 10;
    if (ImGui::Button("New session...", ImVec2(w, 0))) {
      ImGui::CloseCurrentPopup();
      ask_new_session(app, "new-session-run", "New session for the lab's runs");
    }
    probe_item(app, "offer.new");
    ImGui::SameLine();
    if (!app.session) ImGui::BeginDisabled();
    if (ImGui::Button("Save As a copy...", ImVec2(w, 0))) {
      ImGui::CloseCurrentPopup();
      ask_save_as(app, "save-as-run", "Save a copy to run into");
    }
    if (!app.session) ImGui::EndDisabled();
    ImGui::SameLine();
    if (ImGui::Button("Cancel", ImVec2(w, 0)) ||
        ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) {
      e.pending.request.reset();
      ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
  }

  if (e.rename_requested) {
    ImGui::OpenPopup("Rename run");
    e.rename_requested = false;
  }
  if (ImGui::BeginPopupModal("Rename run", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    app.probe.open_popup = "rename";
    if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
    ImGui::SetNextItemWidth(em * 28);
    const bool enter = ImGui::InputText("##name", e.rename_text, sizeof e.rename_text,
                                        ImGuiInputTextFlags_EnterReturnsTrue);
    bool cancel = false;
    const bool ok = modal_buttons_row("Rename", e.rename_text[0] != 0, &cancel) || enter;
    if (ok && e.rename_text[0] != 0) {
      std::string why;
      if (!rename_run(app, e.rename_run, e.rename_text, &why))
        show_error(app, "Cannot rename the run", why);
      ImGui::CloseCurrentPopup();
    } else if (cancel) {
      ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
  }

  if (e.delete_requested) {
    ImGui::OpenPopup("Delete runs");
    e.delete_requested = false;
  }
  if (ImGui::BeginPopupModal("Delete runs", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    app.probe.open_popup = "delete";
    ImGui::Text("Delete %zu %s from %s?", e.delete_runs.size(),
                e.delete_runs.size() == 1 ? "run" : "runs",
                app.session ? app.session->path.filename().c_str() : "the session");
    for (int64_t id : e.delete_runs)
      if (const LoadedRun* r = app.session ? app.session->find_run(id) : nullptr)
        ImGui::BulletText("%s", run_label(r->data.info).c_str());
    ImGui::TextDisabled("Their records are removed from the file; this cannot be undone.");
    bool cancel = false;
    if (modal_buttons_row("Delete", true, &cancel)) {
      std::string why;
      if (!delete_runs(app, e.delete_runs, &why)) show_error(app, "Cannot delete the runs", why);
      ImGui::CloseCurrentPopup();
    } else if (cancel) {
      ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
  }

  if (e.notes_requested) {
    ImGui::OpenPopup("Session notes");
    e.notes_requested = false;
  }
  ImGui::SetNextWindowSize(ImVec2(em * 36, 0), ImGuiCond_Appearing);
  if (ImGui::BeginPopupModal("Session notes", nullptr, ImGuiWindowFlags_NoSavedSettings)) {
    app.probe.open_popup = "notes";
    std::string why;
    const bool writable = app.session && session_writable(*app.session, &why);
    if (!e.notes_buffer.empty())
      ImGui::InputTextMultiline("##notes", e.notes_buffer.data(), e.notes_buffer.size(),
                                ImVec2(-1, em * 12), writable ? 0 : ImGuiInputTextFlags_ReadOnly);
    if (!writable) {
      ImGui::PushTextWrapPos(0);
      ImGui::TextDisabled("Read-only: %s", why.c_str());
      ImGui::PopTextWrapPos();
    }
    bool cancel = false;
    if (modal_buttons_row("Save", writable, &cancel)) {
      std::string why_not;
      if (!set_session_notes(app, e.notes_buffer.data(), &why_not))
        show_error(app, "Cannot save the notes", why_not);
      ImGui::CloseCurrentPopup();
    } else if (cancel) {
      ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
  }
}

}  // namespace fusionscope::ui
