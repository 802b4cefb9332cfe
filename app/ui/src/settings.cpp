#include "settings.h"

#include <cstdlib>
#include <fstream>
#include <system_error>

namespace fusionscope::ui {

namespace fs = std::filesystem;

fs::path default_settings_path() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg)
    return fs::path(xdg) / "fusionscope" / "settings";
  if (const char* home = std::getenv("HOME"); home && *home)
    return fs::path(home) / ".config" / "fusionscope" / "settings";
  return {};
}

Settings load_settings(const fs::path& file) {
  Settings s;
  s.file = file;
  if (file.empty()) return s;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "theme") s.light = value == "light";
    if (key == "scale") {
      char* end = nullptr;
      const float v = std::strtof(value.c_str(), &end);
      if (end && *end == '\0' && (v == 0 || (v >= 0.5f && v <= 4.0f))) s.scale = v;
    }
  }
  return s;
}

bool save_settings(const Settings& s, std::string* why) {
  if (s.file.empty()) return true;
  std::error_code ec;
  fs::create_directories(s.file.parent_path(), ec);
  const fs::path tmp = s.file.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "theme=" << (s.light ? "light" : "dark") << "\n"
        << "scale=" << s.scale << "\n";
    if (!out) {
      if (why) *why = "cannot write " + tmp.string();
      return false;
    }
  }
  fs::rename(tmp, s.file, ec);
  if (ec) {
    if (why) *why = "cannot replace " + s.file.string() + ": " + ec.message();
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

}  // namespace fusionscope::ui
