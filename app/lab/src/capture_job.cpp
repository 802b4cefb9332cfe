#include "fusionscope/lab/capture_job.h"

namespace fusionscope::lab {

std::string run_name(const RunSpec& spec) {
  const std::string config =
      spec.config.name.empty() ? kernels::describe(spec.config) : spec.config.name;
  return config + " / " + std::string(kernels::to_string(spec.variant));
}

std::vector<RunSpec> expand(const std::vector<kernels::MlpConfig>& configs,
                            const std::vector<kernels::Variant>& variants,
                            std::vector<std::string>* skipped) {
  std::vector<RunSpec> runs;
  for (const auto& config : configs) {
    for (kernels::Variant v : variants) {
      std::string why;
      if (kernels::supports(config, v, &why)) {
        runs.push_back(RunSpec{config, v});
      } else if (skipped != nullptr) {
        skipped->push_back(run_name(RunSpec{config, v}) + ": " + why);
      }
    }
  }
  return runs;
}

}  // namespace fusionscope::lab
