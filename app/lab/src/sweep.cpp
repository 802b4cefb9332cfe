#include "fusionscope/lab/sweep.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "fusionscope/storage/utc_time.h"

namespace fusionscope::lab {

namespace {

using kernels::ConfigError;
using kernels::MlpKind;
using nlohmann::json;

constexpr int64_t kWidthStep = 8;

bool is_width(SweepSize s) {
  return s != SweepSize::kRows;
}

}  // namespace

std::string_view to_string(SweepSize s) {
  switch (s) {
    case SweepSize::kRows:
      return "rows";
    case SweepSize::kIn:
      return "in";
    case SweepSize::kHidden:
      return "hidden";
    case SweepSize::kOut:
      return "out";
  }
  return "unknown";
}

SweepSize parse_sweep_size(std::string_view s) {
  for (SweepSize v : {SweepSize::kRows, SweepSize::kIn, SweepSize::kHidden, SweepSize::kOut})
    if (to_string(v) == s) return v;
  throw ConfigError("unknown sweep size '" + std::string(s) + "' (rows, in, hidden or out)");
}

std::vector<int64_t> sweep_points(const SweepSpec& spec) {
  const std::string what(to_string(spec.size));
  if (spec.from <= 0 || spec.to <= 0)
    throw ConfigError("a sweep of " + what + " needs positive sizes (from " +
                      std::to_string(spec.from) + " to " + std::to_string(spec.to) + ")");
  if (spec.to < spec.from)
    throw ConfigError("a sweep of " + what + " must go up: " + std::to_string(spec.from) + " -> " +
                      std::to_string(spec.to));
  if (is_width(spec.size) && (spec.from % kWidthStep != 0 || spec.to % kWidthStep != 0))
    throw ConfigError("a sweep of " + what + " runs from and to multiples of 8 (got " +
                      std::to_string(spec.from) + " -> " + std::to_string(spec.to) + ")");
  if (spec.steps == 1 || spec.steps < 0)
    throw ConfigError("a sweep takes doubling steps or at least 2 points (got " +
                      std::to_string(spec.steps) + ")");
  if (spec.steps > kMaxSweepPoints)
    throw ConfigError("a sweep of " + std::to_string(spec.steps) + " points is too long (at most " +
                      std::to_string(kMaxSweepPoints) + ")");
  std::vector<int64_t> points;
  if (spec.steps == 0) {
    for (int64_t v = spec.from; v <= spec.to; v *= 2) {
      points.push_back(v);
      if (points.size() > static_cast<size_t>(kMaxSweepPoints)) break;
      if (v > spec.to / 2) break;
    }
    if (points.back() != spec.to) points.push_back(spec.to);
  } else {
    const double ratio = static_cast<double>(spec.to) / static_cast<double>(spec.from);
    for (int i = 0; i < spec.steps; ++i) {
      const double x =
          static_cast<double>(spec.from) * std::pow(ratio, i / static_cast<double>(spec.steps - 1));
      int64_t v = std::llround(x);
      if (is_width(spec.size))
        v = std::max<int64_t>(kWidthStep, std::llround(x / kWidthStep) * kWidthStep);
      points.push_back(std::clamp(v, spec.from, spec.to));
    }
    points.front() = spec.from;
    points.back() = spec.to;
    points.erase(std::unique(points.begin(), points.end()), points.end());
  }
  if (points.size() > static_cast<size_t>(kMaxSweepPoints))
    throw ConfigError("a sweep of " + what + " from " + std::to_string(spec.from) + " to " +
                      std::to_string(spec.to) + " doubling has " + std::to_string(points.size()) +
                      " points, more than " + std::to_string(kMaxSweepPoints));
  return points;
}

kernels::MlpConfig with_size(const kernels::MlpConfig& base, SweepSize size, int64_t value) {
  kernels::MlpConfig c = base;
  auto& w = c.widths;
  const std::string kind(kernels::to_string(c.kind));
  switch (size) {
    case SweepSize::kRows:
      c.rows = value;
      break;
    case SweepSize::kIn:
      if (w.empty()) throw ConfigError("the configuration has no widths");
      w.front() = value;
      break;
    case SweepSize::kHidden:
      if (c.kind == MlpKind::kLinear)
        throw ConfigError("a linear layer has no hidden width to sweep (sweep in or out)");
      if (c.kind == MlpKind::kGated) {
        if (w.size() < 2) throw ConfigError("a gated MLP has widths {dim, hidden}");
        w[1] = value;
      } else {
        if (w.size() < 3)
          throw ConfigError("this mlp has one layer and so no hidden width (add layers)");
        for (size_t i = 1; i + 1 < w.size(); ++i) w[i] = value;
      }
      break;
    case SweepSize::kOut:
      if (c.kind == MlpKind::kGated)
        throw ConfigError("a gated MLP's output width is its input width (sweep in)");
      if (w.size() < 2) throw ConfigError("the configuration has no output width");
      w.back() = value;
      break;
  }
  c.name = (base.name.empty() ? kind : base.name) + " " + std::string(to_string(size)) + "=" +
           std::to_string(value);
  return c;
}

int64_t SweepRecord::run_for(std::size_t point, kernels::Variant variant) const {
  if (point >= points.size()) return 0;
  for (const auto& [v, id] : points[point].runs)
    if (v == variant) return id;
  return 0;
}

std::string SweepRecord::title() const {
  std::string t = std::string(to_string(spec.size)) + " " + std::to_string(spec.from) + " -> " +
                  std::to_string(spec.to) + " (" + std::to_string(points.size()) + " points";
  if (spec.steps == 0) t += ", doubling";
  t += ") of " + (base.name.empty() ? kernels::describe(base) : base.name);
  if (cuda_graph) t += ", CUDA graph";
  return t;
}

SweepPlan plan_sweep(const kernels::MlpConfig& base, const std::vector<kernels::Variant>& variants,
                     const SweepSpec& spec) {
  if (variants.empty()) throw ConfigError("choose at least one variant to sweep");
  SweepPlan plan;
  plan.record.spec = spec;
  plan.record.base = base;
  plan.record.variants = variants;
  plan.record.created_utc = storage::utc_now();
  const std::vector<int64_t> values = sweep_points(spec);
  for (size_t i = 0; i < values.size(); ++i) {
    const kernels::MlpConfig c = with_size(base, spec.size, values[i]);
    kernels::validate_shape(c);
    plan.record.points.push_back({values[i], {}});
    for (const RunSpec& r : expand({c}, variants, &plan.skipped)) {
      plan.runs.push_back(r);
      plan.point_of_run.push_back(i);
    }
  }
  if (plan.runs.empty())
    throw ConfigError("none of the chosen variants applies at any point of the sweep");
  return plan;
}

std::string to_json(const SweepRecord& r) {
  json j;
  j["size"] = std::string(to_string(r.spec.size));
  j["from"] = r.spec.from;
  j["to"] = r.spec.to;
  j["steps"] = r.spec.steps;
  j["base"] = json::parse(kernels::to_json(r.base));
  json variants = json::array();
  for (kernels::Variant v : r.variants) variants.push_back(std::string(kernels::to_string(v)));
  j["variants"] = variants;
  j["graph"] = r.cuda_graph;
  j["created_utc"] = r.created_utc;
  json points = json::array();
  for (const auto& p : r.points) {
    json runs = json::object();
    for (const auto& [v, id] : p.runs) runs[std::string(kernels::to_string(v))] = id;
    points.push_back({{"value", p.value}, {"runs", runs}});
  }
  j["points"] = points;
  return j.dump();
}

SweepRecord sweep_from_json(std::string_view text, std::string key) {
  SweepRecord r;
  r.key = std::move(key);
  try {
    const json j = json::parse(text.begin(), text.end());
    r.spec.size = parse_sweep_size(j.at("size").get<std::string>());
    r.spec.from = j.at("from").get<int64_t>();
    r.spec.to = j.at("to").get<int64_t>();
    r.spec.steps = j.at("steps").get<int>();
    r.base = kernels::config_from_json(j.at("base").dump());
    for (const json& v : j.at("variants"))
      r.variants.push_back(kernels::parse_variant(v.get<std::string>()));
    r.cuda_graph = j.value("graph", false);
    r.created_utc = j.value("created_utc", std::string());
    for (const json& p : j.at("points")) {
      SweepRecord::Point point;
      point.value = p.at("value").get<int64_t>();
      for (const auto& item : p.at("runs").items())
        point.runs.emplace_back(kernels::parse_variant(item.key()), item.value().get<int64_t>());
      r.points.push_back(std::move(point));
    }
  } catch (const json::exception& e) {
    throw ConfigError(std::string("the sweep's description is not valid: ") + e.what());
  }
  return r;
}

std::string next_sweep_key(const std::vector<std::pair<std::string, std::string>>& properties) {
  long largest = 0;
  for (const auto& [key, value] : properties) {
    if (!key.starts_with(kSweepPropertyPrefix)) continue;
    const std::string n = key.substr(kSweepPropertyPrefix.size());
    char* end = nullptr;
    const long v = std::strtol(n.c_str(), &end, 10);
    if (end != n.c_str() && *end == 0) largest = std::max(largest, v);
  }
  return std::string(kSweepPropertyPrefix) + std::to_string(largest + 1);
}

void save_sweep(storage::SessionStore& store, const SweepRecord& record) {
  store.set_property(record.key, to_json(record));
}

std::vector<SweepRecord> load_sweeps(
    const std::vector<std::pair<std::string, std::string>>& properties,
    std::vector<std::string>* errors) {
  std::vector<std::pair<long, SweepRecord>> found;
  for (const auto& [key, value] : properties) {
    if (!key.starts_with(kSweepPropertyPrefix)) continue;
    try {
      const long n = std::strtol(key.c_str() + kSweepPropertyPrefix.size(), nullptr, 10);
      found.emplace_back(n, sweep_from_json(value, key));
    } catch (const ConfigError& e) {
      if (errors) errors->push_back(key + ": " + e.what());
    }
  }
  // By number, so lab.sweep.10 follows lab.sweep.9.
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<SweepRecord> out;
  for (auto& [n, r] : found) out.push_back(std::move(r));
  return out;
}

}  // namespace fusionscope::lab
