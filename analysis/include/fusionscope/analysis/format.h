// Numbers as the views and reports print them: durations with a unit that fits, counts with
// thousands separators, byte sizes, rates, work, shares and ratios. The one place for these: views,
// reports and messages call it rather than printing numbers with units themselves.
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
// "2.82 TB/s", "640 GB/s": memory bandwidth in bytes per second.
std::string format_bandwidth(double bytes_per_s);
// "742 TFLOP/s", "6.1 TFLOP/s", "500 GFLOP/s".
std::string format_flop_rate(double flop_per_s);
// "1.21 GFLOP", "38.7 TFLOP": an amount of work, decimal units, about three significant digits.
std::string format_flops(double flops);
// A fraction as a percentage: "42%", and one decimal below 10% so small shares stay readable
// ("4.2%").
std::string format_percent(double fraction);
// As format_percent with the given number of decimals: format_percent(0.714, 1) is "71.4%".
std::string format_percent(double fraction, int decimals);
// A ratio such as a speedup: "1.3x", "12x" (one decimal below 10).
std::string format_factor(double x);
// As format_factor with the given number of decimals: format_factor(1.172, 2) is "1.17x".
std::string format_factor(double x, int decimals);

}  // namespace fusionscope::analysis
