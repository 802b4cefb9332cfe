#include "fusionscope/analysis/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace fusionscope::analysis {

std::string demangle(std::string_view name) {
  if (name.size() < 3 || name.substr(0, 2) != "_Z") return std::string(name);
  const std::string mangled(name);
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || !out) return mangled;
  return std::string(out.get());
}

namespace {

bool is_open(char c) {
  return c == '(' || c == '<' || c == '[' || c == '{';
}
bool is_close(char c) {
  return c == ')' || c == '>' || c == ']' || c == '}';
}

// Position of the bracket that opens the group closing at s[close], scanning backwards; npos if
// the brackets do not balance. '>' of "->" and the brackets of operator names are rare enough in
// kernel names to accept a plain count.
size_t matching_open(std::string_view s, size_t close) {
  int depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    if (is_close(s[i])) ++depth;
    if (is_open(s[i]) && --depth == 0) return i;
  }
  return std::string_view::npos;
}

// The last position at bracket depth 0 where `pred` holds for s[i..], or npos.
template <class Pred>
size_t last_top_level(std::string_view s, Pred pred) {
  int depth = 0;
  size_t found = std::string_view::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    if (is_open(s[i]))
      ++depth;
    else if (is_close(s[i]))
      depth = depth > 0 ? depth - 1 : 0;
    else if (depth == 0 && pred(s, i))
      found = i;
  }
  return found;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

std::string short_name(std::string_view name) {
  const std::string full = demangle(name);
  std::string_view s = trim(full);
  // Qualifiers after the parameter list ("(int) const").
  for (std::string_view q : {" const", " volatile", " &&", " &"}) {
    while (s.size() > q.size() && s.substr(s.size() - q.size()) == q) s.remove_suffix(q.size());
  }
  // Parameter list, then template arguments, each only when it closes the name.
  for (char close : {')', '>'}) {
    if (!s.empty() && s.back() == close) {
      const size_t open = matching_open(s, s.size() - 1);
      if (open != std::string_view::npos && open > 0) s = trim(s.substr(0, open));
    }
  }
  // Return type: whatever precedes the last space outside brackets.
  const size_t space = last_top_level(s, [](std::string_view t, size_t i) { return t[i] == ' '; });
  if (space != std::string_view::npos) s = s.substr(space + 1);
  // Namespaces and classes.
  const size_t colons = last_top_level(s, [](std::string_view t, size_t i) {
    return i + 1 < t.size() && t[i] == ':' && t[i + 1] == ':';
  });
  if (colons != std::string_view::npos && colons + 2 < s.size()) s = s.substr(colons + 2);
  s = trim(s);
  return s.empty() ? full : std::string(s);
}

}  // namespace fusionscope::analysis
