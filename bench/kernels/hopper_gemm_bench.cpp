// The Hopper GEMM alone, in each schedule / cluster / tile-order configuration, next to cuBLASLt
// on the same shapes: TFLOP/s per kernel (CUDA-event medians, inputs rotated past the L2) and
// each configuration's error against the fp32 reference (fresh random inputs, output poisoned
// with NaN before the checked run).
//
//   hopper_gemm_bench --shape gated:8192:4096:14336:bf16:silu --shape plain:8192:14336:4096:bf16
//   hopper_gemm_bench --odd   # every configuration on small shapes that fit no tile (sanitizers)
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "buffers.h"
#include "cuda_check.h"
#include "device_buffer.h"
#include "hopper_gemm.h"
#include "kernel_pins.h"
#include "lt_gemm.h"
#include "pointwise.h"
#include "reference.h"

namespace fk = fusionscope::kernels;
namespace fd = fusionscope::kernels::detail;

namespace {

struct Shape {
  bool gated = true;
  uint64_t rows = 0, k = 0, n = 0;  // gated: n = hidden (the GEMM is 2 * hidden wide)
  fk::DType dtype = fk::DType::kBf16;
  fk::Activation act = fk::Activation::kNone;
  std::string text;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) out.push_back(item);
  return out;
}

// gated:ROWS:DIM:HIDDEN:DTYPE:ACT or plain:ROWS:K:N:DTYPE. Throws with the reason for a shape
// the kernels do not take (the gated weight is interleaved in groups of 8 rows before any GEMM
// could refuse it).
Shape parse_shape(const std::string& s) {
  const auto f = split(s, ':');
  if (f.size() < 5 || (f[0] != "gated" && f[0] != "plain"))
    throw std::runtime_error("bad shape '" + s +
                             "': gated:ROWS:DIM:HIDDEN:DTYPE:ACT or plain:ROWS:K:N:DTYPE");
  auto size = [&](const std::string& v) {
    if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 10)
      throw std::runtime_error("bad shape '" + s + "': '" + v + "' is not a size");
    return std::stoull(v);
  };
  Shape sh;
  sh.text = s;
  sh.gated = f[0] == "gated";
  sh.rows = size(f[1]);
  sh.k = size(f[2]);
  sh.n = size(f[3]);
  if (sh.rows == 0 || sh.k == 0 || sh.n == 0 || sh.k % 8 || sh.n % 8)
    throw std::runtime_error("bad shape '" + s +
                             "': rows, k and n must be positive, k and n multiples of 8");
  sh.dtype = fk::parse_dtype(f[4]);
  if (sh.gated) sh.act = fk::parse_activation(f.size() > 5 ? f[5] : "gelu-tanh");
  return sh;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

template <typename F>
double time_us(F&& f, int sets, int warmup, int iters, cudaStream_t s) {
  for (int i = 0; i < warmup; ++i) f(i % sets);
  std::vector<cudaEvent_t> ev(static_cast<size_t>(iters) + 1);
  for (auto& e : ev) FS_CUDA(cudaEventCreate(&e));
  FS_CUDA(cudaEventRecord(ev[0], s));
  for (int i = 0; i < iters; ++i) {
    f(i % sets);
    FS_CUDA(cudaEventRecord(ev[static_cast<size_t>(i) + 1], s));
  }
  FS_CUDA(cudaStreamSynchronize(s));
  std::vector<double> t;
  for (int i = 0; i < iters; ++i) {
    float ms = 0;
    FS_CUDA(cudaEventElapsedTime(&ms, ev[static_cast<size_t>(i)], ev[static_cast<size_t>(i) + 1]));
    t.push_back(ms * 1e3);
  }
  for (auto& e : ev) cudaEventDestroy(e);
  return median(t);
}

struct Row {
  std::string shape, what;
  double us = 0, tflops = 0, rel = -1;
  double best_us = 0, worst_us = 0;  // over the rounds
  bool ok = true;
};

// One thing timed on a shape: a configuration of ours or a cuBLASLt GEMM, with its samples.
struct Entry {
  Row row;
  double flops = 0;
  std::function<void(int)> launch;  // on input copy i
  std::vector<double> samples;      // median of each round, us
};

