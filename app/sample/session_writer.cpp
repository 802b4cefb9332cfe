#include "session_writer.h"

#include <vector>

namespace fusionscope::sample {

namespace fs = std::filesystem;
using namespace storage;

namespace {

// Copies a run's records into the store, re-interning its strings into the session's table.
void write_run(SessionStore& store, const RunData& run) {
  std::vector<StringId> id(run.strings.size(), kNoString);
  for (size_t i = 1; i < run.strings.size(); ++i) id[i] = store.intern(run.strings[i]);
  auto map = [&](StringId s) { return s < id.size() ? id[s] : kNoString; };

  const int64_t run_id = store.add_run(run.info);
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
  if (!kernels.empty()) store.insert_kernels(run_id, kernels);
  if (!api.empty()) store.insert_api_calls(run_id, api);
  if (!ranges.empty()) store.insert_ranges(run_id, ranges);
  if (!run.memops.empty()) store.insert_memops(run_id, run.memops);
  if (!metrics.empty()) store.insert_kernel_metrics(run_id, metrics);
  if (!samples.empty()) store.insert_samples(run_id, samples);
}

}  // namespace

void write_session(const SampleSession& sample, const fs::path& path) {
  SessionStore store = SessionStore::create(path, sample.info);
  for (const RunData& run : sample.runs) write_run(store, run);
}

}  // namespace fusionscope::sample
