// Numbers as the views and reports print them: durations with a unit that fits, counts with
// thousands separators, byte sizes.
#pragma once

#include <cstdint>
#include <string>

namespace fusionscope::analysis {

// "850 ns", "12.3 us", "1.23 ms", "4.56 s": about three significant digits, never scientific.
std::string format_duration(double ns);
// As format_duration but with the given number of decimals in the chosen unit.
std::string format_duration(double ns, int decimals);
// "1,234,567".
std::string format_count(uint64_t n);
// "512 B", "1.50 kB", "33.2 MB": decimal units, as DRAM traffic and bandwidth are quoted.
std::string format_bytes(double bytes);

}  // namespace fusionscope::analysis
