// Whole-file writes, gzipped when asked: exports may be written as `.json.gz`. (Reading streams:
// chunk_stream.h.)
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace fusionscope::interchange::detail {

// Compresses `text` into one gzip member.
std::string gzip(std::string_view text);

// Throws InterchangeError naming the file on any I/O failure.
void write_file(const std::filesystem::path& file, std::string_view bytes);

// True when the file name ends in ".gz" (any case).
bool has_gz_extension(const std::filesystem::path& file);

}  // namespace fusionscope::interchange::detail
