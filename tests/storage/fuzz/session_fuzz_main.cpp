// The session fuzz target under the bounded mutation fuzzer (tests/common/fuzz_mutator.h): seeds
// are sessions written here through the store (a fresh one, one with runs of every record type and
// properties, an older-version file), so no binary corpus lives in the repository.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/session_store.h"
#include "fuzz_mutator.h"

namespace {

namespace fs = std::filesystem;
using namespace fusionscope::storage;

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> seed_sessions() {
  const fs::path dir =
      fs::temp_directory_path() / ("fusionscope-session-seeds-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<std::string> out;
  {
    SessionInfo info;
    info.name = "empty";
    SessionStore::create(dir / "empty.fsdb", info);
  }
  out.push_back(bytes_of(dir / "empty.fsdb"));
  {
    SessionInfo info;
    info.name = "seed";
    info.gpu_name = "NVIDIA H100 80GB HBM3";
    SessionStore store = SessionStore::create(dir / "runs.fsdb", info);
    store.set_property("lab.sweep.1", R"({"size":"hidden"})");
    for (int r = 0; r < 2; ++r) {
      RunInfo ri;
      ri.name = "geglu / eager " + std::to_string(r);
      ri.status = RunStatus::kOk;
      RunWriter run(store, ri);
      std::vector<KernelRecord> ks(40);
      std::vector<ApiCallRecord> api(40);
      for (size_t i = 0; i < ks.size(); ++i) {
        ks[i].start_ns = static_cast<int64_t>(i) * 100;
        ks[i].end_ns = ks[i].start_ns + 60;
        ks[i].correlation_id = static_cast<uint32_t>(i + 1);
        ks[i].name = store.intern("kernel " + std::to_string(i % 5));
        ks[i].pid = 4242;
        api[i].start_ns = ks[i].start_ns - 50;
        api[i].end_ns = api[i].start_ns + 10;
        api[i].correlation_id = ks[i].correlation_id;
        api[i].name = store.intern("cudaLaunchKernel");
        api[i].thread_id = 7;
      }
      RangeRecord rg;
      rg.end_ns = 4000;
      rg.name = store.intern("iteration 0");
      MemopRecord m;
      m.start_ns = 10;
      m.end_ns = 20;
      m.bytes = 4096;
      KernelMetricRecord km;
      km.correlation_id = 1;
      km.name = store.intern("dram__bytes_read.sum");
      km.value = 1e6;
      SampleRecord s;
      s.t_ns = 50;
      s.metric = store.intern("dram throughput");
      s.value = 50.5;
      run.add_kernels(ks);
      run.add_api_calls(api);
      run.add_ranges(std::span(&rg, 1));
      run.add_memops(std::span(&m, 1));
      run.add_kernel_metrics(std::span(&km, 1));
      run.add_samples(std::span(&s, 1));
      run.add_process(4242, "python3 train.py");
      run.commit();
    }
  }
  out.push_back(bytes_of(dir / "runs.fsdb"));
  fs::remove_all(dir);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  fusionscope::testing::FuzzOptions options;
  options.name = "session_fuzz";
  options.seconds = 20;
  options.max_len = 1 << 19;
  // Tokens of the schema and of the records digest, for mutations that keep the file's shape.
  options.dictionary = {"FSDB", "SQLite format 3", "kernels=", " hash=", "runs", "strings"};
  return fusionscope::testing::run_mutation_fuzzer(argc, argv, options, seed_sessions());
}
