// Times each variant of the chosen configurations with CUDA events (median over samples of
// --passes-per-sample back-to-back passes each, so that the ~2 us an event holds the next
// kernel back is not counted as a pass's own; inputs rotated through enough copies to defeat the L2
// when they would fit in it) and prints a table next to the floor the plan predicts. Also measures
// host time per forward pass (launches enqueued without a graph, NVTX off), and with --copy-ceiling
// what the memory does with the same bytes and nothing else: a device-to-device copy of the
// configuration's input plus output.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "buffers.h"
#include "executor.h"
#include "fusionscope/kernels/runner.h"

namespace fk = fusionscope::kernels;

namespace {

// Host microseconds per forward pass: `n` passes enqueued back to back, no sync inside.
double host_us_per_forward(const fk::MlpConfig& c, fk::Variant v, fk::GatedGemmPath path, int n) {
  fk::detail::Executor exec(c, v, 1, path, {}, 1, 0);
  cudaStream_t s = nullptr;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  for (int i = 0; i < 20; ++i) exec.forward(s, 0, false);
  cudaStreamSynchronize(s);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) exec.forward(s, 0, false);
  const auto t1 = std::chrono::steady_clock::now();
  cudaStreamSynchronize(s);
  cudaStreamDestroy(s);
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / n;
}

// Bytes of a forward pass's input plus output.
size_t io_bytes(const fk::MlpConfig& c) {
  const auto shapes = fk::detail::layer_shapes(c);
  return static_cast<size_t>(c.rows) * static_cast<size_t>(shapes.front().in + shapes.back().out) *
         fk::dtype_bytes(c.dtype);
}