class Case {
 public:
  Case(const Shape& sh, uint64_t seed, int sets, cudaStream_t s)
      : sh_(sh), sets_(sets), stream_(s) {
    elem_ = 2;
    wide_ = sh.gated ? 2 * sh.n : sh.n;
    out_cols_ = sh.n;
    x_ = fd::DeviceBuffer(sh.rows * sh.k * elem_ * static_cast<uint64_t>(sets));
    out_ = fd::DeviceBuffer(sh.rows * out_cols_ * elem_);
    scratch_ = fd::DeviceBuffer(sh.rows * wide_ * elem_);
    const float xb = 1.f, wb = std::sqrt(6.f / static_cast<float>(sh.k));
    for (int i = 0; i < sets; ++i)
      fd::launch_fill_uniform(x(i), sh.rows * sh.k, sh.dtype, -xb, xb, seed, 1000 + i, s);
    if (sh.gated) {
      wg_ = fd::DeviceBuffer(sh.n * sh.k * elem_);
      wu_ = fd::DeviceBuffer(sh.n * sh.k * elem_);
      w_ = fd::DeviceBuffer(wide_ * sh.k * elem_);
      fd::launch_fill_uniform(wg_.get(), sh.n * sh.k, sh.dtype, -wb, wb, seed, 10, s);
      fd::launch_fill_uniform(wu_.get(), sh.n * sh.k, sh.dtype, -wb, wb, seed, 11, s);
      fd::launch_interleave_gate_up(wg_.get(), wu_.get(), w_.get(), sh.n, sh.k, sh.act, sh.dtype,
                                    s);
    } else {
      w_ = fd::DeviceBuffer(sh.n * sh.k * elem_);
      fd::launch_fill_uniform(w_.get(), sh.n * sh.k, sh.dtype, -wb, wb, seed, 12, s);
    }
    FS_CUDA(cudaStreamSynchronize(s));
  }
  void* x(int i) const {
    return static_cast<uint8_t*>(x_.get()) + static_cast<uint64_t>(i) * sh_.rows * sh_.k * elem_;
  }
  const void* w() const { return w_.get(); }
  void* out() const { return out_.get(); }
  void* scratch() const { return scratch_.get(); }
  uint64_t wide() const { return wide_; }
  double flops() const { return 2.0 * static_cast<double>(sh_.rows * wide_ * sh_.k); }

  // Relative error of out (from input copy 0) on rows [r0, r0 + nr) against the fp32 reference.
  fd::ErrorSums check_range(uint64_t r0, uint64_t nr) {
    fd::DeviceBuffer ref(nr * out_cols_ * 4), ref2(sh_.gated ? nr * out_cols_ * 4 : 0);
    fd::DeviceBuffer partials(fd::kCheckBlocks * 5 * sizeof(double));
    const uint8_t* xs = static_cast<const uint8_t*>(x(0)) + r0 * sh_.k * elem_;
    if (sh_.gated) {
      fd::launch_reference_linear(xs, sh_.dtype, wg_.get(), nullptr, sh_.dtype, ref.as<float>(), nr,
                                  sh_.n, sh_.k, fk::Activation::kNone, stream_);
      fd::launch_reference_linear(xs, sh_.dtype, wu_.get(), nullptr, sh_.dtype, ref2.as<float>(),
                                  nr, sh_.n, sh_.k, fk::Activation::kNone, stream_);
      fd::launch_reference_act_mul(ref.as<float>(), ref2.as<float>(), nr * sh_.n, sh_.act, stream_);
    } else {
      fd::launch_reference_linear(xs, sh_.dtype, w_.get(), nullptr, sh_.dtype, ref.as<float>(), nr,
                                  sh_.n, sh_.k, fk::Activation::kNone, stream_);
    }
    const uint8_t* o = static_cast<const uint8_t*>(out_.get()) + r0 * out_cols_ * elem_;
    fd::launch_compare(o, sh_.dtype, ref.as<float>(), nr * out_cols_, partials.as<double>(),
                       stream_);
    return fd::finish_compare(partials.as<double>(), stream_);
  }

  // Checks the first and last `check_rows` rows (all when 0 or when they overlap).
  double check(uint64_t check_rows, uint64_t& non_finite) {
    std::vector<std::pair<uint64_t, uint64_t>> parts;
    if (check_rows == 0 || 2 * check_rows >= sh_.rows) {
      parts.push_back({0, sh_.rows});
    } else {
      parts.push_back({0, check_rows});
      parts.push_back({sh_.rows - check_rows, check_rows});
    }
    double err = 0, ref = 0;
    non_finite = 0;
    for (auto [r0, nr] : parts) {
      const fd::ErrorSums e = check_range(r0, nr);
      err += e.sum_sq_error;
      ref += e.sum_sq_reference;
      non_finite += e.non_finite;
    }
    return ref > 0 ? std::sqrt(err / ref) : std::sqrt(err);
  }

