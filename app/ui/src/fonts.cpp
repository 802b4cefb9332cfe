#include "fonts.h"

#include <cstdlib>
#include <fstream>
#include <system_error>

#include <imgui.h>

namespace fusionscope::ui {

namespace fs = std::filesystem;

fs::path find_ui_font(const fs::path& root) {
  // Proportional sans fonts first; the monospace ones still read well if nothing else is there.
  static const char* const kPreferred[] = {
      "DejaVuSans.ttf",           "NotoSans-Regular.ttf", "LiberationSans-Regular.ttf",
      "NotoSansMono-Regular.ttf", "DejaVuSansMono.ttf",
  };
  if (const char* env = std::getenv("FUSIONSCOPE_FONT"); env && *env && fs::is_regular_file(env))
    return env;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return {};
  for (const char* name : kPreferred) {
    for (auto it = fs::recursive_directory_iterator(
             root, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->path().filename() == name && std::ifstream(it->path()).good()) return it->path();
    }
  }
  return {};
}

std::string load_ui_font(float pixel_size) {
  ImGuiIO& io = ImGui::GetIO();
  // Latin-1 plus the punctuation and arrows the views print (en dash, ellipsis, arrows, minus).
  static const ImWchar kRanges[] = {0x0020, 0x00FF, 0x2013, 0x2026, 0x2190,
                                    0x2193, 0x2212, 0x2212, 0};
  const fs::path path = find_ui_font();
  if (!path.empty()) {
    ImFontConfig config;
    config.OversampleH = 2;
    config.OversampleV = 1;
    if (io.Fonts->AddFontFromFileTTF(path.c_str(), pixel_size, &config, kRanges))
      return path.string();
  }
  ImFontConfig config;
  config.SizePixels = pixel_size < 13.0f ? 13.0f : pixel_size;
  io.Fonts->AddFontDefault(&config);
  return {};
}

}  // namespace fusionscope::ui
