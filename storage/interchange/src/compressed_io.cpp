#include "compressed_io.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>

#include "fusionscope/interchange/interchange_error.h"
#include "fusionscope/storage/output_file.h"

namespace fusionscope::interchange::detail {
namespace {

constexpr size_t kChunk = size_t{1} << 18;
// zlib counts in uInt; feed it at most this much at a time.
constexpr size_t kMaxFeed = std::numeric_limits<uInt>::max();

std::string io_reason() {
  return errno != 0 ? storage::write_error_reason(errno) : "I/O error";
}

}  // namespace

std::string gzip(std::string_view text) {
  z_stream z{};
  // 15 + 16: the largest window with a gzip header.
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw InterchangeError("cannot start zlib compression");
  }
  struct Guard {
    z_stream* z;
    ~Guard() { deflateEnd(z); }
  } guard{&z};
  std::string out;
  size_t offset = 0;
  int rc = Z_OK;
  do {
    if (z.avail_in == 0 && offset < text.size()) {
      const size_t feed = std::min(text.size() - offset, kMaxFeed);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data() + offset));
      z.avail_in = static_cast<uInt>(feed);
      offset += feed;
    }
    const int flush = offset >= text.size() ? Z_FINISH : Z_NO_FLUSH;
    const size_t before = out.size();
    out.resize(before + kChunk);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + before);
    z.avail_out = static_cast<uInt>(kChunk);
    rc = deflate(&z, flush);
    out.resize(before + (kChunk - z.avail_out));
    if (rc == Z_STREAM_ERROR) throw InterchangeError("zlib compression failed");
  } while (rc != Z_STREAM_END);
  return out;
}

void write_file(const std::filesystem::path& file, std::string_view bytes) {
  errno = 0;
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) throw InterchangeError(file.string() + ": cannot create (" + io_reason() + ")");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw InterchangeError(file.string() + ": write failed (" + io_reason() + ")");
}

bool has_gz_extension(const std::filesystem::path& file) {
  std::string ext = file.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".gz";
}

}  // namespace fusionscope::interchange::detail
