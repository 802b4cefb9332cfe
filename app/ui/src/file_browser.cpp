#include "file_browser.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <system_error>

#include <imgui.h>

#include "fusionscope/analysis/format.h"

namespace fusionscope::ui {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void copy_to(char* dst, size_t cap, const std::string& src) {
  std::snprintf(dst, cap, "%s", src.c_str());
}

void change_dir(FileBrowserState& s, const fs::path& dir) {
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(dir, ec);
  if (ec) canonical = dir;
  s.dir = canonical;
  s.selected = -1;
  copy_to(s.dir_input, sizeof s.dir_input, s.dir.string());
  try {
    s.entries = list_directory(s.dir, s.extension);
    s.listing_error.clear();
  } catch (const fs::filesystem_error& e) {
    s.entries.clear();
    s.listing_error = e.code().message();
  }
}

}  // namespace

// `extension` may list several, separated by '|' (".json|.json.gz").
bool matches_extension(const std::string& name, const std::string& extension) {
  if (extension.empty()) return true;
  size_t from = 0;
  while (from <= extension.size()) {
    const size_t bar = extension.find('|', from);
    const std::string one = extension.substr(from, bar == std::string::npos ? bar : bar - from);
    if (!one.empty() && ends_with(name, one)) return true;
    if (bar == std::string::npos) break;
    from = bar + 1;
  }
  return false;
}

std::vector<FileBrowserEntry> list_directory(const fs::path& dir, const std::string& extension) {
  std::vector<FileBrowserEntry> dirs, files;
  for (const fs::directory_entry& e :
       fs::directory_iterator(dir, fs::directory_options::skip_permission_denied)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::error_code ec;
    if (e.is_directory(ec)) {
      dirs.push_back({name, true, 0});
    } else if (matches_extension(name, extension)) {
      files.push_back({name, false, e.file_size(ec)});
    }
  }
  auto by_name = [](const FileBrowserEntry& a, const FileBrowserEntry& b) {
    return a.name < b.name;
  };
  std::sort(dirs.begin(), dirs.end(), by_name);
  std::sort(files.begin(), files.end(), by_name);
  dirs.insert(dirs.end(), files.begin(), files.end());
  return dirs;
}

void open_file_browser(FileBrowserState& s, FileBrowserMode mode, std::string title,
                       std::string extension, std::string purpose, const fs::path& start_dir,
                       const std::string& file_name) {
  s.mode = mode;
  s.title = std::move(title);
  s.extension = std::move(extension);
  s.purpose = std::move(purpose);
  copy_to(s.file_name, sizeof s.file_name, file_name);
  std::error_code ec;
  fs::path dir = start_dir.empty() ? fs::current_path(ec) : start_dir;
  if (ec || !fs::is_directory(dir, ec)) dir = "/";
  change_dir(s, dir);
  s.open_requested = true;
}

bool draw_file_browser(FileBrowserState& s, fs::path& chosen) {
  const std::string popup_id = s.title + "###file_browser";
  if (s.open_requested) {
    ImGui::OpenPopup(popup_id.c_str());
    s.open_requested = false;
  }
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowSize(ImVec2(vp->WorkSize.x * 0.55f, vp->WorkSize.y * 0.6f),
                           ImGuiCond_Appearing);
  ImGui::SetNextWindowPos(
      ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f),
      ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  bool confirmed = false;
  s.visible = false;
  if (!ImGui::BeginPopupModal(popup_id.c_str(), nullptr, ImGuiWindowFlags_NoSavedSettings))
    return false;
  s.visible = true;

  // Directory line: parent button and an editable path.
  if (ImGui::Button("Up") && s.dir.has_parent_path()) change_dir(s, s.dir.parent_path());
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-1);
  if (ImGui::InputText("##dir", s.dir_input, sizeof s.dir_input,
                       ImGuiInputTextFlags_EnterReturnsTrue))
    change_dir(s, s.dir_input);

  // Listing.
  const float footer = ImGui::GetFrameHeightWithSpacing() * 2 + ImGui::GetStyle().ItemSpacing.y;
  if (ImGui::BeginChild("##listing", ImVec2(0, -footer), true)) {
    if (!s.listing_error.empty())
      ImGui::TextDisabled("Cannot read this directory: %s", s.listing_error.c_str());
    if (s.entries.empty() && s.listing_error.empty())
      ImGui::TextDisabled("No folders or %s files here", s.extension.c_str());
    fs::path enter;
    for (int i = 0; i < static_cast<int>(s.entries.size()); ++i) {
      const FileBrowserEntry& e = s.entries[static_cast<size_t>(i)];
      const std::string label = (e.is_dir ? "[dir]  " : "       ") + e.name;
      if (ImGui::Selectable(label.c_str(), s.selected == i,
                            ImGuiSelectableFlags_AllowDoubleClick)) {
        s.selected = i;
        if (!e.is_dir) copy_to(s.file_name, sizeof s.file_name, e.name);
        if (ImGui::IsMouseDoubleClicked(0)) {
          if (e.is_dir) {
            enter = s.dir / e.name;
          } else {
            chosen = s.dir / e.name;
            confirmed = true;
          }
        }
      }
      if (!e.is_dir) {
        ImGui::SameLine(ImGui::GetContentRegionAvail().x - ImGui::GetFontSize() * 5.5f);
        ImGui::TextDisabled("%s", analysis::format_bytes(static_cast<double>(e.size)).c_str());
      }
    }
    if (!enter.empty()) change_dir(s, enter);
  }
  ImGui::EndChild();

  // File name and the buttons.
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("File");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-1);
  // Focused when the popup opens, with its text selected: typing a name (or a path) replaces it.
  if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
  const bool enter_pressed =
      ImGui::InputText("##file", s.file_name, sizeof s.file_name,
                       ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_AutoSelectAll);
  const bool have_name = std::strlen(s.file_name) > 0;
  if (!have_name) ImGui::BeginDisabled();
  const bool ok = ImGui::Button(s.mode == FileBrowserMode::kOpen ? "Open" : "Save",
                                ImVec2(ImGui::GetFontSize() * 7, 0));
  if (!have_name) ImGui::EndDisabled();
  ImGui::SameLine();
  const bool cancel = ImGui::Button("Cancel", ImVec2(ImGui::GetFontSize() * 7, 0)) ||
                      ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape));
  if ((ok || enter_pressed) && have_name) {
    fs::path p = s.file_name;
    if (p.is_relative()) p = s.dir / p;
    if (s.mode == FileBrowserMode::kSave && !s.extension.empty() &&
        !ends_with(p.string(), s.extension))
      p += s.extension;
    std::error_code ec;
    if (s.mode == FileBrowserMode::kOpen && fs::is_directory(p, ec)) {
      change_dir(s, p);
      s.file_name[0] = 0;
    } else {
      chosen = p;
      confirmed = true;
    }
  }
  if (confirmed || cancel) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
  return confirmed;
}

}  // namespace fusionscope::ui
