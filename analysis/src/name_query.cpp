#include "fusionscope/analysis/name_query.h"

#include <algorithm>
#include <cctype>

namespace fusionscope::analysis {

std::optional<NameQuery> NameQuery::make(std::string_view text, bool regex, bool match_case,
                                         std::string* error) {
  if (text.empty()) return std::nullopt;
  NameQuery q;
  q.match_case_ = match_case;
  q.text_ = std::string(text);
  if (regex) {
    try {
      auto flags = std::regex::ECMAScript | std::regex::optimize;
      if (!match_case) flags |= std::regex::icase;
      q.regex_ = std::make_shared<const std::regex>(q.text_, flags);
    } catch (const std::regex_error& e) {
      if (error) *error = std::string("not a regular expression: ") + e.what();
      return std::nullopt;
    }
  } else if (!match_case) {
    std::transform(q.text_.begin(), q.text_.end(), q.text_.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  }
  return q;
}

bool NameQuery::matches(std::string_view name) const {
  if (regex_) return std::regex_search(name.begin(), name.end(), *regex_);
  if (match_case_) return name.find(text_) != std::string_view::npos;
  const auto it =
      std::search(name.begin(), name.end(), text_.begin(), text_.end(),
                  [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
  return it != name.end();
}

}  // namespace fusionscope::analysis
