// The JSON form of a configuration: what a run stores in its config_json and what config files
// hold. Unknown keys are refused so a misspelt key is not silently ignored.
#include <nlohmann/json.hpp>

#include "fusionscope/kernels/config.h"

namespace fusionscope::kernels {
namespace {

using nlohmann::json;

const json& require(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) throw ConfigError(std::string("configuration JSON lacks \"") + key + "\"");
  return *it;
}

std::string require_string(const json& j, const char* key) {
  const json& v = require(j, key);
  if (!v.is_string())
    throw ConfigError(std::string("configuration JSON: \"") + key + "\" must be a string");
  return v.get<std::string>();
}

int64_t as_int(const json& v, const std::string& what) {
  if (!v.is_number_integer())
    throw ConfigError("configuration JSON: " + what + " must be an integer (got " + v.dump() + ")");
  return v.get<int64_t>();
}

}  // namespace

std::string to_json(const MlpConfig& c) {
  json j;
  j["name"] = c.name;
  j["kind"] = std::string(to_string(c.kind));
  j["rows"] = c.rows;
  j["widths"] = c.widths;
  j["bias"] = c.bias;
  j["dtype"] = std::string(to_string(c.dtype));
  j["activation"] = std::string(to_string(c.activation));
  return j.dump();
}

MlpConfig config_from_json(std::string_view text) {
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    throw ConfigError(std::string("configuration JSON does not parse: ") + e.what());
  }
  if (!j.is_object()) throw ConfigError("configuration JSON must be an object");
  static const char* const kKeys[] = {"name", "kind",  "rows",      "widths",
                                      "bias", "dtype", "activation"};
  for (const auto& item : j.items()) {
    bool known = false;
    for (const char* k : kKeys) known = known || item.key() == k;
    if (!known) throw ConfigError("configuration JSON has an unknown key \"" + item.key() + "\"");
  }
  MlpConfig c;
  if (j.contains("name")) {
    if (!j["name"].is_string()) throw ConfigError("configuration JSON: \"name\" must be a string");
    c.name = j["name"].get<std::string>();
  }
  c.kind = parse_kind(require_string(j, "kind"));
  c.rows = as_int(require(j, "rows"), "\"rows\"");
  const json& widths = require(j, "widths");
  if (!widths.is_array())
    throw ConfigError("configuration JSON: \"widths\" must be an array of integers");
  for (size_t i = 0; i < widths.size(); ++i)
    c.widths.push_back(as_int(widths[i], "widths[" + std::to_string(i) + "]"));
  if (j.contains("bias")) {
    if (!j["bias"].is_boolean())
      throw ConfigError("configuration JSON: \"bias\" must be true or false");
    c.bias = j["bias"].get<bool>();
  }
  c.dtype = parse_dtype(require_string(j, "dtype"));
  if (j.contains("activation")) c.activation = parse_activation(require_string(j, "activation"));
  validate_shape(c);
  return c;
}

}  // namespace fusionscope::kernels
