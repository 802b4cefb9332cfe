#include "session_output.h"

#include "command_line.h"

namespace fusionscope::cli {

std::unique_ptr<storage::SessionStore> open_capture_output(const std::filesystem::path& out,
                                                           const std::string& new_name) {
  try {
    if (std::filesystem::exists(out)) {
      return std::make_unique<storage::SessionStore>(
          storage::SessionStore::open(out, storage::OpenMode::kReadWrite));
    }
    storage::SessionInfo info;
    info.name = new_name;
    return std::make_unique<storage::SessionStore>(storage::SessionStore::create(out, info));
  } catch (const storage::StoreError& e) {
    print_error("capture", e.what());
    return nullptr;
  }
}

}  // namespace fusionscope::cli
