#include "recent_files.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <system_error>

namespace fusionscope::ui {

namespace fs = std::filesystem;

fs::path default_recent_files_path() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg)
    return fs::path(xdg) / "fusionscope" / "recent";
  if (const char* home = std::getenv("HOME"); home && *home)
    return fs::path(home) / ".config" / "fusionscope" / "recent";
  return {};
}

RecentFiles load_recent_files(const fs::path& file) {
  RecentFiles recent;
  recent.file = file;
  if (file.empty()) return recent;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line) && recent.paths.size() < recent.limit)
    if (!line.empty() &&
        std::find(recent.paths.begin(), recent.paths.end(), line) == recent.paths.end())
      recent.paths.push_back(line);
  return recent;
}

namespace {

void save(const RecentFiles& recent) {
  if (recent.file.empty()) return;
  std::error_code ec;
  fs::create_directories(recent.file.parent_path(), ec);
  const fs::path tmp = recent.file.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return;
    for (const std::string& p : recent.paths) out << p << '\n';
    if (!out) return;
  }
  fs::rename(tmp, recent.file, ec);
}

}  // namespace

void remember(RecentFiles& recent, const std::string& path) {
  if (path.empty() || path.find('\n') != std::string::npos) return;
  recent.paths.erase(std::remove(recent.paths.begin(), recent.paths.end(), path),
                     recent.paths.end());
  recent.paths.insert(recent.paths.begin(), path);
  if (recent.paths.size() > recent.limit) recent.paths.resize(recent.limit);
  save(recent);
}

void clear(RecentFiles& recent) {
  recent.paths.clear();
  save(recent);
}

void forget(RecentFiles& recent, const std::string& path) {
  recent.paths.erase(std::remove(recent.paths.begin(), recent.paths.end(), path),
                     recent.paths.end());
  save(recent);
}

}  // namespace fusionscope::ui
