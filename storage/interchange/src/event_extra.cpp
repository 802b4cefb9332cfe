#include "event_extra.h"

#include <simdjson.h>

namespace fusionscope::interchange::detail {

void append_json_string(std::string& out, std::string_view text) {
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

void ExtraText::add_member(std::string_view key, std::string_view raw) {
  if (!top_.empty()) top_ += ", ";
  append_json_string(top_, key);
  top_ += ": ";
  top_ += raw;
}

void ExtraText::add_arg(std::string_view key, std::string_view raw) {
  if (!args_.empty()) args_ += ", ";
  append_json_string(args_, key);
  args_ += ": ";
  args_ += raw;
}

std::string_view ExtraText::text() {
  out_.clear();
  if (empty()) return {};
  out_ += '{';
  out_ += top_;
  if (!args_.empty()) {
    if (!top_.empty()) out_ += ", ";
    out_ += "\"args\": {";
    out_ += args_;
    out_ += '}';
  }
  out_ += '}';
  return out_;
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
