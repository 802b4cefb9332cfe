#include "session_writer.h"

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "fusionscope/storage/run_writer.h"

namespace fusionscope::sample {

namespace fs = std::filesystem;
using namespace storage;

namespace {

// Copies a run's records into the store, re-interning its strings into the session's table.
void write_run(SessionStore& store, const RunData& run) {
  std::vector<StringId> id(run.strings.size(), kNoString);
  if (run.strings.size() > 1) {
    const std::vector<StringId> interned =
        store.intern_all(std::span<const std::string>(run.strings).subspan(1));
    std::copy(interned.begin(), interned.end(), id.begin() + 1);
  }
  auto map = [&](StringId s) { return s < id.size() ? id[s] : kNoString; };

  RunWriter writer(store, run.info);
  std::vector<KernelRecord> kernels = run.kernels;
  for (auto& k : kernels) {
    k.name = map(k.name);
    k.op = map(k.op);
  }
  std::vector<ApiCallRecord> api = run.api_calls;
  for (auto& a : api) a.name = map(a.name);
  std::vector<RangeRecord> ranges = run.ranges;
  for (auto& r : ranges) r.name = map(r.name);
  std::vector<KernelMetricRecord> metrics = run.kernel_metrics;
  for (auto& m : metrics) {
    m.name = map(m.name);
    m.unit = map(m.unit);
  }
  std::vector<SampleRecord> samples = run.samples;
  for (auto& s : samples) s.metric = map(s.metric);
  writer.add_kernels(kernels);
  writer.add_api_calls(api);
  writer.add_ranges(ranges);
  writer.add_memops(run.memops);
  writer.add_kernel_metrics(metrics);
  writer.add_samples(samples);
  for (const ProcessRecord& p : run.processes) writer.add_process(p.pid, run.str(p.name));
  writer.commit();
}

}  // namespace

void write_session(const SampleSession& sample, const fs::path& path) {
  SessionStore store = SessionStore::create(path, sample.info);
  for (const RunData& run : sample.runs) write_run(store, run);
}

}  // namespace fusionscope::sample
