#include "trace_json_reader.h"

#include <string_view>
#include <utility>
#include <vector>

#include "fusionscope/interchange/interchange_error.h"

namespace fusionscope::interchange::detail {
namespace {

using nlohmann::json;

// Top-level members worth keeping; anything else (stack frames, distributed info) is skipped
// without being built.
bool is_header_key(std::string_view key) {
  return key == "deviceProperties" || key == "baseTimeNanoseconds" ||
         key == "cuda_driver_version" || key == "cuda_runtime_version" || key == "cupti_version" ||
         key == "traceName" || key == "trace_id" || key == "schemaVersion" || key == "fusionscope";
}

const char* type_words(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::string:
      return "a string";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    default:
      return "a number";
  }
}

// Builds one JSON value from SAX calls, dropping whatever nests deeper than kMaxEventDepth.
class ValueBuilder {
 public:
  void reset(json* root) {
    stack_.assign(1, root);
    dropped_ = 0;
    key_.clear();
  }
  void set_key(std::string& key) {
    if (dropped_ == 0) key_ = std::move(key);
  }
  const std::string& key() const { return key_; }
  // True while the value being built is a direct member of the root.
  bool at_root_member() const { return dropped_ == 0 && stack_.size() == 1; }

  void open(bool is_object) {
    if (dropped_ > 0 || stack_.size() >= static_cast<size_t>(kMaxEventDepth)) {
      ++dropped_;
      return;
    }
    json child = is_object ? json::object() : json::array();
    json* parent = stack_.back();
    json* added = nullptr;
    if (parent->is_object()) {
      added = &((*parent)[key_] = std::move(child));
    } else {
      parent->push_back(std::move(child));
      added = &parent->back();
    }
    stack_.push_back(added);
  }
  // Returns true when this closes the root.
  bool close() {
    if (dropped_ > 0) {
      --dropped_;
      return false;
    }
    stack_.pop_back();
    return stack_.empty();
  }
  void scalar(json&& value) {
    if (dropped_ > 0) return;
    json* parent = stack_.back();
    if (parent->is_object()) {
      (*parent)[key_] = std::move(value);
    } else {
      parent->push_back(std::move(value));
    }
  }

 private:
  std::vector<json*> stack_;
  std::string key_;
  int dropped_ = 0;
};

class TraceSax {
 public:
  TraceSax(TraceEventSink& sink, json& header) : sink_(sink), header_(header) {}

  bool null() { return scalar(json(nullptr), nullptr); }
  bool boolean(bool v) { return scalar(json(v), nullptr); }
  bool number_integer(json::number_integer_t v) { return scalar(json(v), nullptr); }
  bool number_unsigned(json::number_unsigned_t v) { return scalar(json(v), nullptr); }
  bool number_float(json::number_float_t v, const json::string_t& text) {
    return scalar(json(v), &text);
  }
  bool string(json::string_t& v) { return scalar(json(std::move(v)), nullptr); }
  bool binary(json::binary_t& /*unused: JSON text has no binary values*/) {
    return scalar(json(nullptr), nullptr);
  }
  bool start_object(std::size_t /*elements*/) { return open(true); }
  bool start_array(std::size_t /*elements*/) { return open(false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t& k) {
    switch (frames_.back()) {
      case Frame::kRootObject:
        if (top_keys_.size() < 8) top_keys_.push_back(k);
        top_key_ = std::move(k);
        break;
      case Frame::kBuildEvent:
      case Frame::kBuildHeader:
        builder_.set_key(k);
        break;
      case Frame::kEvents:
      case Frame::kSkip:
        break;
    }
    return true;
  }

  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const json::exception& ex) {
    std::string what = ex.what();
    // "[json.exception.parse_error.101] parse error at ..." -> "parse error at ..."
    if (const auto close = what.find("] ");
        what.rfind("[json.exception.", 0) == 0 && close != std::string::npos) {
      what = what.substr(close + 2);
    }
    error_ = "not valid JSON: " + what;
    if (position >= text_size_) error_ += " (the text ends early: is the file complete?)";
    return false;
  }

  void set_text_size(size_t n) { text_size_ = n; }
  const std::string& error() const { return error_; }
  bool saw_events() const { return saw_events_; }
  const std::vector<std::string>& top_keys() const { return top_keys_; }

 private:
  enum class Frame { kRootObject, kEvents, kBuildEvent, kBuildHeader, kSkip };

