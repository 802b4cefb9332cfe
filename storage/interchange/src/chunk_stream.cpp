#include "chunk_stream.h"

#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "fusionscope/interchange/interchange_error.h"

namespace fusionscope::interchange::detail {
namespace {

// Compressed input is read in blocks of this size.
constexpr size_t kInputBlock = size_t{1} << 20;
// Decompressed chunks waiting for the parser; with the one it parses and the one being filled,
// this bounds the stream's memory.
constexpr size_t kQueueDepth = 4;

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

std::string errno_text(int err) {
  return err != 0 ? std::strerror(err) : "I/O error";
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

ChunkStream::ChunkStream(const std::filesystem::path& file, size_t chunk_bytes)
    : name_(file.string()), file_(file), chunk_bytes_(std::max<size_t>(chunk_bytes, 1)) {
  start();
}

ChunkStream::ChunkStream(std::string_view bytes, std::string_view name, size_t chunk_bytes)
    : name_(name),
      memory_(bytes),
      from_memory_(true),
      chunk_bytes_(std::max<size_t>(chunk_bytes, 1)),
      input_size_(bytes.size()) {
  start();
}

ChunkStream::~ChunkStream() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (producer_.joinable()) producer_.join();
}

void ChunkStream::start() {
  producer_ = std::thread([this] {
    try {
      produce();
    } catch (...) {
      std::lock_guard lock(mutex_);
      error_ = std::current_exception();
    }
    {
      std::lock_guard lock(mutex_);
      finished_ = true;
    }
    changed_.notify_all();
  });
}

bool ChunkStream::next(Chunk& chunk) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return !ready_.empty() || finished_; });
  if (!ready_.empty()) {
    chunk = std::move(ready_.front());
    ready_.pop_front();
    lock.unlock();
    changed_.notify_all();
    return true;
  }
  if (error_) std::rethrow_exception(error_);
  return false;
}

void ChunkStream::recycle(Chunk&& chunk) {
  std::lock_guard lock(mutex_);
  if (spare_.size() < 2) spare_.push_back(std::move(chunk));
}

Chunk ChunkStream::empty_chunk() {
  Chunk c;
  {
    std::lock_guard lock(mutex_);
    if (!spare_.empty()) {
      c = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  c.bytes.resize(chunk_bytes_);
  return c;
}

bool ChunkStream::push(Chunk&& chunk) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return ready_.size() < kQueueDepth || stopping_; });
  if (stopping_) return false;
  counters_.output_bytes.fetch_add(chunk.bytes.size(), std::memory_order_relaxed);
  ready_.push_back(std::move(chunk));
  lock.unlock();
  changed_.notify_all();
  return true;
}

size_t ChunkStream::read_input(int fd, char* into, size_t capacity) {
  size_t got = 0;
  if (from_memory_) {
    got = std::min(capacity, memory_.size() - memory_offset_);
    std::memcpy(into, memory_.data() + memory_offset_, got);
    memory_offset_ += got;
  } else {
    while (true) {
      const ssize_t n = ::read(fd, into, capacity);
      if (n >= 0) {
        got = static_cast<size_t>(n);
        break;
      }
      if (errno == EINTR) continue;
      throw InterchangeError(name_ + ": read failed (" + errno_text(errno) + ")");
    }
  }
  counters_.input_bytes.fetch_add(got, std::memory_order_relaxed);
  return got;
}

void ChunkStream::produce() {
  Fd file;
  if (!from_memory_) {
    errno = 0;
    file.fd = ::open(file_.c_str(), O_RDONLY | O_CLOEXEC);
    if (file.fd < 0) throw InterchangeError(name_ + ": cannot open (" + errno_text(errno) + ")");
    struct stat st {};
    if (::fstat(file.fd, &st) == 0) {
      if (S_ISDIR(st.st_mode)) throw InterchangeError(name_ + ": is a directory, not a trace file");
      if (S_ISREG(st.st_mode)) input_size_ = static_cast<uint64_t>(st.st_size);
    }
  }
  // The first bytes say whether the data is compressed.
  std::vector<char> head(2);
  size_t have = 0;
  while (have < head.size()) {
    const size_t n = read_input(file.fd, head.data() + have, head.size() - have);
    if (n == 0) break;
    have += n;
  }
  const std::string_view first(head.data(), have);
  compressed_ = is_gzip_magic(first) || is_zlib_header(first);
  if (compressed_) {
    produce_inflated(file.fd, first);
  } else {
    produce_plain(file.fd, first);
  }
}

