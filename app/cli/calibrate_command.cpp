// `fusionscope calibrate [--session FILE]`: measures this GPU's achievable DRAM bandwidth (a large
// device-to-device copy, bytes read + written) and tensor-core bf16 rate (a cuBLASLt 8192^3 GEMM),
// prints them, and with --session stores them in the session's calibrated_* fields.
// Exit codes: 0 measured (and stored), 1 no GPU, a failed measurement or an unwritable session,
// 2 the arguments do not fit together.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "fusionscope/counters/calibration.h"
#include "fusionscope/storage/session_store.h"

namespace fusionscope::cli {
namespace {

struct CalibrateArgs {
  std::string session;
  int device = 0;
  int repetitions = 20;
  int gemm_size = 8192;
  size_t copy_mib = 2048;
};

int run_calibrate(const CalibrateArgs& args) {
  if (args.repetitions < 1 || args.gemm_size < 256 || args.copy_mib < 64) {
    std::fprintf(stderr,
                 "fusionscope calibrate: --repetitions must be >= 1, --gemm >= 256 and --copy-mib "
                 ">= 64\n");
    return 2;
  }
  // Open the session first: a bad file is reported before minutes of GPU work, not after.
  std::unique_ptr<storage::SessionStore> store;
  if (!args.session.empty()) {
    try {
      store = std::make_unique<storage::SessionStore>(
          storage::SessionStore::open(args.session, storage::OpenMode::kReadWrite));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fusionscope calibrate: %s\n", e.what());
      return 1;
    }
  }

  counters::CalibrationOptions options;
  options.device = args.device;
  options.repetitions = args.repetitions;
  options.gemm_size = args.gemm_size;
  options.copy_bytes = args.copy_mib << 20;
  const counters::CalibrationResult r = counters::calibrate(options);
  if (!r.ok) {
    std::fprintf(stderr, "fusionscope calibrate: %s\n", r.error.c_str());
    return 1;
  }
  const double gbs = r.bandwidth_bytes_per_s * 1e-9;
  const double tflops = r.tensor_flops_per_s * 1e-12;
  std::printf("GPU: %s\n", r.gpu_name.c_str());
  std::printf(
      "DRAM bandwidth:   %8.1f GB/s median (best %.1f) - device copy, %.2f GiB read + "
      "written per launch\n",
      gbs, r.best_bandwidth_bytes_per_s * 1e-9,
      static_cast<double>(r.copy_bytes_moved) / (1u << 30));
  std::printf("Tensor bf16 rate: %8.1f TFLOP/s median (best %.1f) - cuBLASLt GEMM %d^3\n", tflops,
              r.best_tensor_flops_per_s * 1e-12, args.gemm_size);
  std::printf("Ridge point:      %8.1f FLOP/byte\n",
              r.tensor_flops_per_s / r.bandwidth_bytes_per_s);

  if (!store) return 0;
  try {
    storage::SessionInfo info = store->session();
    if (!info.gpu_name.empty() && info.gpu_name != r.gpu_name) {
      std::fprintf(stderr,
                   "fusionscope calibrate: warning: %s was captured on %s; these figures are for "
                   "%s\n",
                   args.session.c_str(), info.gpu_name.c_str(), r.gpu_name.c_str());
    }
    info.calibrated_bandwidth_gbs = gbs;
    info.calibrated_tensor_tflops = tflops;
    store->update_session(info);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fusionscope calibrate: storing the figures in %s failed: %s\n",
                 args.session.c_str(), e.what());
    return 1;
  }
  std::printf("stored in %s\n", args.session.c_str());
  return 0;
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto args = std::make_shared<CalibrateArgs>();
  auto* cmd = app.add_subcommand(
      "calibrate",
      "Measure this GPU's DRAM bandwidth and bf16 tensor rate (the roofline's ceilings)");
  cmd->add_option("--session,-s", args->session,
                  "Session file (.fsdb) whose calibrated bandwidth and tensor rate to set");
  cmd->add_option("--device", args->device, "CUDA device index")->capture_default_str();
  cmd->add_option("--repetitions", args->repetitions, "Timed launches of each workload (median)")
      ->capture_default_str();
  cmd->add_option("--gemm", args->gemm_size, "GEMM size M = N = K")->capture_default_str();
  cmd->add_option("--copy-mib", args->copy_mib, "Bytes per copy buffer, in MiB")
      ->capture_default_str();
  cmd->callback([args] { exit_code() = run_calibrate(*args); });
}

}  // namespace fusionscope::cli
