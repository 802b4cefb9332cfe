#include "fixture_json.h"

#include <zlib.h>

#include <stdexcept>

#include "test_paths.h"

namespace fusionscope::testing {

std::filesystem::path fixture_path(const std::string& stem) {
  return torch_fixtures_dir() / (stem + ".json.gz");
}

std::string gunzip_file(const std::filesystem::path& file) {
  gzFile in = gzopen(file.string().c_str(), "rb");
  if (in == nullptr) throw std::runtime_error("cannot open " + file.string());
  std::string text;
  char buffer[1 << 15];
  int n = 0;
  while ((n = gzread(in, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  gzclose(in);
  if (n < 0) throw std::runtime_error("cannot gunzip " + file.string());
  return text;
}

nlohmann::json load_fixture_json(const std::string& stem) {
  return nlohmann::json::parse(gunzip_file(fixture_path(stem)));
}

}  // namespace fusionscope::testing
