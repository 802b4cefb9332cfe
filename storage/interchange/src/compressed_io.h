// Whole-file reads and writes, with gzip on either side: traces arrive as `.json.gz` and may be
// exported that way.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace fusionscope::interchange::detail {

// True when `bytes` start like a gzip member or a zlib stream rather than like text.
bool looks_compressed(std::string_view bytes);

// Inflates every gzip member (or one zlib stream) of `bytes`. `what` names the data in errors.
// Throws InterchangeError when the data is corrupt, truncated, or inflates past `max_bytes`.
std::string inflate_all(std::string_view bytes, std::string_view what, uint64_t max_bytes);

// Compresses `text` into one gzip member.
std::string gzip(std::string_view text);

// Throw InterchangeError naming the file on any I/O failure.
std::string read_file(const std::filesystem::path& file);
void write_file(const std::filesystem::path& file, std::string_view bytes);

// True when the file name ends in ".gz" (any case).
bool has_gz_extension(const std::filesystem::path& file);

}  // namespace fusionscope::interchange::detail
