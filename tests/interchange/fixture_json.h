// Test-side reading of the PyTorch fixtures, independent of the importer: gunzip with zlib's
// gzread and parse with nlohmann into a tree, so tests compare the importer against figures
// computed another way.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace fusionscope::testing {

// The names of the fixture traces (file stems in torch_fixtures_dir()).
inline const char* const kLinearEager = "torch_linear_1024x32x64_eager";
inline const char* const kGegluEager = "torch_geglu_64x128x768x3072_eager";
inline const char* const kGegluCompile = "torch_geglu_64x128x768x3072_compile";

std::filesystem::path fixture_path(const std::string& stem);
std::string gunzip_file(const std::filesystem::path& file);
nlohmann::json load_fixture_json(const std::string& stem);

}  // namespace fusionscope::testing
