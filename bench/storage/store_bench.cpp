// Session store throughput: ingest rate of synthetic kernel records and the time to load a
// large run into memory. Prints figures; run it on an idle machine.
//
//   store_bench [--records N] [--batch B] [--repeat R] [--dir PATH] [--shuffle] [--keep]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/session_store.h"

namespace fs = std::filesystem;
using namespace fusionscope::storage;

namespace {

struct Options {
  size_t records = 1'000'000;
  size_t batch = 10'000;  // about one CUPTI activity buffer's worth of kernels
  int repeat = 3;
  fs::path dir = fs::temp_directory_path();
  bool shuffle = false;  // batches arrive out of start order
  bool keep = false;     // leave the last session file behind for inspection
};

// Adds the options to `app`, filling `o`.
void add_options(CLI::App& app, Options& o) {
  app.add_option("--records", o.records, "Kernel records to write")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--batch", o.batch, "Records per batch (one transaction)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--repeat", o.repeat, "Sessions written; the figures are the best")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--dir", o.dir, "Where the session files go")->capture_default_str();
  app.add_flag("--shuffle", o.shuffle, "Batches arrive out of start order");
  app.add_flag("--keep", o.keep, "Leave the last session file behind");
}

// The reference GeGLU step's five kernels, repeated back to back on one stream like a capture.
std::vector<KernelRecord> synthetic_kernels(SessionStore& store, size_t n, bool shuffle) {
  const StringId names[] = {
      store.intern(
          "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1"),
      store.intern(
          "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1"),
      store.intern("void at::native::vectorized_elementwise_kernel<4, GeluCUDAKernelImpl>"),
      store.intern("void at::native::vectorized_elementwise_kernel<4, MulFunctor<c10::BFloat16>>"),
      store.intern("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x128x64_warpgroupsize1x1x1"),
  };
  const StringId op = store.intern("geglu");
  const int64_t durations[] = {61'000, 58'000, 21'000, 24'000, 59'000};
  std::vector<KernelRecord> out(n);
  int64_t t = 1'700'000'000'000'000'000;
  for (size_t i = 0; i < n; ++i) {
    KernelRecord& k = out[i];
    const size_t j = i % 5;
    k.start_ns = t;
    k.end_ns = t + durations[j];
    t = k.end_ns + 1'200;
    k.device = 0;
    k.stream = 7;
    k.correlation_id = static_cast<uint32_t>(i + 1);
    k.name = names[j];
    k.op = op;
    k.grid = {j == 2 || j == 3 ? 6144u : 132u, 1, 1};
    k.block = {j == 2 || j == 3 ? 128u : 384u, 1, 1};
    k.registers = j == 2 || j == 3 ? 32 : 168;
    k.dynamic_smem = j == 2 || j == 3 ? 0 : 232'448;
  }
  if (shuffle) std::shuffle(out.begin(), out.end(), std::mt19937(1));
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Process CPU time: on a busy machine it shows how much of the wall time was this program's.
double cpu_seconds() {
  return double(std::clock()) / CLOCKS_PER_SEC;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"store_bench: session store ingest rate and whole-run load time"};
  add_options(app, o);
  CLI11_PARSE(app, argc, argv);
  const fs::path path = o.dir / ("fusionscope-bench-" + std::to_string(::getpid()) + ".fsdb");
  std::printf("session store benchmark: %zu kernel records, batches of %zu%s, %d repeats\n",
              o.records, o.batch, o.shuffle ? " (shuffled)" : "", o.repeat);
  std::printf("file: %s\n", path.c_str());

  std::vector<double> insert_s, load_s;
  double insert_cpu = 0, load_cpu = 0;
  uintmax_t file_bytes = 0;
  try {
    for (int rep = 0; rep < o.repeat; ++rep) {
      fs::remove(path);
      int64_t run = 0;
      {
        SessionStore store = SessionStore::create(path, SessionInfo{});
        RunWriter writer(store, RunInfo{});
        run = writer.id();
        const std::vector<KernelRecord> kernels = synthetic_kernels(store, o.records, o.shuffle);
        const double c0 = cpu_seconds();
        const auto t0 = std::chrono::steady_clock::now();
        for (size_t i = 0; i < kernels.size(); i += o.batch)
          writer.add_kernels(std::span(kernels).subspan(i, std::min(o.batch, kernels.size() - i)));
        writer.commit();
        insert_s.push_back(seconds_since(t0));
        insert_cpu = cpu_seconds() - c0;
      }  // closing checkpoints the WAL into the file
      file_bytes = fs::file_size(path);
      {
        SessionStore store = SessionStore::open(path);
        const double c0 = cpu_seconds();
        const auto t0 = std::chrono::steady_clock::now();
        const RunData d = store.load_run(run);
        load_s.push_back(seconds_since(t0));
        load_cpu = cpu_seconds() - c0;
        if (d.kernels.size() != o.records) {
          std::fprintf(stderr, "loaded %zu kernels, expected %zu\n", d.kernels.size(), o.records);
          return 1;
        }
      }
      std::printf(
          "  repeat %d: insert %.3f s (%.0f records/s, %.3f s CPU), load %.3f s (%.3f s CPU)\n",
          rep + 1, insert_s.back(), double(o.records) / insert_s.back(), insert_cpu, load_s.back(),
          load_cpu);
    }
  } catch (const StoreError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    fs::remove(path);
    return 1;
  }
  if (!o.keep) fs::remove(path);
  std::sort(insert_s.begin(), insert_s.end());
  std::sort(load_s.begin(), load_s.end());
  const double insert_med = insert_s[insert_s.size() / 2];
  const double load_med = load_s[load_s.size() / 2];
  std::printf("insert rate (median): %.0f kernel records/s  (target >= 1000000)\n",
              double(o.records) / insert_med);
  std::printf("load time   (median): %.3f s for %zu kernels  (target <= 1 s for 1000000)\n",
              load_med, o.records);
  std::printf("file size: %.1f MB (%.1f bytes per kernel)\n", double(file_bytes) / 1e6,
              double(file_bytes) / double(o.records));
  return 0;
}
