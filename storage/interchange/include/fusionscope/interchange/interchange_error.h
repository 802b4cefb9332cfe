// Every failure to read or write an interchange file (a trace that is not JSON, a truncated gzip,
// an unwritable output) is an InterchangeError whose message names the file and what went wrong.
#pragma once

#include <stdexcept>

namespace fusionscope::interchange {

class InterchangeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace fusionscope::interchange
