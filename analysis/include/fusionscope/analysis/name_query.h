// What Find and the statistics filter match names against: a substring (ignoring case unless
// asked) or an ECMAScript regular expression searched anywhere in the name.
#pragma once

#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>

namespace fusionscope::analysis {

class NameQuery {
 public:
  // nullopt for an empty text, or a regular expression that does not compile (*error says why).
  static std::optional<NameQuery> make(std::string_view text, bool regex, bool match_case,
                                       std::string* error = nullptr);
  bool matches(std::string_view name) const;
  const std::string& text() const { return text_; }

 private:
  std::string text_;  // lower-cased unless match_case, for substrings
  bool match_case_ = false;
  std::shared_ptr<const std::regex> regex_;  // shared: a query is copied into each view's state
};

}  // namespace fusionscope::analysis
