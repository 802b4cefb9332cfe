#include "event_fields.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace fusionscope::interchange::detail {
namespace {

using simdjson::ondemand::json_type;

std::string_view trim_right(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

std::string why(simdjson::error_code e) {
  return std::string("not valid JSON (") + simdjson::error_message(e) + ")";
}

// Reads one value into `out` (and its JSON text into `raw`). Returns the error, if any.
simdjson::error_code read_value(simdjson::ondemand::value v, FieldValue& out,
                                std::string_view& raw) {
  json_type type{};
  if (auto e = v.type().get(type)) return e;
  switch (type) {
    case json_type::number: {
      raw = trim_right(v.raw_json_token());
      out = {JsonKind::kNumber, raw, raw};
      return simdjson::SUCCESS;
    }
    case json_type::string: {
      const std::string_view token = v.raw_json_token();
      std::string_view text;
      if (auto e = v.get_string().get(text)) return e;
      raw = trim_right(token);
      out = {JsonKind::kString, text, raw};
      return simdjson::SUCCESS;
    }
    case json_type::boolean: {
      bool b = false;
      if (auto e = v.get_bool().get(b)) return e;
      raw = b ? "true" : "false";
      out = {JsonKind::kBool, raw, raw};
      return simdjson::SUCCESS;
    }
    case json_type::null: {
      bool is_null = false;
      if (auto e = v.is_null().get(is_null)) return e;
      if (!is_null) return simdjson::INCORRECT_TYPE;
      raw = "null";
      out = {JsonKind::kNull, raw, raw};
      return simdjson::SUCCESS;
    }
    case json_type::array: {
      simdjson::ondemand::array a;
      if (auto e = v.get_array().get(a)) return e;
      if (auto e = a.raw_json().get(raw)) return e;
      raw = trim_right(raw);
      out = {JsonKind::kArray, raw, raw};
      return simdjson::SUCCESS;
    }
    case json_type::object: {
      simdjson::ondemand::object o;
      if (auto e = v.get_object().get(o)) return e;
      if (auto e = o.raw_json().get(raw)) return e;
      raw = trim_right(raw);
      out = {JsonKind::kObject, raw, raw};
      return simdjson::SUCCESS;
    }
  }
  return simdjson::INCORRECT_TYPE;
}

FieldValue* slot_of(EventFields& f, std::string_view key) {
  if (key.size() > 4) return nullptr;
  if (key == "ph") return &f.ph;
  if (key == "cat") return &f.cat;
  if (key == "name") return &f.name;
  if (key == "pid") return &f.pid;
  if (key == "tid") return &f.tid;
  if (key == "ts") return &f.ts;
  if (key == "dur") return &f.dur;
  if (key == "id") return &f.id;
  if (key == "s") return &f.scope;
  return nullptr;
}

}  // namespace

std::optional<JsonNumber> parse_json_number(std::string_view token) {
  JsonNumber n;
  size_t i = 0;
  if (i < token.size() && token[i] == '-') {
    n.negative = true;
    ++i;
  }
  const size_t digits = i;
  while (i < token.size() && token[i] >= '0' && token[i] <= '9') ++i;
  if (i == digits) return std::nullopt;
  if (token[digits] == '0' && i - digits > 1) return std::nullopt;  // JSON has no leading zeros
  bool plain = i == token.size();
  if (!plain) {
    // Fraction and exponent, as JSON spells them.
    size_t j = i;
    if (j < token.size() && token[j] == '.') {
      const size_t f = ++j;
      while (j < token.size() && token[j] >= '0' && token[j] <= '9') ++j;
      if (j == f) return std::nullopt;
    }
    if (j < token.size() && (token[j] == 'e' || token[j] == 'E')) {
      ++j;
      if (j < token.size() && (token[j] == '+' || token[j] == '-')) ++j;
      const size_t e = j;
      while (j < token.size() && token[j] >= '0' && token[j] <= '9') ++j;
      if (j == e) return std::nullopt;
    }
    if (j != token.size()) return std::nullopt;
  }
  if (plain) {
    uint64_t m = 0;
    bool fits = true;
    for (size_t k = digits; k < i && fits; ++k) {
      fits = !__builtin_mul_overflow(m, uint64_t{10}, &m) &&
             !__builtin_add_overflow(m, static_cast<uint64_t>(token[k] - '0'), &m);
    }
    if (fits) {
      n.integral = true;
      n.magnitude = m;
      n.value = n.negative ? -static_cast<double>(m) : static_cast<double>(m);
      return n;
    }
  }
  double d = 0.0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), d);
  if (ec == std::errc::result_out_of_range) {
    // Underflow reads as zero; only overflow is past the range.
    const bool tiny = token.find_first_of("eE") != std::string_view::npos &&
                      token.find("e-") != std::string_view::npos;
    if (!tiny && token.find("E-") == std::string_view::npos) {
      n.overflows_double = true;
      return n;
    }
    d = 0.0;
  } else if (ec != std::errc() || end != token.data() + token.size()) {
    return std::nullopt;
  }
  n.value = d;
  // An integral value written with a fraction (3.0) still counts as an integer where it fits.
  if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 18446744073709551616.0) {
    n.integral = true;
    n.negative = d < 0;
    n.magnitude = static_cast<uint64_t>(std::fabs(d));
  }
  return n;
}

std::string EventReader::read(std::string_view text, EventFields& out) {
  // Field by field, so that arg_members keeps its capacity from event to event.
  out.ph = out.cat = out.name = out.pid = out.tid = out.ts = out.dur = out.id = out.scope =
      out.args = FieldValue{};
  out.arg_members.clear();
  out.members.clear();
  simdjson::ondemand::document doc;
  if (auto e = parser_.iterate(text.data(), text.size(), text.size() + simdjson::SIMDJSON_PADDING)
                   .get(doc)) {
    return why(e);
  }
  simdjson::ondemand::object object;
  if (auto e = doc.get_object().get(object)) return why(e);
  for (auto member : object) {
    simdjson::ondemand::field field;
    if (auto e = std::move(member).get(field)) return why(e);
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return why(e);
    std::string_view raw;
    if (key == "args") {
      simdjson::ondemand::value v = field.value();
      json_type type{};
      if (auto e = v.type().get(type)) return why(e);
      if (type != json_type::object) {
        if (auto e = read_value(v, out.args, raw)) return why(e);
        continue;
      }
      simdjson::ondemand::object args;
      if (auto e = v.get_object().get(args)) return why(e);
      out.args = {JsonKind::kObject, {}, {}};
      for (auto arg : args) {
        simdjson::ondemand::field af;
        if (auto e = std::move(arg).get(af)) return why(e);
        ArgMember m;
        if (auto e = af.unescaped_key().get(m.key)) return why(e);
        if (auto e = read_value(af.value(), m.value, m.raw)) return why(e);
        out.arg_members.push_back(m);
      }
      continue;
    }
    ArgMember m;
    m.key = key;
    if (auto e = read_value(field.value(), m.value, m.raw)) return why(e);
    // A repeated member: the last one counts, as in most JSON readers.
    if (FieldValue* slot = slot_of(out, key)) *slot = m.value;
    out.members.push_back(m);
  }
  return {};
}

}  // namespace fusionscope::interchange::detail
