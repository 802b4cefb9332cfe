// Typed, non-throwing access to the members of a parsed trace event: every lookup tolerates a
// missing member or one of the wrong type and says so with an empty optional.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace fusionscope::interchange::detail {

inline const nlohmann::json* member(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

inline std::optional<std::string_view> as_string(const nlohmann::json* v) {
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return std::string_view(v->get_ref<const std::string&>());
}

// A non-negative integer no larger than `max`. Integral floats (3.0) count; strings do not.
inline std::optional<uint64_t> as_unsigned(const nlohmann::json* v,
                                           uint64_t max = std::numeric_limits<uint64_t>::max()) {
  if (v == nullptr) return std::nullopt;
  uint64_t value = 0;
  if (v->is_number_unsigned()) {
    value = v->get<uint64_t>();
  } else if (v->is_number_integer()) {
    const auto i = v->get<int64_t>();
    if (i < 0) return std::nullopt;
    value = static_cast<uint64_t>(i);
  } else if (v->is_number_float()) {
    const double d = v->get<double>();
    // 2^64 is exact as a double; an integral double below it converts exactly.
    if (!(d >= 0.0 && d < 18446744073709551616.0) || std::floor(d) != d) return std::nullopt;
    value = static_cast<uint64_t>(d);
  } else {
    return std::nullopt;
  }
  if (value > max) return std::nullopt;
  return value;
}

inline std::optional<uint32_t> as_u32(const nlohmann::json* v) {
  const auto u = as_unsigned(v, std::numeric_limits<uint32_t>::max());
  if (!u) return std::nullopt;
  return static_cast<uint32_t>(*u);
}

}  // namespace fusionscope::interchange::detail
