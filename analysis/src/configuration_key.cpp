#include "fusionscope/analysis/configuration_key.h"

namespace fusionscope::analysis {

std::string configuration_key(const storage::RunInfo& info) {
  std::string key = info.config_json;
  if (key.empty()) {
    const size_t slash = info.name.find(" / ");
    key = slash == std::string::npos ? info.name : info.name.substr(0, slash);
  }
  return key + (info.cuda_graph ? "|graph" : "");
}

}  // namespace fusionscope::analysis
