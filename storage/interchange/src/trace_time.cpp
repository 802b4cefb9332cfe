#include "trace_time.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace fusionscope::interchange::detail {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

std::optional<int64_t> micros_to_ns(double micros) {
  if (!std::isfinite(micros)) return std::nullopt;
  const double ns = std::round(micros * 1000.0);
  // 2^63 is exactly representable; anything at or beyond it does not fit.
  constexpr double kLimit = 9223372036854775808.0;
  if (!(ns < kLimit && ns >= -kLimit)) return std::nullopt;
  return static_cast<int64_t>(ns);
}

std::optional<int64_t> micros_to_ns(int64_t micros) {
  int64_t ns = 0;
  if (__builtin_mul_overflow(micros, int64_t{1000}, &ns)) return std::nullopt;
  return ns;
}

std::optional<int64_t> micros_to_ns(uint64_t micros) {
  if (micros > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return micros_to_ns(static_cast<int64_t>(micros));
}

std::optional<int64_t> micros_text_to_ns(std::string_view text) {
  size_t i = 0;
  const bool negative = i < text.size() && text[i] == '-';
  if (negative) ++i;
  const size_t int_begin = i;
  while (i < text.size() && is_digit(text[i])) ++i;
  const size_t int_end = i;
  size_t frac_begin = i, frac_end = i;
  if (i < text.size() && text[i] == '.') {
    frac_begin = ++i;
    while (i < text.size() && is_digit(text[i])) ++i;
    frac_end = i;
  }
  if (int_begin == int_end && frac_begin == frac_end) return std::nullopt;
  if (i != text.size()) {
    // An exponent (or anything else): the exact path does not apply; go through a double.
    double value = 0.0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return micros_to_ns(value);
  }

  if (int_end - int_begin <= 15) {
    // The common case, without overflow checks: 10^15 - 1 microseconds in nanoseconds (plus one
    // for rounding) is far below 2^63.
    int64_t ns = 0;
    for (size_t k = int_begin; k < int_end; ++k) ns = ns * 10 + (text[k] - '0');
    ns *= 1000;
    constexpr int64_t kScale[3] = {100, 10, 1};
    for (size_t k = 0; k < 3 && frac_begin + k < frac_end; ++k)
      ns += (text[frac_begin + k] - '0') * kScale[k];
    if (frac_end - frac_begin > 3 && text[frac_begin + 3] >= '5') ++ns;
    return negative ? -ns : ns;
  }
  int64_t magnitude = 0;  // nanoseconds, as a positive number
  for (size_t k = int_begin; k < int_end; ++k) {
    if (__builtin_mul_overflow(magnitude, int64_t{10}, &magnitude) ||
        __builtin_add_overflow(magnitude, int64_t{text[k] - '0'}, &magnitude)) {
      return std::nullopt;
    }
  }
  if (__builtin_mul_overflow(magnitude, int64_t{1000}, &magnitude)) return std::nullopt;
  int64_t scale = 100;
  for (size_t k = frac_begin; k < frac_end && scale > 0; ++k, scale /= 10) {
    if (__builtin_add_overflow(magnitude, (text[k] - '0') * scale, &magnitude)) return std::nullopt;
  }
  if (frac_end - frac_begin > 3 && text[frac_begin + 3] >= '5') {
    if (__builtin_add_overflow(magnitude, int64_t{1}, &magnitude)) return std::nullopt;
  }
  return negative ? -magnitude : magnitude;
}

std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}

}  // namespace fusionscope::interchange::detail
