// The bytes of a trace as a stream of decompressed chunks, produced on a thread of their own so
// that decompression and parsing overlap. A bounded queue between the two keeps memory at a few
// chunks whatever the input's size (an endless /dev/zero or a gzip bomb included).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace fusionscope::interchange::detail {

struct Chunk {
  std::vector<char> bytes;
};

// Counters the producer advances and anyone may read (progress display).
struct StreamCounters {
  std::atomic<uint64_t> input_bytes{0};   // read from the file (compressed, if it is)
  std::atomic<uint64_t> output_bytes{0};  // handed to the parser (decompressed)
};

class ChunkStream {
 public:
  // Reads `file` (gzip or zlib recognized by content; several gzip members read as one).
  ChunkStream(const std::filesystem::path& file, size_t chunk_bytes);
  // Streams `bytes`, which must outlive the stream.
  ChunkStream(std::string_view bytes, std::string_view name, size_t chunk_bytes);
  ChunkStream(const ChunkStream&) = delete;
  ChunkStream& operator=(const ChunkStream&) = delete;
  // Stops the producer and waits for it.
  ~ChunkStream();

  // The next chunk, or false at the end of the data. Rethrows the producer's InterchangeError.
  bool next(Chunk& chunk);
  // Gives a consumed chunk's buffer back for reuse.
  void recycle(Chunk&& chunk);

  const StreamCounters& counters() const { return counters_; }
  // Size of the input file, 0 when unknown (a pipe, a character device).
  uint64_t input_size() const { return input_size_; }
  bool compressed() const { return compressed_; }

 private:
  void start();
  void produce();
  void produce_plain(int fd, std::string_view head);
  void produce_inflated(int fd, std::string_view head);
  // Reads more input: from the file, or the next slice of the in-memory bytes. 0 at the end.
  size_t read_input(int fd, char* into, size_t capacity);
  bool push(Chunk&& chunk);  // false once the consumer has gone
  Chunk empty_chunk();

  std::string name_;
  std::filesystem::path file_;
  std::string_view memory_;
  size_t memory_offset_ = 0;
  bool from_memory_ = false;
  size_t chunk_bytes_;
  uint64_t input_size_ = 0;
  bool compressed_ = false;
  StreamCounters counters_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Chunk> ready_;
  std::vector<Chunk> spare_;
  bool finished_ = false;
  bool stopping_ = false;
  std::exception_ptr error_;
  std::thread producer_;
};

}  // namespace fusionscope::interchange::detail
