// The lab's executor in the program: the kernels' runner.
#include "fusionscope/kernels/runner.h"
#include "fusionscope/lab/lab.h"

namespace fusionscope::lab {
namespace {

class RunnerExecutor final : public Executor {
 public:
  kernels::RunResult execute(const kernels::MlpConfig& config, kernels::Variant variant,
                             const kernels::RunOptions& options) override {
    return kernels::run(config, variant, options);
  }
};

}  // namespace

std::unique_ptr<Executor> make_runner_executor() {
  return std::make_unique<RunnerExecutor>();
}

}  // namespace fusionscope::lab
