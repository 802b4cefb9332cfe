// What the app remembers between sessions besides the recent files: the theme (dark or light)
// and the UI scale, in $XDG_CONFIG_HOME/fusionscope/settings (~/.config/fusionscope/settings),
// one `key=value` a line. Unknown keys and bad values are ignored, so an old or hand-edited file
// never stops the app.
#pragma once

#include <filesystem>
#include <string>

namespace fusionscope::ui {

struct Settings {
  bool light = false;          // the light theme
  float scale = 0;             // UI scale; 0 = the monitor's
  std::filesystem::path file;  // where they are kept; empty: not kept
};

std::filesystem::path default_settings_path();
Settings load_settings(const std::filesystem::path& file);
// Writes beside the file and renames over it; false with the reason when it cannot.
bool save_settings(const Settings& settings, std::string* why = nullptr);

}  // namespace fusionscope::ui
