// A small file browser popup (ImGui 1.86 has none): a directory listing filtered by extension,
// for choosing a session to open or a path to save to.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace fusionscope::ui {

enum class FileBrowserMode { kOpen, kSave };

struct FileBrowserEntry {
  std::string name;
  bool is_dir = false;
  uintmax_t size = 0;
};

struct FileBrowserState {
  bool open_requested = false;
  FileBrowserMode mode = FileBrowserMode::kOpen;
  std::string title = "Open session";
  std::string extension = ".fsdb";  // files shown (directories always are); '|' separates several
  std::filesystem::path dir;
  std::vector<FileBrowserEntry> entries;
  std::string listing_error;
  int selected = -1;
  char file_name[256] = {};
  char dir_input[1024] = {};
  std::string purpose;   // what the caller does with the result ("open", "screenshot")
  bool visible = false;  // drawn in the last frame
};

// Asks the popup to open on the next frame in `start_dir` (the current directory when empty).
void open_file_browser(FileBrowserState& state, FileBrowserMode mode, std::string title,
                       std::string extension, std::string purpose,
                       const std::filesystem::path& start_dir = {},
                       const std::string& file_name = {});

// Reads a directory: subdirectories first, then files ending in `extension`, each sorted by
// name; hidden entries are left out. Throws std::filesystem::filesystem_error.
std::vector<FileBrowserEntry> list_directory(const std::filesystem::path& dir,
                                             const std::string& extension);

// Draws the popup when open. Returns true once, on the frame the user confirms a path, which is
// stored in `chosen`.
bool draw_file_browser(FileBrowserState& state, std::filesystem::path& chosen);

}  // namespace fusionscope::ui
