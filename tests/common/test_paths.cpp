#include "test_paths.h"

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

namespace fusionscope::testing {

std::filesystem::path source_dir() {
  if (const char* env = std::getenv("FUSIONSCOPE_SOURCE_DIR")) return env;
  return FUSIONSCOPE_SOURCE_DIR;
}

std::filesystem::path torch_fixtures_dir() {
  if (const char* env = std::getenv("FUSIONSCOPE_FIXTURES_DIR"))
    return std::filesystem::path(env) / "torch";
  return std::filesystem::path(FUSIONSCOPE_FIXTURES_DIR) / "torch";
}

std::filesystem::path scratch_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "scratch";
  for (char& c : name)
    if (c == '/') c = '_';
  // Under the build directory, so test runs of different builds on one machine (CI beside a
  // developer's build) never share, and remove, each other's files.
  std::filesystem::path root = FUSIONSCOPE_SCRATCH_DIR;
  if (const char* env = std::getenv("FUSIONSCOPE_SCRATCH_DIR"); env && *env) root = env;
  const auto dir = root / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace fusionscope::testing
