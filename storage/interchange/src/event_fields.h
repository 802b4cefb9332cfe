// One trace event's members, read with simdjson's On-Demand API from the event's own bytes: the
// members the importer interprets, typed loosely (a number keeps its text, so times convert
// exactly), and every member of `args` with its JSON text, so what the importer does not
// interpret can be kept as it was written. Views point into the event's bytes or the parser's
// string buffer and live until the next event is read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

namespace fusionscope::interchange::detail {

enum class JsonKind : uint8_t { kAbsent, kNumber, kString, kBool, kNull, kArray, kObject };

struct FieldValue {
  JsonKind kind = JsonKind::kAbsent;
  std::string_view text;  // a number's token, a string's unescaped text, else the raw JSON
  std::string_view raw;   // the value's JSON text as written (a string with its quotes)
  bool present() const { return kind != JsonKind::kAbsent; }
};

struct ArgMember {
  std::string_view key;  // unescaped
  std::string_view raw;  // the value's JSON text as written
  FieldValue value;      // typed view of the same value
};

struct EventFields {
  FieldValue ph, cat, name, pid, tid, ts, dur, id, scope;
  FieldValue args;  // kObject when args is an object
  std::vector<ArgMember> arg_members;
  // Every top-level member but `args`, in the order written (the ones above included).
  std::vector<ArgMember> members;
};

// A number token, read without losing its integer precision.
struct JsonNumber {
  bool integral = false;  // no fraction or exponent, or an integral value that fits
  bool negative = false;
  uint64_t magnitude = 0;  // when integral
  double value = 0.0;
  bool overflows_double = false;  // past a double's range (e.g. 1e400)
};
std::optional<JsonNumber> parse_json_number(std::string_view token);

class EventReader {
 public:
  // Reads the object `text` (followed by at least simdjson::SIMDJSON_PADDING readable bytes).
  // Returns an empty string on success, else why the event is not valid JSON.
  std::string read(std::string_view text, EventFields& out);

 private:
  simdjson::ondemand::parser parser_;
};

}  // namespace fusionscope::interchange::detail
