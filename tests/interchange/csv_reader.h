// A small RFC 4180 reader, written for the tests of the CSV exports (independent of the writer).
#pragma once

#include <string>
#include <vector>

namespace fusionscope::testing {

using Rows = std::vector<std::vector<std::string>>;

// Rows of fields; quoted fields may hold commas, doubled quotes and line breaks.
Rows read_csv(const std::string& text);

}  // namespace fusionscope::testing