 private:
  Shape sh_;
  int sets_;
  cudaStream_t stream_;
  uint64_t elem_ = 2, wide_ = 0, out_cols_ = 0;
  fd::DeviceBuffer x_, w_, wg_, wu_, out_, scratch_;
};

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"The Hopper GEMM's configurations next to cuBLASLt: TFLOP/s and error"};
  std::vector<std::string> shapes, configs{"coop:1:16", "coop:2:16", "pp:1:16", "pp:2:16"};
  int warmup = 10, iters = 50, sets = 0, rounds = 1;
  uint64_t check_rows = 512, seed = 0x5eed;
  bool odd = false, no_cublas = false;
  std::string json_out;
  app.add_option("--shape", shapes, "gated:ROWS:DIM:HIDDEN:DTYPE:ACT or plain:ROWS:K:N:DTYPE");
  app.add_option("--config", configs,
                 "SCHEDULE:CLUSTER[xN]:GROUP[:ORDER[:HINTS[:STAGGER]]], as kernel pins take it");
  app.add_option("--warmup", warmup);
  app.add_option("--iters", iters);
  app.add_option("--rounds", rounds,
                 "rounds over every configuration and cuBLASLt in turn (the GPU's clock moves "
                 "with its power draw, so each is timed in every round; median of the rounds)");
  app.add_option("--sets", sets, "rotating input copies (0: enough to pass the L2)");
  app.add_option("--check-rows", check_rows, "rows checked at each end (0: all)");
  app.add_option("--seed", seed);
  app.add_flag("--odd", odd, "small shapes that fit no tile, every dtype and activation");
  app.add_flag("--no-cublas", no_cublas);
  app.add_option("--json", json_out);
  CLI11_PARSE(app, argc, argv);

  if (odd) {
    for (const char* s :
         {"gated:300:200:328:bf16:gelu-tanh", "gated:300:200:328:fp16:silu",
          "gated:136:64:136:bf16:relu", "gated:1000:776:3000:bf16:silu", "plain:300:328:200:fp16",
          "plain:1000:3000:776:bf16", "plain:77:64:520:bf16"})
      shapes.push_back(s);
    iters = std::min(iters, 2);
    warmup = std::min(warmup, 1);
    check_rows = 0;
  }
  // Every shape checked before the GPU is touched.
  std::vector<Shape> parsed;
  try {
    for (const auto& text : shapes) parsed.push_back(parse_shape(text));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  int device = 0;
  cudaDeviceProp prop{};
  FS_CUDA(cudaGetDeviceProperties(&prop, device));
  std::printf("%s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount,
              prop.l2CacheSize >> 20);
  if (!fd::hopper_gemm_available(device)) {
    std::printf("no sm_90a device: nothing to measure\n");
    return 1;
  }
  cudaStream_t s = nullptr;
  FS_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cublasLtHandle_t lt = nullptr;
  FS_CUBLAS(cublasLtCreate(&lt));
  fd::DeviceBuffer ws(fd::kCublasWorkspaceBytes);

  std::vector<Row> rows;
  int failures = 0;
  for (const Shape& sh : parsed) {
    const std::string& text = sh.text;
    const double x_bytes = static_cast<double>(sh.rows * sh.k * 2);
    int n_sets =
        sets > 0
            ? sets
            : static_cast<int>(std::clamp(std::ceil(2.0 * prop.l2CacheSize / x_bytes), 1.0, 8.0));
    Case cs(sh, seed, n_sets, s);
    std::vector<Entry> entries;
    std::vector<std::unique_ptr<fd::HopperGemm>> gemms;
    std::vector<std::unique_ptr<fd::LtGemm>> lts;
    for (const auto& ctext : configs) {
      Entry e;
      e.row = Row{text, ctext};
      e.flops = cs.flops();
      try {
        const fd::HopperGemmConfig cfg = fd::parse_hopper_config(ctext);
        auto g =
            std::make_unique<fd::HopperGemm>(sh.dtype, sh.gated ? sh.act : fk::Activation::kNone,
                                             sh.rows, cs.wide(), sh.k, cs.w(), cfg, device);
        FS_CUDA(cudaMemsetAsync(cs.out(), 0xFF, sh.rows * sh.n * 2, s));
        g->run(cs.x(0), cs.out(), s);
        FS_CUDA(cudaStreamSynchronize(s));
        uint64_t nonfinite = 0;
        e.row.rel = cs.check(check_rows, nonfinite);
        const double tol = fk::tolerance(sh.dtype);
        e.row.ok = nonfinite == 0 && std::isfinite(e.row.rel) && e.row.rel <= tol;
        e.row.what = ctext + " (grid " + std::to_string(g->grid()) + ")";
        fd::HopperGemm* gp = g.get();
        e.launch = [gp, &cs, s](int i) { gp->run(cs.x(i), cs.out(), s); };
        gemms.push_back(std::move(g));
      } catch (const std::exception& ex) {
        std::printf("%s %s: %s\n", text.c_str(), ctext.c_str(), ex.what());
        e.row.ok = false;
        FS_CUDA(cudaGetLastError());
      }
      if (!e.row.ok) ++failures;
      entries.push_back(std::move(e));
    }
    if (!no_cublas) {
      // cuBLASLt: the separate gate and up GEMMs (as eager runs them) and one GEMM as wide as ours.
      auto add = [&](const std::string& what, uint64_t n, double flops, int times) {
        lts.push_back(std::make_unique<fd::LtGemm>(lt, sh.dtype, sh.rows, n, sh.k, false,
                                                   fk::Activation::kNone, ws.get(),
                                                   fd::kCublasWorkspaceBytes));
        fd::LtGemm* g = lts.back().get();
        Entry e;
        e.row = Row{text, what};
        e.flops = flops;
        e.launch = [g, &cs, s, times](int i) {
          for (int t = 0; t < times; ++t) g->run(cs.x(i), cs.w(), nullptr, cs.scratch(), s);
        };
        entries.push_back(std::move(e));
      };
      if (sh.gated) add("cublasLt gate+up (2 GEMMs)", sh.n, cs.flops(), 2);
      add(sh.gated ? "cublasLt one 2h-wide GEMM" : "cublasLt", cs.wide(), cs.flops(), 1);
    }
    // Every entry once per round, starting one further along each round.
    const size_t n_entries = entries.size();
    for (int round = 0; round < rounds; ++round)
      for (size_t j = 0; j < n_entries; ++j) {
        Entry& e = entries[(j + static_cast<size_t>(round)) % n_entries];
        if (e.launch) e.samples.push_back(time_us(e.launch, n_sets, warmup, iters, s));
      }
    for (auto& e : entries) {
      Row& r = e.row;
      if (!e.samples.empty()) {
        r.us = median(e.samples);
        r.best_us = *std::min_element(e.samples.begin(), e.samples.end());
        r.worst_us = *std::max_element(e.samples.begin(), e.samples.end());
        r.tflops = e.flops / (r.us * 1e-6) / 1e12;
      }
      const double best_tflops = r.best_us > 0 ? e.flops / (r.best_us * 1e-6) / 1e12 : 0;
      std::printf("%-34s %-34s %9.1f us %7.1f TFLOP/s (best %7.1f, spread %4.1f%%)",
                  r.shape.c_str(), r.what.c_str(), r.us, r.tflops, best_tflops,
                  r.best_us > 0 ? 100.0 * (r.worst_us - r.best_us) / r.best_us : 0.0);
      if (r.rel >= 0) std::printf("  rel %.2e %s", r.rel, r.ok ? "ok" : "FAIL");
      std::printf("\n");
      rows.push_back(r);
    }
    std::fflush(stdout);
  }
  std::printf("\n%d failures\n", failures);
  if (!json_out.empty()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : rows)
      j.push_back({{"shape", r.shape},
                   {"what", r.what},
                   {"us", r.us},
                   {"tflops", r.tflops},
                   {"best_us", r.best_us},
                   {"worst_us", r.worst_us},
                   {"rel", r.rel},
                   {"ok", r.ok}});
    std::ofstream(json_out) << j.dump(1) << "\n";
  }
  cublasLtDestroy(lt);
  cudaStreamDestroy(s);
  return failures ? 1 : 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
