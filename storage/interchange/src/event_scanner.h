// Splits a Chrome trace's JSON text, as it streams in, into the pieces the importer parses one by
// one: each entry of the `traceEvents` array (an object's bytes, handed over whole), and the
// other top-level members (deviceProperties, versions, ...). It checks the structure around the
// events (separators, nesting, strings and their escapes, where the text ends) and keeps only the
// entry being split: an entry past kMaxEventBytes, or a top-level member past
// kMaxHeaderValueBytes, is passed over without being kept. Both Chrome forms are accepted:
// {"traceEvents": [...], ...} and a bare array of events.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chunk_stream.h"

namespace fusionscope::interchange::detail {

// An event whose text is longer than this is skipped (and counted) rather than kept.
inline constexpr size_t kMaxEventBytes = size_t{16} << 20;
// A kept top-level member (deviceProperties, ...) may be at most this long.
inline constexpr size_t kMaxHeaderValueBytes = size_t{16} << 20;
// Values nested deeper than this inside an event are replaced by null before it is parsed.
inline constexpr int kMaxEventDepth = 16;
// Bytes readable after every event handed to the sink (simdjson reads ahead in blocks).
inline constexpr size_t kEventPadding = 64;

class ScanSink {
 public:
  virtual ~ScanSink() = default;
  // One object of traceEvents: `text` is followed by at least kEventPadding readable bytes.
  virtual void on_event(std::string_view text) = 0;
  // An entry of traceEvents that is not an object (a number, a string, an array, null).
  virtual void on_non_object_event() = 0;
  // An entry longer than kMaxEventBytes; it was passed over.
  virtual void on_oversized_event(uint64_t bytes) = 0;
  // A top-level member other than traceEvents, as JSON text.
  virtual void on_header(std::string_view key, std::string_view json_text) = 0;
  // A top-level member longer than kMaxHeaderValueBytes; it was passed over.
  virtual void on_oversized_header(std::string_view /*key*/, uint64_t /*bytes*/) {}
  // Called after each chunk of input, for progress and cancellation.
  virtual void on_chunk() {}
};

// True for the top-level members the importer reads (the others it only keeps as written).
bool is_header_key(std::string_view key);

class EventScanner {
 public:
  // `source` names the trace in messages.
  EventScanner(ChunkStream& stream, std::string_view source);

  // Reads the whole stream. Throws InterchangeError when the text is not JSON or not shaped like
  // a Chrome trace, with the byte offset where it went wrong.
  void run(ScanSink& sink);

  // Bytes of text consumed so far.
  uint64_t offset() const { return base_ + pos_; }

 private:
  enum class Need { kDone, kMore };
  struct ValueState {
    size_t at = 0;  // bytes of the value scanned, from its start at pos_
    int depth = 0;
    int max_depth = 0;
    bool in_string = false;
    // A number or a literal: known from its first byte, kept when that byte is passed over.
    bool scalar = false;
  };

  // Makes more text available behind what is kept; false at the end of the stream.
  bool fill();
  // Skips whitespace; returns the next byte, or -1 at the end of the text.
  int peek_token();
  [[noreturn]] void fail(const std::string& what) const;
  [[noreturn]] void fail_at(const std::string& what) const;
  [[noreturn]] void fail_ended() const;

  // Scans one JSON value starting at pos_; true when it is complete within the window.
  bool scan_value(ValueState& st) const;
  // Scans a whole value, filling as needed. With `keep_limit` == 0 the value is passed over
  // (consumed as it is scanned); otherwise it is kept while no longer than keep_limit. Returns
  // its length; `kept` says whether buf_[pos_, pos_ + length) holds it.
  uint64_t take_value(size_t keep_limit, bool& kept, ValueState& st);
  // A string token at pos_ (a key): its unescaped text; consumes it.
  std::string take_key();

  void scan_events(ScanSink& sink);
  void scan_root_object(ScanSink& sink);
  const char* scalar_words(char first) const;

  ChunkStream& stream_;
  std::string source_;
  std::vector<char> buf_;  // the window: [pos_, len_) not yet consumed, then padding
  size_t pos_ = 0;
  size_t len_ = 0;
  uint64_t base_ = 0;  // stream offset of buf_[0]
  bool ended_ = false;
  uint64_t fills_ = 0;           // chunks taken from the stream
  uint64_t reported_fills_ = 0;  // ... as of the last on_chunk()
  Chunk chunk_;
  std::string pruned_;  // an event with its too-deep values cut
};

// A copy of the JSON object `text` in which every value nested deeper than `max_depth` is null.
std::string prune_deep_values(std::string_view text, int max_depth);

}  // namespace fusionscope::interchange::detail
