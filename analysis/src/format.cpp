#include "fusionscope/analysis/format.h"

#include <cmath>
#include <cstdio>

namespace fusionscope::analysis {

namespace {

struct Unit {
  double scale;
  const char* name;
};

Unit duration_unit(double ns) {
  const double a = std::fabs(ns);
  if (a < 1e3) return {1.0, "ns"};
  if (a < 1e6) return {1e3, "us"};
  if (a < 1e9) return {1e6, "ms"};
  return {1e9, "s"};
}

}  // namespace

std::string format_duration(double ns, int decimals) {
  if (!std::isfinite(ns)) return "-";
  const Unit u = duration_unit(ns);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals < 0 ? 0 : decimals, ns / u.scale, u.name);
  return buf;
}

std::string format_duration(double ns) {
  if (!std::isfinite(ns)) return "-";
  const Unit u = duration_unit(ns);
  const double v = std::fabs(ns / u.scale);
  // Nanoseconds are whole; otherwise three significant digits (1.23, 12.3, 123).
  int decimals = 0;
  if (u.scale > 1.0) decimals = v < 9.995 ? 2 : (v < 99.95 ? 1 : 0);
  return format_duration(ns, decimals);
}

std::string format_count(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string format_bytes(double bytes) {
  if (!std::isfinite(bytes)) return "-";
  static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB"};
  int u = 0;
  double v = bytes;
  while (std::fabs(v) >= 1000.0 && u < 4) {
    v /= 1000.0;
    ++u;
  }
  char buf[64];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%.0f B", v);
  else
    std::snprintf(buf, sizeof buf, "%.*f %s",
                  std::fabs(v) < 9.995 ? 2 : (std::fabs(v) < 99.95 ? 1 : 0), v, kUnits[u]);
  return buf;
}

std::string format_bandwidth(double bytes_per_s) {
  if (!std::isfinite(bytes_per_s)) return "-";
  char buf[32];
  if (std::fabs(bytes_per_s) >= 1e12)
    std::snprintf(buf, sizeof buf, "%.2f TB/s", bytes_per_s / 1e12);
  else
    std::snprintf(buf, sizeof buf, "%.0f GB/s", bytes_per_s / 1e9);
  return buf;
}

std::string format_flop_rate(double flop_per_s) {
  if (!std::isfinite(flop_per_s)) return "-";
  const double a = std::fabs(flop_per_s);
  char buf[32];
  if (a >= 100e12)
    std::snprintf(buf, sizeof buf, "%.0f TFLOP/s", flop_per_s / 1e12);
  else if (a >= 1e12)
    std::snprintf(buf, sizeof buf, "%.1f TFLOP/s", flop_per_s / 1e12);
  else
    std::snprintf(buf, sizeof buf, "%.0f GFLOP/s", flop_per_s / 1e9);
  return buf;
}

std::string format_flops(double flops) {
  if (!std::isfinite(flops)) return "-";
  static const char* const kUnits[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"};
  int u = 0;
  double v = flops;
  while (std::fabs(v) >= 1000.0 && u < 5) {
    v /= 1000.0;
    ++u;
  }
  const double a = std::fabs(v);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f %s", u == 0 ? 0 : (a < 9.995 ? 2 : (a < 99.95 ? 1 : 0)), v,
                kUnits[u]);
  return buf;
}

std::string format_percent(double fraction, int decimals) {
  if (!std::isfinite(fraction)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f%%", decimals < 0 ? 0 : decimals, fraction * 100.0);
  return buf;
}

std::string format_percent(double fraction) {
  return format_percent(fraction, std::fabs(fraction) < 0.0995 ? 1 : 0);
}

std::string format_factor(double x, int decimals) {
  if (!std::isfinite(x)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*fx", decimals < 0 ? 0 : decimals, x);
  return buf;
}

std::string format_factor(double x) {
  return format_factor(x, std::fabs(x) < 9.95 ? 1 : 0);
}

}  // namespace fusionscope::analysis
