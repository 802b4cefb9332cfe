// A sweep: one size of a configuration varied over a range (doubling, or N points evenly spaced on
// a log scale), every chosen variant run at each point. What a sweep was is kept in the session's
// properties (key "lab.sweep.N", a JSON value, docs/lab.md) so a reloaded session can draw its
// chart again; the runs themselves are ordinary runs named "<base> <size>=<value> / <variant>".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fusionscope/kernels/config.h"
#include "fusionscope/lab/capture_job.h"
#include "fusionscope/storage/session_store.h"

namespace fusionscope::lab {

enum class SweepSize : uint8_t { kRows, kIn, kHidden, kOut };
std::string_view to_string(SweepSize s);
SweepSize parse_sweep_size(std::string_view s);  // throws kernels::ConfigError

inline constexpr int kMaxSweepPoints = 32;

struct SweepSpec {
  SweepSize size = SweepSize::kHidden;
  int64_t from = 256;
  int64_t to = 8192;
  int steps =
      0;  // 0: doubling from `from` (and `to` last when doubling misses it); N >= 2: N points
  friend bool operator==(const SweepSpec&, const SweepSpec&) = default;
};

// The sizes the sweep visits, ascending and distinct. Widths are kept multiples of 8 (the
// kernels need 16-byte rows). Throws kernels::ConfigError for an empty or reversed range, a
// width range that is not made of multiples of 8, or more than kMaxSweepPoints points.
std::vector<int64_t> sweep_points(const SweepSpec& spec);

// `base` with one size set to `value` and its name suffixed " <size>=<value>". Throws
// kernels::ConfigError when the kind has no such size (a linear layer's hidden width, a gated
// MLP's out width, which is its input width).
kernels::MlpConfig with_size(const kernels::MlpConfig& base, SweepSize size, int64_t value);

// What a sweep was, and which run measured each point in each variant.
struct SweepRecord {
  std::string key;  // the session property that holds it, e.g. "lab.sweep.2"
  std::string created_utc;
  SweepSpec spec;
  kernels::MlpConfig base;
  std::vector<kernels::Variant> variants;
  bool cuda_graph = false;
  struct Point {
    int64_t value = 0;
    std::vector<std::pair<kernels::Variant, int64_t>> runs;  // run ids, as they were made
  };
  std::vector<Point> points;
  // The run of a point in a variant; 0 when there is none (skipped, not reached, cancelled).
  int64_t run_for(std::size_t point, kernels::Variant variant) const;
  // "hidden 256 -> 8192 (6 points) of geglu-post"
  std::string title() const;
};

// A sweep's runs in job order (point by point, each in every variant that applies) and, for each
// run, the point it measures; the record has the points and no run ids yet.
struct SweepPlan {
  std::vector<RunSpec> runs;
  std::vector<std::size_t> point_of_run;  // aligned with runs
  std::vector<std::string> skipped;       // "config / variant: why"
  SweepRecord record;
};
// Throws kernels::ConfigError when the spec is invalid, a point's configuration is not a valid
// shape, or no variant applies at any point.
SweepPlan plan_sweep(const kernels::MlpConfig& base, const std::vector<kernels::Variant>& variants,
                     const SweepSpec& spec);

inline constexpr std::string_view kSweepPropertyPrefix = "lab.sweep.";

std::string to_json(const SweepRecord& record);
// Throws kernels::ConfigError on malformed text.
SweepRecord sweep_from_json(std::string_view json, std::string key = {});

// A key no property of the session has yet: "lab.sweep.<N>" with N one more than the largest.
std::string next_sweep_key(const std::vector<std::pair<std::string, std::string>>& properties);
void save_sweep(storage::SessionStore& store, const SweepRecord& record);
// Every sweep among a session's properties, in key order; malformed ones are left out and,
// when `errors` is given, described there.
std::vector<SweepRecord> load_sweeps(
    const std::vector<std::pair<std::string, std::string>>& properties,
    std::vector<std::string>* errors = nullptr);

}  // namespace fusionscope::lab
