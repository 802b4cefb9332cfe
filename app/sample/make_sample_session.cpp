// make_sample_session OUT.fsdb: writes the built-in sample session through the store's API.
// The build runs it to produce share/fusionscope/sample.fsdb when the source tree has no captured
// sample (assets/sample.fsdb).
#include <cstdio>
#include <exception>
#include <filesystem>
#include <system_error>

#include "sample_session.h"
#include "session_writer.h"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_sample_session OUT.fsdb\n");
    return 2;
  }
  const fs::path out = argv[1];
  // Written beside the target, then renamed, so an interrupted build leaves no half file.
  const fs::path tmp = out.string() + ".tmp";
  try {
    if (out.has_parent_path()) fs::create_directories(out.parent_path());
    fs::remove(tmp);
    fusionscope::sample::write_session(fusionscope::sample::make_sample_session(), tmp);
    fs::rename(tmp, out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_sample_session: %s\n", e.what());
    std::error_code ignored;
    fs::remove(tmp, ignored);
    return 1;
  }
  return 0;
}
