// What the capturing process asked of this injected library (inject_env.h), read once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace fusionscope::inject {

struct Settings {
  std::string socket;  // empty: not under capture, stay inert
  bool counters = false;
  bool driver_api = true;
  std::size_t buffer_bytes = std::size_t{8} << 20;
  uint32_t flush_ms = 200;    // periodic flush in forked copies (inject_env.h)
  std::string capture_range;  // an NVTX range name; empty: none
  uint64_t delay_ns = 0;
  uint64_t duration_ns = 0;  // 0: until the end
  uint64_t t0_ns = 0;        // CLOCK_MONOTONIC when the command started; 0: unknown
  std::string iteration_range;
  int warmup = 0;
  std::string kernel_filter;
  std::size_t kernel_limit = 0;  // 0: no limit
};

using GetEnv = std::function<const char*(const char*)>;
// Malformed numbers fall back to their defaults.
Settings read_settings(const GetEnv& getenv);

}  // namespace fusionscope::inject
