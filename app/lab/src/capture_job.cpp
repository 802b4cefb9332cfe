#include "fusionscope/lab/capture_job.h"

namespace fusionscope::lab {

std::string run_name(const RunSpec& spec) {
  const std::string config =
      spec.config.name.empty() ? kernels::describe(spec.config) : spec.config.name;
  return config + " / " + std::string(kernels::to_string(spec.variant)) +
         (spec.round > 0 ? " (round " + std::to_string(spec.round) + ")" : "");
}

std::vector<RunSpec> in_rounds(const std::vector<RunSpec>& runs, int rounds) {
  if (rounds <= 1 || runs.empty()) return runs;
  std::vector<RunSpec> out;
  out.reserve(runs.size() * static_cast<std::size_t>(rounds));
  for (int r = 0; r < rounds; ++r)
    for (std::size_t i = 0; i < runs.size(); ++i) {
      RunSpec spec = runs[(i + static_cast<std::size_t>(r)) % runs.size()];
      spec.round = r + 1;
      out.push_back(spec);
    }
  return out;
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
