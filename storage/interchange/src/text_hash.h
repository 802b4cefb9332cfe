// A fast hash of a text, for the importer's tables keyed by text (interned strings, counts of
// operators' input types): every event of a trace looks one up, most of them 100 to 300 bytes.
// Eight bytes at a time, each mixed in by a multiplication; transparent, so that a string_view
// finds a std::string key without a copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace fusionscope::interchange::detail {

struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const {
    constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;  // 2^64 / golden ratio, odd
    uint64_t h = (s.size() + 1) * kMul;
    const char* p = s.data();
    size_t n = s.size();
    auto mix = [&h](uint64_t word) {
      h = (h ^ word) * kMul;
      h ^= h >> 32;
    };
    for (; n >= 8; p += 8, n -= 8) {
      uint64_t word;
      std::memcpy(&word, p, 8);
      mix(word);
    }
    if (n > 0) {
      uint64_t word = 0;
      std::memcpy(&word, p, n);
      mix(word);
    }
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

}  // namespace fusionscope::interchange::detail
