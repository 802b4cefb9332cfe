// Chrome trace times are microseconds, usually written with three decimals (nanoseconds). They
// are converted from the number's text so that a timestamp of 4489001737194.828 us, past the
// 15-16 significant digits a double holds exactly, still lands on the right nanosecond.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace fusionscope::interchange::detail {

// JSON number text in microseconds -> nanoseconds, rounded half away from zero.
// nullopt when the text is not a number or the result does not fit int64.
std::optional<int64_t> micros_text_to_ns(std::string_view text);
std::optional<int64_t> micros_to_ns(double micros);
std::optional<int64_t> micros_to_ns(int64_t micros);
std::optional<int64_t> micros_to_ns(uint64_t micros);

// a + b, or nullopt on int64 overflow.
std::optional<int64_t> checked_add(int64_t a, int64_t b);

}  // namespace fusionscope::interchange::detail