void ChunkStream::produce_plain(int fd, std::string_view head) {
  Chunk chunk = empty_chunk();
  if (chunk.bytes.size() < head.size()) chunk.bytes.resize(head.size());
  std::memcpy(chunk.bytes.data(), head.data(), head.size());
  size_t filled = head.size();
  while (true) {
    const size_t n = filled < chunk.bytes.size()
                         ? read_input(fd, chunk.bytes.data() + filled, chunk.bytes.size() - filled)
                         : 0;
    filled += n;
    const bool at_end = n == 0 && filled < chunk.bytes.size();
    if (at_end || filled == chunk.bytes.size()) {
      if (filled > 0) {
        chunk.bytes.resize(filled);
        if (!push(std::move(chunk))) return;
        chunk = empty_chunk();
        filled = 0;
      }
      if (at_end) return;
    }
  }
}

void ChunkStream::produce_inflated(int fd, std::string_view head) {
  // ISA-L's inflate (igzip): about three times zlib's speed, which keeps decompression behind
  // the parser on a large trace.
  auto state = std::make_unique<inflate_state>();
  const bool gzip = is_gzip_magic(head);
  isal_inflate_init(state.get());
  state->crc_flag = gzip ? ISAL_GZIP : ISAL_ZLIB;

  std::vector<char> input(std::max(kInputBlock, head.size()));
  std::memcpy(input.data(), head.data(), head.size());
  state->next_in = reinterpret_cast<uint8_t*>(input.data());
  state->avail_in = static_cast<uint32_t>(head.size());
  bool input_ended = false;

  Chunk chunk = empty_chunk();
  size_t filled = 0;
  auto flush = [&]() -> bool {
    if (filled == 0) return true;
    chunk.bytes.resize(filled);
    if (!push(std::move(chunk))) return false;
    chunk = empty_chunk();
    filled = 0;
    return true;
  };
  auto read_more = [&](size_t keep) {
    // `keep` unread bytes move to the front, the rest of the buffer is filled behind them.
    std::memmove(input.data(), state->next_in, keep);
    const size_t n = read_input(fd, input.data() + keep, input.size() - keep);
    if (n == 0) input_ended = true;
    state->next_in = reinterpret_cast<uint8_t*>(input.data());
    state->avail_in = static_cast<uint32_t>(keep + n);
  };

  while (true) {
    if (state->avail_in == 0 && !input_ended) read_more(0);
    if (state->block_state == ISAL_BLOCK_FINISH) {
      // Concatenated gzip members form one file (what `cat a.gz b.gz` makes); anything else
      // after the end of the stream is ignored, as gzip itself does with trailing zeros.
      if (state->avail_in < 2 && !input_ended) read_more(state->avail_in);
      if (state->avail_in == 0 && input_ended) break;
      const std::string_view tail(reinterpret_cast<const char*>(state->next_in), state->avail_in);
      if (!gzip || !is_gzip_magic(tail)) break;
      const uint8_t* next = state->next_in;
      const uint32_t avail = state->avail_in;
      isal_inflate_reset(state.get());
      state->crc_flag = ISAL_GZIP;
      state->next_in = const_cast<uint8_t*>(next);
      state->avail_in = avail;
    }
    if (filled == chunk.bytes.size() && !flush()) return;
    state->next_out = reinterpret_cast<uint8_t*>(chunk.bytes.data() + filled);
    state->avail_out = static_cast<uint32_t>(chunk.bytes.size() - filled);
    const uint32_t before_in = state->avail_in;
    const uint32_t before_out = state->avail_out;
    const int rc = isal_inflate(state.get());
    filled += before_out - state->avail_out;
    if (rc == ISAL_INCORRECT_CHECKSUM) {
      throw InterchangeError(name_ + ": corrupt compressed data (checksum mismatch)");
    }
    if (rc < 0) {
      throw InterchangeError(
          name_ + ": corrupt compressed data (" +
          (rc == ISAL_INVALID_WRAPPER ? "not a gzip or zlib stream" : "invalid deflate data") +
          ")");
    }
    const bool progressed = state->avail_in != before_in || state->avail_out != before_out;
    if (!progressed && state->block_state != ISAL_BLOCK_FINISH && input_ended &&
        state->avail_in == 0) {
      throw InterchangeError(name_ +
                             ": compressed data is truncated (the file ends before the gzip "
                             "stream does; was it copied completely?)");
    }
  }
  flush();
}

}  // namespace fusionscope::interchange::detail
