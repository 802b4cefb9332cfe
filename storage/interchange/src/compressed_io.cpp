#include "compressed_io.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>

#include "fusionscope/interchange/interchange_error.h"

namespace fusionscope::interchange::detail {
namespace {

constexpr size_t kChunk = size_t{1} << 18;
// zlib counts in uInt; feed it at most this much at a time.
constexpr size_t kMaxFeed = std::numeric_limits<uInt>::max();

bool is_gzip_magic(std::string_view b) {
  return b.size() >= 2 && static_cast<unsigned char>(b[0]) == 0x1f &&
         static_cast<unsigned char>(b[1]) == 0x8b;
}

bool is_zlib_header(std::string_view b) {
  if (b.size() < 2) return false;
  const auto cmf = static_cast<unsigned char>(b[0]);
  const auto flg = static_cast<unsigned char>(b[1]);
  return (cmf & 0x0f) == 8 && (cmf >> 4) <= 7 && ((cmf << 8) | flg) % 31 == 0;
}

std::string io_reason() {
  return errno != 0 ? std::strerror(errno) : "I/O error";
}

}  // namespace

bool looks_compressed(std::string_view bytes) {
  return is_gzip_magic(bytes) || is_zlib_header(bytes);
}

std::string inflate_all(std::string_view bytes, std::string_view what, uint64_t max_bytes) {
  const std::string name(what);
  z_stream z{};
  // 15 + 32: the largest window, and gzip or zlib headers detected automatically.
  if (inflateInit2(&z, 15 + 32) != Z_OK) throw InterchangeError(name + ": cannot start zlib");
  struct Guard {
    z_stream* z;
    ~Guard() { inflateEnd(z); }
  } guard{&z};

  std::string out;
  size_t offset = 0;  // into bytes
  bool stream_ended = false;
  while (true) {
    if (z.avail_in == 0 && offset < bytes.size()) {
      const size_t feed = std::min(bytes.size() - offset, kMaxFeed);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + offset));
      z.avail_in = static_cast<uInt>(feed);
      offset += feed;
    }
    const size_t before = out.size();
    out.resize(before + kChunk);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + before);
    z.avail_out = static_cast<uInt>(kChunk);
    const int rc = inflate(&z, Z_NO_FLUSH);
    out.resize(before + (kChunk - z.avail_out));
    if (out.size() > max_bytes) {
      throw InterchangeError(name + ": decompresses to more than " + std::to_string(max_bytes) +
                             " bytes; refusing to read it");
    }
    if (rc == Z_STREAM_END) {
      stream_ended = true;
      // Concatenated gzip members form one file (what `cat a.gz b.gz` makes).
      const size_t rest = z.avail_in + (bytes.size() - offset);
      const std::string_view tail = bytes.substr(bytes.size() - rest);
      if (!is_gzip_magic(tail)) break;
      if (inflateReset(&z) != Z_OK) throw InterchangeError(name + ": cannot restart zlib");
      stream_ended = false;
      continue;
    }
    if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT) {
      throw InterchangeError(name + ": corrupt compressed data (" +
                             (z.msg != nullptr ? z.msg : "invalid stream") + ")");
    }
    if (rc == Z_MEM_ERROR) throw InterchangeError(name + ": out of memory while decompressing");
    if (rc == Z_BUF_ERROR || rc == Z_OK) {
      // No progress possible: all input consumed and the stream is not finished.
      if (z.avail_in == 0 && offset >= bytes.size() && z.avail_out != 0) break;
      continue;
    }
    throw InterchangeError(name + ": zlib error " + std::to_string(rc));
  }
  if (!stream_ended) {
    throw InterchangeError(name +
                           ": compressed data is truncated (the file ends before the gzip stream "
                           "does; was it copied completely?)");
  }
  return out;
}

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

std::string read_file(const std::filesystem::path& file) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) {
    throw InterchangeError(file.string() + ": is a directory, not a trace file");
  }
  errno = 0;
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InterchangeError(file.string() + ": cannot open (" + io_reason() + ")");
  std::string bytes;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    bytes.append(buffer, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw InterchangeError(file.string() + ": read failed (" + io_reason() + ")");
  return bytes;
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