// Median microseconds of cudaMemcpyAsync moving as many bytes as one forward pass of `c` reads
// and writes at least (half the input plus output read, as much written), timed like the runner
// times a pass (an event after every `per` copies), with the sources rotated under the runner's
// rule so that neither is served from the L2 where the pass is not. The memory's reachable rate for
// these bytes: the floor's 100% counts the peak, which no access pattern reaches.
double copy_us(const fk::MlpConfig& c, const fk::DeviceInfo& dev, int warmup, int iters, int per) {
  const size_t half = (io_bytes(c) / 2 + 255) / 256 * 256;
  const int sets = fk::detail::choose_input_sets(c, fk::Variant::kEager, dev, 0);
  std::vector<void*> src(static_cast<size_t>(sets), nullptr), dst(src);
  auto release = [&] {
    for (auto* p : src) cudaFree(p);
    for (auto* p : dst) cudaFree(p);
  };
  for (int i = 0; i < sets; ++i)
    if (cudaMalloc(&src[static_cast<size_t>(i)], half) != cudaSuccess ||
        cudaMalloc(&dst[static_cast<size_t>(i)], half) != cudaSuccess) {
      release();
      throw std::runtime_error("copy ceiling: out of device memory");
    }
  cudaStream_t s = nullptr;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  auto copy = [&](int i) {
    const auto k = static_cast<size_t>(i % sets);
    cudaMemcpyAsync(dst[k], src[k], half, cudaMemcpyDeviceToDevice, s);
  };
  for (int i = 0; i < warmup; ++i) copy(i);
  per = std::clamp(per, 1, std::max(1, iters));
  const int samples = std::max(1, iters / per);
  std::vector<cudaEvent_t> ev(static_cast<size_t>(samples) + 1);
  for (auto& e : ev) cudaEventCreate(&e);
  cudaEventRecord(ev[0], s);
  for (int i = 0; i < samples * per; ++i) {
    copy(warmup + i);
    if ((i + 1) % per == 0) cudaEventRecord(ev[static_cast<size_t>((i + 1) / per)], s);
  }
  const cudaError_t err = cudaStreamSynchronize(s);
  std::vector<double> us;
  for (size_t i = 0; i + 1 < ev.size() && err == cudaSuccess; ++i) {
    float ms = 0;
    cudaEventElapsedTime(&ms, ev[i], ev[i + 1]);
    us.push_back(ms * 1e3 / per);
  }
  for (auto e : ev) cudaEventDestroy(e);
  cudaStreamDestroy(s);
  release();
  if (err != cudaSuccess || us.empty())
    throw std::runtime_error(std::string("copy ceiling: ") + cudaGetErrorString(err));
  std::nth_element(us.begin(), us.begin() + static_cast<long>(us.size() / 2), us.end());
  return us[us.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fusionscope kernel benchmark: every variant, CUDA-event medians, vs the floor"};
  std::vector<std::string> preset_names;
  std::vector<std::string> variant_names;
  std::vector<std::string> config_jsons;
  int warmup = 20, iters = 200, input_sets = 0, host_iters = 2000, per_sample = 10;
  bool graph = false, print_config = false, no_host = false, no_check = false;
  bool copy_ceiling = false;
  uint64_t check_rows = 0;
  std::string json_out, path_name = "auto", pin_kernels;
  app.add_option("--preset", preset_names,
                 "presets to run (default, when no --config is given: the three targets)");
  app.add_option("--config", config_jsons, "configurations as JSON (in addition to presets)");
  app.add_option("--variant", variant_names, "variants (default: every supported one)");
  app.add_option("--warmup", warmup, "warm-up iterations");
  app.add_option("--iters", iters, "timed iterations");
  app.add_option("--passes-per-sample", per_sample,
                 "passes between two CUDA events; the figures are medians of their means (1: an "
                 "event after every pass, which adds ~2 us of idle GPU to each)");
  app.add_option("--input-sets", input_sets, "rotating input copies (0: automatic)");
  app.add_option("--host-iters", host_iters, "forward passes for the host-time figure");
  app.add_option("--gated-path", path_name, "gated GEMM kernel: auto, hopper, ampere");
  app.add_option("--pin-kernels", pin_kernels,
                 "run these kernel choices instead of timing candidates at set-up (a run's "
                 "kernel_choices, e.g. from --json), so another process runs the same kernels; "
                 "they apply to the gated-gemm variant, the others run as they would");
  app.add_flag("--graph", graph, "replay a CUDA graph per iteration");
  app.add_flag("--no-host-time", no_host, "skip the host-time measurement");
  app.add_flag("--copy-ceiling", copy_ceiling,
               "also time a device-to-device copy of each configuration's input + output bytes "
               "(a row `d2d copy`: what the memory reaches on those bytes alone)");
  app.add_flag("--no-check", no_check, "skip the check against the fp32 reference");
  app.add_option("--check-rows", check_rows,
                 "check only the first and last N/2 rows (0: every row)");
  app.add_option("--json", json_out, "write the results as JSON here");
  app.add_flag("--print-config", print_config, "print each preset's JSON and exit");
  CLI11_PARSE(app, argc, argv);
  if (preset_names.empty() && config_jsons.empty())
    preset_names = {"geglu-post", "mlp-narrow", "linear-post"};

  std::vector<fk::MlpConfig> configs;
  try {
    for (const auto& n : preset_names) {
      auto c = fk::find_preset(n);
      if (!c) throw fk::ConfigError("unknown preset '" + n + "'");
      configs.push_back(*c);
    }
    for (const auto& j : config_jsons) configs.push_back(fk::config_from_json(j));
  } catch (const fk::ConfigError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  if (print_config) {
    for (const auto& c : configs) std::printf("%s\n", fk::to_json(c).c_str());
    return 0;
  }
  fk::GatedGemmPath path = fk::GatedGemmPath::kAuto;
  if (path_name == "hopper") path = fk::GatedGemmPath::kHopperWgmma;
  if (path_name == "ampere") path = fk::GatedGemmPath::kAmpereMmaSync;

  const fk::DeviceInfo dev = fk::query_device(0);
  if (!dev.available) {
    std::fprintf(stderr, "no GPU: %s\n", dev.unavailable_reason.c_str());
    return 1;
  }
  std::printf("%s (cc %d.%d, %d SMs, L2 %.0f MiB), driver %d, runtime %d\n", dev.name.c_str(),
              dev.cc_major, dev.cc_minor, dev.sm_count,
              static_cast<double>(dev.l2_bytes) / (1 << 20), dev.driver_version,
              dev.runtime_version);
  std::printf("derived peaks: %.2f TB/s memory, %.0f TFLOP/s dense fp16/bf16\n",
              dev.memory_bandwidth_bytes_per_s / 1e12, dev.peak_tensor_flops / 1e12);
  std::printf("%d warm-up + %d timed iterations, per forward pass: median of samples of %d%s\n\n",
              warmup, iters, std::max(1, per_sample), graph ? ", CUDA graph" : "");

  nlohmann::json results = nlohmann::json::array();
  std::printf("%-12s %-16s %4s %10s %10s %10s %8s %8s %9s %9s %s\n", "config", "variant", "krn",
              "floor us", "median us", "min us", "TFLOP/s", "GB/s", "host us", "rel err", "check");
  int failures = 0;
  for (const auto& c : configs) {
    if (copy_ceiling) {
      try {
        const double ceiling_us = copy_us(c, dev, warmup, iters, per_sample);
        const auto bytes = static_cast<double>(io_bytes(c));
        std::printf("%-12s %-16s %4d %10.1f %10.1f %10s %8s %8.0f\n",
                    c.name.empty() ? "custom" : c.name.c_str(), "d2d copy", 1,
                    bytes / dev.memory_bandwidth_bytes_per_s * 1e6, ceiling_us, "-", "-",
                    bytes / ceiling_us / 1e3);
        results.push_back({{"config", nlohmann::json::parse(fk::to_json(c))},
                           {"variant", "d2d-copy"},
                           {"median_us", ceiling_us},
                           {"bytes", bytes},
                           {"floor_us", bytes / dev.memory_bandwidth_bytes_per_s * 1e6}});
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
      }
    }
    std::vector<fk::Variant> variants;
    if (variant_names.empty()) {
      variants = fk::all_variants();
    } else {
      for (const auto& n : variant_names) variants.push_back(fk::parse_variant(n));
    }
    for (auto v : variants) {
      if (!fk::supports(c, v)) continue;
      fk::RunOptions o;
      o.warmup_iterations = warmup;
      o.timed_iterations = iters;
      o.passes_per_sample = per_sample;
      o.use_graph = graph;
      o.input_sets = input_sets;
      o.gated_path = path;
      o.nvtx = false;
      o.check = !no_check;
      o.check_rows = check_rows;
      if (v == fk::Variant::kGatedGemm) o.pin_kernels = pin_kernels;
      const fk::RunResult r = fk::run(c, v, o);
      const std::string label = c.name.empty() ? "custom" : c.name;
      if (!r.ok) {
        std::printf("%-12s %-16s failed: %s\n", label.c_str(),
                    std::string(fk::to_string(v)).c_str(), r.error.c_str());
        ++failures;
        continue;
      }
      double host_us = 0;
      if (!no_host) {
        try {
          host_us = host_us_per_forward(c, v, path, host_iters);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "host timing failed: %s\n", e.what());
        }
      }
      const double t = r.median_ms * 1e-3;
      const double floor_s = std::max(r.plan.flops() / dev.peak_tensor_flops,
                                      r.plan.min_bytes() / dev.memory_bandwidth_bytes_per_s);
      if (!no_check && !r.correctness.passed) ++failures;
      std::printf("%-12s %-16s %4zu %10.1f %10.1f %10.1f %8.1f %8.0f %9.2f %9.2e %s\n",
                  label.c_str(), std::string(fk::to_string(v)).c_str(), r.plan.launches.size(),
                  floor_s * 1e6, r.median_ms * 1e3, r.min_ms * 1e3, r.plan.flops() / t / 1e12,
                  r.plan.min_bytes() / t / 1e9, host_us, r.correctness.rel_error,
                  no_check               ? "-"
                  : r.correctness.passed ? "ok"
                                         : "FAIL");
      results.push_back({{"config", nlohmann::json::parse(fk::to_json(c))},
                         {"variant", std::string(fk::to_string(v))},
                         {"kernels", r.plan.launches.size()},
                         {"kernel_path", r.kernel_path},
                         {"kernel_choices", r.kernel_choices},
                         {"median_us", r.median_ms * 1e3},
                         {"min_us", r.min_ms * 1e3},
                         {"floor_us", floor_s * 1e6},
                         {"host_us", host_us},
                         {"input_sets", r.input_sets},
                         {"rel_error", r.correctness.rel_error},
                         {"checked", r.correctness.checked},
                         {"passed", no_check || r.correctness.passed}});
    }
  }
  if (!json_out.empty()) {
    std::ofstream(json_out) << results.dump(1) << "\n";
  }
  return failures ? 1 : 0;
}
