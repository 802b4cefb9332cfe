#include "sample_locator.h"

#include <cstdlib>
#include <system_error>

namespace fusionscope::ui {

namespace fs = std::filesystem;

std::vector<fs::path> sample_session_candidates() {
  std::vector<fs::path> out;
  if (const char* env = std::getenv("FUSIONSCOPE_SAMPLE_SESSION"); env && *env)
    out.emplace_back(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) out.push_back(exe.parent_path().parent_path() / "share" / "fusionscope" / "sample.fsdb");
  out.emplace_back(FUSIONSCOPE_INSTALLED_SAMPLE);
  out.emplace_back(FUSIONSCOPE_BUILD_SAMPLE);
  return out;
}

fs::path find_sample_session() {
  for (const fs::path& p : sample_session_candidates()) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p;
  }
  return {};
}

}  // namespace fusionscope::ui
