// The recently opened sessions, most recent first, kept in $XDG_CONFIG_HOME/fusionscope/recent
// (~/.config/fusionscope/recent) one path a line.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace fusionscope::ui {

struct RecentFiles {
  std::filesystem::path file;  // empty: not persisted (no home directory)
  std::vector<std::string> paths;
  size_t limit = 10;
};

// Where the list lives for this user; empty when neither XDG_CONFIG_HOME nor HOME is set.
std::filesystem::path default_recent_files_path();
RecentFiles load_recent_files(const std::filesystem::path& file);
// Moves `path` to the front and saves; errors writing the list are ignored (it is a convenience).
void remember(RecentFiles& recent, const std::string& path);
void forget(RecentFiles& recent, const std::string& path);
void clear(RecentFiles& recent);

}  // namespace fusionscope::ui
