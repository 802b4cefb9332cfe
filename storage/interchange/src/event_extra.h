// What a trace event said that a record's columns do not hold: the members the importer did not
// consume, kept as one JSON object per record (records.h's `extra`), e.g.
//   {"cat": "Kernel", "args": {"queued": 0, "context": 1, "blocks per SM": 1.0}}
// Values keep the text they were written with (1.0 stays 1.0); top-level members come first in
// the order written, then `args` with its members in the order written. The exporter reads the
// object back and writes its members into the event, in place of its own of the same key.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fusionscope::interchange::detail {

// Appends `text` as a JSON string literal (quotes included); `text` must be valid UTF-8.
void append_json_string(std::string& out, std::string_view text);

// Builds the object one member at a time; reused from event to event.
class ExtraText {
 public:
  void clear() {
    top_.clear();
    args_.clear();
  }
  // A top-level member (`key` unescaped, `raw` the value's JSON text).
  void add_member(std::string_view key, std::string_view raw) { append_member(top_, key, raw); }
  // A member of `args`.
  void add_arg(std::string_view key, std::string_view raw) { append_member(args_, key, raw); }
  bool empty() const { return top_.empty() && args_.empty(); }
  // The object's text; empty when nothing was added. Valid until the next change.
  std::string_view text();

 private:
  // Text appended to, its room kept from event to event: a member is written with one check for
  // room rather than one per piece (every event of a trace adds a dozen members).
  class Buffer {
   public:
    void clear() { size_ = 0; }
    bool empty() const { return size_ == 0; }
    size_t size() const { return size_; }
    std::string_view view() const { return {bytes_.data(), size_}; }
    // Where `n` more bytes go; commit() their end once written.
    char* room(size_t n) {
      if (size_ + n > bytes_.size()) bytes_.resize(std::max(bytes_.size() * 2, size_ + n));
      return bytes_.data() + size_;
    }
    void commit(const char* end) { size_ = static_cast<size_t>(end - bytes_.data()); }

   private:
    std::vector<char> bytes_;
    size_t size_ = 0;
  };
  void append_member(Buffer& to, std::string_view key, std::string_view raw);

  Buffer top_, args_, out_;
  std::string escaped_;  // a key that needs escaping, escaped
};

// An extra object read back: its top-level members and those of its `args`, with their JSON
// text, in the order written.
struct ExtraMembers {
  std::vector<std::pair<std::string, std::string>> top;  // without `args`
  std::vector<std::pair<std::string, std::string>> args;
};

// Reads an object ExtraText wrote (or any JSON object). A text that is not one gives no members.
ExtraMembers parse_extra(std::string_view text);

}  // namespace fusionscope::interchange::detail
