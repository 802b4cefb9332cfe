#include "fusionscope/storage/printable.h"

#include <cstdio>

namespace fusionscope::storage {

std::string printable(std::string_view text, bool one_line) {
  std::string out;
  out.reserve(text.size());
  auto escape = [&](unsigned char c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02X", c);
    out += buf;
  };
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n' || c == '\t') {
      if (one_line)
        escape(c);
      else
        out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c < 0x20 || c == 0x7F) {
      escape(c);
      ++i;
      continue;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    // A whole, shortest-form UTF-8 sequence passes; C1 controls (U+0080 to U+009F, such as the
    // single-byte CSI) and surrogates do not.
    const size_t n = c >= 0xC2 && c <= 0xDF   ? 2
                     : c >= 0xE0 && c <= 0xEF ? 3
                     : c >= 0xF0 && c <= 0xF4 ? 4
                                              : 0;
    bool valid = n > 0 && i + n <= text.size();
    for (size_t k = 1; valid && k < n; ++k)
      valid = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    if (valid) {
      const auto c1 = static_cast<unsigned char>(text[i + 1]);
      if (c == 0xC2 && c1 < 0xA0) valid = false;   // C1 controls
      if (c == 0xE0 && c1 < 0xA0) valid = false;   // overlong
      if (c == 0xED && c1 >= 0xA0) valid = false;  // surrogates
      if (c == 0xF0 && c1 < 0x90) valid = false;   // overlong
      if (c == 0xF4 && c1 >= 0x90) valid = false;  // beyond U+10FFFF
    }
    if (!valid) {
      escape(c);
      ++i;
      continue;
    }
    out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

}  // namespace fusionscope::storage
