#include "fusionscope/lab/job_file.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace fusionscope::lab {
namespace {

using kernels::ConfigError;
using nlohmann::json;

std::vector<kernels::Variant> variants_of(const json& v, const std::string& where) {
  if (v.is_string()) return parse_variant_list(v.get<std::string>());
  if (!v.is_array()) throw ConfigError(where + ": \"variants\" must be \"all\" or a list of names");
  std::vector<kernels::Variant> out;
  for (const json& name : v) {
    if (!name.is_string()) throw ConfigError(where + ": variant names must be strings");
    try {
      out.push_back(kernels::parse_variant(name.get<std::string>()));
    } catch (const ConfigError& e) {
      throw ConfigError(where + ": " + e.what());
    }
  }
  if (out.empty()) throw ConfigError(where + ": \"variants\" is empty");
  return out;
}

int int_in(const json& j, const char* key, int def, int lo, int hi) {
  auto it = j.find(key);
  if (it == j.end()) return def;
  if (!it->is_number_integer())
    throw ConfigError(std::string("job file: \"") + key + "\" must be an integer");
  const int64_t v = it->get<int64_t>();
  if (v < lo || v > hi)
    throw ConfigError(std::string("job file: \"") + key + "\" must be between " +
                      std::to_string(lo) + " and " + std::to_string(hi) + " (got " +
                      std::to_string(v) + ")");
  return static_cast<int>(v);
}

bool bool_of(const json& j, const char* key, bool def) {
  auto it = j.find(key);
  if (it == j.end()) return def;
  if (!it->is_boolean())
    throw ConfigError(std::string("job file: \"") + key + "\" must be true or false");
  return it->get<bool>();
}

}  // namespace

std::vector<kernels::Variant> parse_variant_list(std::string_view list) {
  if (list == "all") return kernels::all_variants();
  std::vector<kernels::Variant> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    std::string_view name = list.substr(start, comma - start);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (!name.empty()) out.push_back(kernels::parse_variant(name));
    start = comma + 1;
  }
  if (out.empty())
    throw ConfigError("no variant named (give a list such as eager,epilogue or all)");
  return out;
}

JobFile parse_job_file(std::string_view text) {
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    throw ConfigError(std::string("job file is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw ConfigError("job file must hold a JSON object");
  static const char* const kKeys[] = {"session",  "warmup",      "iterations",     "graph",
                                      "verify",   "device",      "variants",       "configurations",
                                      "counters", "pm_sampling", "pm_interval_us", "rounds"};
  for (const auto& item : j.items()) {
    bool known = false;
    for (const char* k : kKeys) known = known || item.key() == k;
    if (!known) throw ConfigError("job file has an unknown key \"" + item.key() + "\"");
  }

  JobFile file;
  if (auto it = j.find("session"); it != j.end()) {
    if (!it->is_string()) throw ConfigError("job file: \"session\" must be a string");
    file.session_name = it->get<std::string>();
  }
  file.job.warmup = int_in(j, "warmup", file.job.warmup, 0, 100000);
  file.job.iterations = int_in(j, "iterations", file.job.iterations, 1, 1000000);
  file.rounds = int_in(j, "rounds", 1, 1, 100);
  file.job.cuda_graph = bool_of(j, "graph", false);
  file.job.verify = bool_of(j, "verify", false);
  file.job.device = int_in(j, "device", 0, 0, 1024);
  file.job.counters = bool_of(j, "counters", false);
  file.job.pm_sampling = bool_of(j, "pm_sampling", false);
  file.job.pm_interval_ns =
      static_cast<uint64_t>(int_in(j, "pm_interval_us", 10, 1, 1'000'000)) * 1000;
  const std::vector<kernels::Variant> default_variants =
      j.contains("variants") ? variants_of(j["variants"], "job file") : kernels::all_variants();

  auto configs = j.find("configurations");
  if (configs == j.end() || !configs->is_array() || configs->empty())
    throw ConfigError(
        "job file needs \"configurations\": a non-empty list of presets or configurations");
  for (std::size_t i = 0; i < configs->size(); ++i) {
    const json& entry = (*configs)[i];
    const std::string where = "configurations[" + std::to_string(i) + "]";
    kernels::MlpConfig config;
    std::vector<kernels::Variant> variants = default_variants;
    if (entry.is_string()) {
      auto preset = kernels::find_preset(entry.get<std::string>());
      if (!preset)
        throw ConfigError(where + ": no preset named \"" + entry.get<std::string>() + "\"");
      config = *preset;
    } else if (entry.is_object()) {
      json body = entry;
      if (auto v = body.find("variants"); v != body.end()) {
        variants = variants_of(*v, where);
        body.erase("variants");
      }
      if (auto p = body.find("preset"); p != body.end()) {
        if (!p->is_string()) throw ConfigError(where + ": \"preset\" must be a string");
        if (body.size() != 1)
          throw ConfigError(where + ": a preset entry takes only \"preset\" and \"variants\"");
        auto preset = kernels::find_preset(p->get<std::string>());
        if (!preset)
          throw ConfigError(where + ": no preset named \"" + p->get<std::string>() + "\"");
        config = *preset;
      } else {
        try {
          config = kernels::config_from_json(body.dump());
        } catch (const ConfigError& e) {
          throw ConfigError(where + ": " + e.what());
        }
      }
    } else {
      throw ConfigError(where + ": expected a preset name or a configuration object");
    }
    std::vector<RunSpec> runs = expand({config}, variants, &file.skipped);
    file.job.runs.insert(file.job.runs.end(), runs.begin(), runs.end());
  }
  if (file.job.runs.empty())
    throw ConfigError("job file: no configuration supports any of the variants asked for");
  return file;
}

JobFile load_job_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot read job file " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return parse_job_file(text.str());
  } catch (const ConfigError& e) {
    throw ConfigError(path.string() + ": " + e.what());
  }
}

}  // namespace fusionscope::lab
