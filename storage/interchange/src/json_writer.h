// Small helpers to write JSON text directly (exports can hold millions of events; building a
// tree first would double their memory).
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace fusionscope::interchange::detail {

// A JSON string literal, quotes included. Invalid UTF-8 becomes U+FFFD rather than an error.
inline std::string json_quoted(std::string_view text) {
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

template <typename Int>
void append_int(std::string& out, Int value) {
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

// a - b and a + b, clamped to the int64 range instead of overflowing (records read back from a
// damaged file may hold any values).
inline int64_t saturating_sub(int64_t a, int64_t b) {
  int64_t r = 0;
  if (!__builtin_sub_overflow(a, b, &r)) return r;
  return b < 0 ? INT64_MAX : INT64_MIN;
}
inline int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

// Nanoseconds as microseconds with exactly three decimals: 1234567 -> "1234.567".
inline void append_micros(std::string& out, int64_t ns) {
  uint64_t magnitude = ns < 0 ? uint64_t{0} - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  if (ns < 0) out.push_back('-');
  append_int(out, magnitude / 1000);
  const auto frac = static_cast<unsigned>(magnitude % 1000);
  out.push_back('.');
  out.push_back(static_cast<char>('0' + frac / 100));
  out.push_back(static_cast<char>('0' + frac / 10 % 10));
  out.push_back(static_cast<char>('0' + frac % 10));
}

}  // namespace fusionscope::interchange::detail
