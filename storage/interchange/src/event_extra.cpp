#include "event_extra.h"

#include <cstdint>
#include <cstring>

#include <simdjson.h>

namespace fusionscope::interchange::detail {

namespace {

// Whether any of the eight bytes of `w` is a control character, a quote or a backslash: each
// test is the classic "has a zero byte" bit trick, exact as to whether there is one.
bool word_needs_escape(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
  auto has_zero = [](uint64_t x) { return ((x - kOnes) & ~x & kHighs) != 0; };
  const bool control = ((w - kOnes * 0x20) & ~w & kHighs) != 0;
  return control || has_zero(w ^ (kOnes * '"')) || has_zero(w ^ (kOnes * '\\'));
}

// Whether `text` holds a byte that JSON must escape.
bool needs_escape(std::string_view text) {
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, text.data() + i, 8);
    if (word_needs_escape(w)) return true;
  }
  for (; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == '"' || c == '\\') return true;
  }
  return false;
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  if (!needs_escape(text)) {
    // Keys and texts almost never need escaping: one append.
    out += '"';
    out += text;
    out += '"';
    return;
  }
  out.push_back('"');
  size_t plain = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(text.data() + plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";
        out += "\\u00";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 15]);
      }
    }
  }
  out.append(text.data() + plain, text.size() - plain);
  out.push_back('"');
}

namespace {

char* put(char* p, std::string_view text) {
  std::memcpy(p, text.data(), text.size());
  return p + text.size();
}

}  // namespace

void ExtraText::append_member(Buffer& to, std::string_view key, std::string_view raw) {
  const bool plain = !needs_escape(key);
  if (!plain) {
    escaped_.clear();
    append_json_string(escaped_, key);
  }
  const size_t key_bytes = plain ? key.size() + 2 : escaped_.size();
  char* p = to.room(2 + key_bytes + 2 + raw.size());
  if (!to.empty()) {
    *p++ = ',';
    *p++ = ' ';
  }
  if (plain) {
    *p++ = '"';
    p = put(p, key);
    *p++ = '"';
  } else {
    p = put(p, escaped_);
  }
  *p++ = ':';
  *p++ = ' ';
  p = put(p, raw);
  to.commit(p);
}

std::string_view ExtraText::text() {
  out_.clear();
  if (empty()) return {};
  constexpr std::string_view kArgs = "\"args\": {";
  char* p = out_.room(top_.size() + args_.size() + kArgs.size() + 6);
  *p++ = '{';
  p = put(p, top_.view());
  if (!args_.empty()) {
    if (!top_.empty()) {
      *p++ = ',';
      *p++ = ' ';
    }
    p = put(p, kArgs);
    p = put(p, args_.view());
    *p++ = '}';
  }
  *p++ = '}';
  out_.commit(p);
  return out_.view();
}

namespace {

using simdjson::ondemand::json_type;

// The members of `object` with their JSON text; false if it is not readable.
bool read_members(simdjson::ondemand::object object,
                  std::vector<std::pair<std::string, std::string>>& out, ExtraMembers* nested) {
  for (auto member : object) {
    simdjson::ondemand::field field;
    if (std::move(member).get(field) != simdjson::SUCCESS) return false;
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) return false;
    simdjson::ondemand::value value = field.value();
    json_type type{};
    if (value.type().get(type) != simdjson::SUCCESS) return false;
    if (nested != nullptr && key == "args" && type == json_type::object) {
      simdjson::ondemand::object args;
      if (value.get_object().get(args) != simdjson::SUCCESS) return false;
      if (!read_members(args, nested->args, nullptr)) return false;
      continue;
    }
    std::string_view raw;
    if (type == json_type::object) {
      simdjson::ondemand::object o;
      if (value.get_object().get(o) != simdjson::SUCCESS || o.raw_json().get(raw)) return false;
    } else if (type == json_type::array) {
      simdjson::ondemand::array a;
      if (value.get_array().get(a) != simdjson::SUCCESS || a.raw_json().get(raw)) return false;
    } else {
      raw = value.raw_json_token();
    }
    while (!raw.empty() &&
           (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t'))
      raw.remove_suffix(1);
    out.emplace_back(std::string(key), std::string(raw));
  }
  return true;
}

}  // namespace

ExtraMembers parse_extra(std::string_view text) {
  ExtraMembers out;
  if (text.empty()) return out;
  simdjson::ondemand::parser parser;
  const simdjson::padded_string padded(text);
  simdjson::ondemand::document doc;
  simdjson::ondemand::object object;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS ||
      doc.get_object().get(object) != simdjson::SUCCESS || !read_members(object, out.top, &out)) {
    return {};
  }
  return out;
}

}  // namespace fusionscope::interchange::detail
