#include "settings.h"

#include <charconv>
#include <string_view>

#include "../wire/inject_env.h"

namespace fusionscope::inject {
namespace {

template <class T>
T number(const GetEnv& getenv, const char* name, T fallback) {
  const char* v = getenv(name);
  if (v == nullptr) return fallback;
  const std::string_view s(v);
  T out{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || end != s.data() + s.size()) return fallback;
  return out;
}

std::string text(const GetEnv& getenv, const char* name) {
  const char* v = getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

Settings read_settings(const GetEnv& getenv) {
  Settings s;
  s.socket = text(getenv, env::kSocket);
  s.counters = text(getenv, env::kMode) == "counters";
  s.driver_api = text(getenv, env::kDriverApi) != "0";
  s.buffer_bytes = number<std::size_t>(getenv, env::kBufferBytes, s.buffer_bytes);
  if (s.buffer_bytes < 4096) s.buffer_bytes = 4096;
  s.flush_ms = number<uint32_t>(getenv, env::kFlushMs, s.flush_ms);
  s.capture_range = text(getenv, env::kCaptureRange);
  s.delay_ns = number<uint64_t>(getenv, env::kDelayNs, 0);
  s.duration_ns = number<uint64_t>(getenv, env::kDurationNs, 0);
  s.t0_ns = number<uint64_t>(getenv, env::kStartNs, 0);
  s.iteration_range = text(getenv, env::kIterationRange);
  s.warmup = number<int>(getenv, env::kWarmup, 0);
  if (s.warmup < 0) s.warmup = 0;
  s.kernel_filter = text(getenv, env::kKernelFilter);
  s.kernel_limit = number<std::size_t>(getenv, env::kKernelLimit, 0);
  return s;
}

}  // namespace fusionscope::inject
