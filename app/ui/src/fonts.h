// The UI font: a TTF from the system's fonts (DejaVu Sans, Noto Sans, ...), ImGui's built-in
// bitmap font when none is found.
#pragma once

#include <filesystem>
#include <string>

namespace fusionscope::ui {

// The first readable font among the preferred ones under `root`; empty if none.
std::filesystem::path find_ui_font(const std::filesystem::path& root = "/usr/share/fonts");

// Loads the UI font at `pixel_size` into the current ImGui context's atlas; returns the file used
// ("" for the built-in font).
std::string load_ui_font(float pixel_size);

}  // namespace fusionscope::ui
