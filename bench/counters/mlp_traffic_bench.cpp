// counters_mlp_traffic [preset] [variant...]: hardware counters per kernel of one forward pass,
// for each variant, next to the plan's guess (fewest DRAM bytes, FLOPs). Default: geglu-post in
// eager, pointwise-fused and gated-gemm. The counters pass is the lab's: user replay (the runner
// repeats the forward pass once per hardware pass) with the L2 swept before each kernel, so DRAM
// bytes are counted as Nsight Compute counts them (docs/counters.md).
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "fusionscope/counters/kernel_counters.h"
#include "fusionscope/counters/metric_names.h"
#include "fusionscope/kernels/plan.h"
#include "fusionscope/kernels/runner.h"

namespace fc = fusionscope::counters;
namespace fk = fusionscope::kernels;
namespace m = fusionscope::counters::metric;

namespace {

constexpr double kMB = 1e6;

void report(const fk::MlpConfig& config, fk::Variant variant) {
  fc::CounterPassOptions po;
  po.replay = fc::ReplayMode::kUser;
  po.flush_l2 = true;
  fc::KernelCounterSession session(po);
  const fc::CounterStatus begun = session.begin();
  fc::CounterPassResult pass;
  fk::RunOptions o;
  o.warmup_iterations = 3;
  o.timed_iterations = begun.ok() ? static_cast<int>(session.passes()) : 1;
  o.check = false;
  o.input_sets = 1;
  o.before_launch = [&](void* stream) { session.before_kernel(stream); };
  o.on_progress = [&](const fk::RunProgress& p) {
    if (p.phase == fk::RunProgress::Phase::kTimed) {
      session.begin_pass();
    } else if (session.active() && (p.phase == fk::RunProgress::Phase::kCheck ||
                                    p.phase == fk::RunProgress::Phase::kDone)) {
      pass = session.end();
    }
  };
  const fk::RunResult run = fk::run(config, variant, o);
  if (session.active()) pass = session.end();
  std::printf("\n== %s / %s (%s)\n", config.name.c_str(),
              std::string(fk::to_string(variant)).c_str(), run.kernel_path.c_str());
  if (!run.ok) {
    std::printf("run failed: %s\n", run.error.c_str());
    return;
  }
  if (!begun.ok() || !pass.status.ok()) {
    std::printf("%s\n", (!begun.ok() ? begun : pass.status).describe().c_str());
    return;
  }
  const auto& plan = run.plan.launches;
  const bool by_plan = plan.size() == pass.kernels.size();
  std::printf("%zu kernel(s), %zu replay pass(es), chip %s%s\n", pass.kernels.size(), pass.passes,
              pass.chip.c_str(), by_plan ? "" : " (kernel count differs from the plan)");
  std::printf("%-22s %9s %9s %9s %9s %10s %9s %9s %8s\n", "kernel (plan op)", "read MB", "write MB",
              "guess MB", "L2 MB", "dur us*", "TFLOP", "guess", "tensor%");
  double total_read = 0, total_write = 0, total_flops = 0;
  for (size_t k = 0; k < pass.kernels.size(); ++k) {
    const double read = pass.value(k, m::kDramRead), write = pass.value(k, m::kDramWrite);
    total_read += read;
    total_write += write;
    total_flops += pass.value(k, m::kFlops);
    std::printf("%-22s %9.1f %9.1f %9.1f %9.1f %10.1f %9.4f %9.4f %8.1f\n",
                by_plan ? plan[k].op.c_str() : ("#" + std::to_string(k)).c_str(), read / kMB,
                write / kMB, by_plan ? plan[k].min_bytes / kMB : 0.0,
                pass.value(k, m::kL2Bytes) / kMB, pass.value(k, m::kDuration) * 1e-3,
                pass.value(k, m::kFlops) * 1e-12, by_plan ? plan[k].flops * 1e-12 : 0.0,
                pass.value(k, m::kTensorActivePct));
  }
  std::printf("%-22s %9.1f %9.1f %9.1f %9s %10s %9.4f %9.4f\n", "total", total_read / kMB,
              total_write / kMB, run.plan.min_bytes() / kMB, "", "", total_flops * 1e-12,
              run.plan.flops() * 1e-12);
  std::printf("DRAM read + write: %.1f MB (plan's fewest bytes %.1f MB)%s\n",
              (total_read + total_write) / kMB, run.plan.min_bytes() / kMB,
              pass.limit_reached ? "; kernel limit reached, later kernels missing" : "");
  std::printf("* durations are from the replayed counters pass, not the timing pass\n");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"counters_mlp_traffic: DRAM traffic per kernel of a preset's variants"};
  std::string preset = "geglu-post";
  std::vector<std::string> variant_names;
  app.add_option("preset", preset, "Preset to run")->capture_default_str();
  app.add_option("variants", variant_names,
                 "Variants (default: eager, pointwise-fused, gated-gemm)");
  CLI11_PARSE(app, argc, argv);
  const auto config = fk::find_preset(preset);
  if (!config) {
    std::fprintf(stderr, "no preset named %s\n", preset.c_str());
    return 2;
  }
  std::vector<fk::Variant> variants;
  try {
    for (const std::string& name : variant_names) variants.push_back(fk::parse_variant(name));
  } catch (const fk::ConfigError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  if (variants.empty()) {
    variants = {fk::Variant::kEager, fk::Variant::kPointwiseFused, fk::Variant::kGatedGemm};
  }
  for (const auto v : variants) {
    std::string why;
    if (!fk::supports(*config, v, &why)) {
      std::printf("\n== %s / %s: not supported (%s)\n", preset.c_str(),
                  std::string(fk::to_string(v)).c_str(), why.c_str());
      continue;
    }
    report(*config, v);
  }
  std::printf(
      "\nNsight Compute on these kernels: counters_ncu_gpu_tests (docs/counters.md has the "
      "table).\n");
  return 0;
}