  bool fail(std::string message) {
    error_ = std::move(message);
    return false;
  }

  bool open(bool is_object) {
    if (frames_.empty()) {
      if (is_object) {
        frames_.push_back(Frame::kRootObject);
      } else {
        frames_.push_back(Frame::kEvents);  // the JSON Array Format: a bare list of events
        saw_events_ = true;
      }
      return true;
    }
    switch (frames_.back()) {
      case Frame::kRootObject:
        if (top_key_ == "traceEvents") {
          if (is_object) return fail("`traceEvents` is an object, not an array of events");
          frames_.push_back(Frame::kEvents);
          saw_events_ = true;
        } else if (is_header_key(top_key_)) {
          json& slot = header_[top_key_] = is_object ? json::object() : json::array();
          builder_.reset(&slot);
          frames_.push_back(Frame::kBuildHeader);
        } else {
          skip_depth_ = 1;
          frames_.push_back(Frame::kSkip);
        }
        break;
      case Frame::kEvents:
        if (is_object) {
          event_ = RawEvent{};
          builder_.reset(&event_.fields);
          frames_.push_back(Frame::kBuildEvent);
        } else {
          sink_.on_non_object_event();
          skip_depth_ = 1;
          frames_.push_back(Frame::kSkip);
        }
        break;
      case Frame::kBuildEvent:
      case Frame::kBuildHeader:
        builder_.open(is_object);
        break;
      case Frame::kSkip:
        ++skip_depth_;
        break;
    }
    return true;
  }

  bool close() {
    switch (frames_.back()) {
      case Frame::kRootObject:
      case Frame::kEvents:
        frames_.pop_back();
        break;
      case Frame::kBuildEvent:
        if (builder_.close()) {
          frames_.pop_back();
          sink_.on_event(event_);
        }
        break;
      case Frame::kBuildHeader:
        if (builder_.close()) frames_.pop_back();
        break;
      case Frame::kSkip:
        if (--skip_depth_ == 0) frames_.pop_back();
        break;
    }
    return true;
  }

  bool scalar(json&& value, const std::string* float_text) {
    if (frames_.empty()) {
      return fail(std::string("the document is ") + type_words(value) +
                  ", not a Chrome trace (expected an object with a traceEvents array)");
    }
    switch (frames_.back()) {
      case Frame::kRootObject:
        if (top_key_ == "traceEvents") {
          return fail(std::string("`traceEvents` is ") + type_words(value) +
                      ", not an array of events");
        }
        if (is_header_key(top_key_)) header_[top_key_] = std::move(value);
        break;
      case Frame::kEvents:
        sink_.on_non_object_event();
        break;
      case Frame::kBuildEvent:
        if (float_text != nullptr && builder_.at_root_member()) {
          if (builder_.key() == "ts") event_.ts_text = *float_text;
          if (builder_.key() == "dur") event_.dur_text = *float_text;
        }
        builder_.scalar(std::move(value));
        break;
      case Frame::kBuildHeader:
        builder_.scalar(std::move(value));
        break;
      case Frame::kSkip:
        break;
    }
    return true;
  }

  TraceEventSink& sink_;
  json& header_;
  std::vector<Frame> frames_;
  std::string top_key_;
  std::vector<std::string> top_keys_;
  ValueBuilder builder_;
  RawEvent event_;
  int skip_depth_ = 0;
  bool saw_events_ = false;
  size_t text_size_ = 0;
  std::string error_;
};

}  // namespace

void read_trace_json(std::string_view text, std::string_view source, TraceEventSink& sink,
                     json& header) {
  const std::string name(source);
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    throw InterchangeError(name + ": the file is empty, not a Chrome trace");
  }
  TraceSax sax(sink, header);
  sax.set_text_size(text.size());
  const bool ok = json::sax_parse(text.data(), text.data() + text.size(), &sax,
                                  json::input_format_t::json, /*strict=*/true);
  if (!ok || !sax.error().empty()) {
    throw InterchangeError(name + ": " + (sax.error().empty() ? "not valid JSON" : sax.error()));
  }
  if (!sax.saw_events()) {
    std::string keys;
    for (const auto& k : sax.top_keys()) keys += (keys.empty() ? "" : ", ") + k;
    throw InterchangeError(
        name + ": no `traceEvents` array, so not a Chrome trace" +
        (keys.empty() ? std::string(" (the object is empty)") : " (top-level keys: " + keys + ")"));
  }
}

}  // namespace fusionscope::interchange::detail
