// A streaming reader for Chrome trace JSON: the document is never held as a whole tree. Each
// entry of `traceEvents` is built as a small JSON object, handed to the sink, and dropped. The
// top-level members the importer needs (deviceProperties, versions, baseTimeNanoseconds, ...) are
// kept in the header. Both Chrome forms are accepted: {"traceEvents": [...], ...} and a bare array
// of events.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace fusionscope::interchange::detail {

// One trace event. Numbers keep their decimal text for `ts` and `dur` when written with a
// fraction, so times convert without floating-point loss.
struct RawEvent {
  nlohmann::json fields = nlohmann::json::object();
  std::string ts_text;   // empty when `ts` was an integer or absent
  std::string dur_text;  // likewise for `dur`
};

class TraceEventSink {
 public:
  virtual ~TraceEventSink() = default;
  virtual void on_event(RawEvent& event) = 0;
  // An entry of traceEvents that is not an object (a number, a string, an array, null).
  virtual void on_non_object_event() = 0;
};

// Events nest their args at most a few levels; deeper values are dropped from the event.
inline constexpr int kMaxEventDepth = 16;

// Parses `text`, calling `sink` for each event and filling `header`. Throws InterchangeError
// naming `source` when the text is not JSON or not shaped like a Chrome trace.
void read_trace_json(std::string_view text, std::string_view source, TraceEventSink& sink,
                     nlohmann::json& header);

}  // namespace fusionscope::interchange::detail
