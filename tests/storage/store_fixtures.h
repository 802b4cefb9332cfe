// Records and sessions that the storage tests build on.
#pragma once

#include <vector>

#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/session_store.h"

namespace fusionscope::storage::testing {

SessionInfo sample_session();
RunInfo sample_run(const char* name = "geglu / eager");

// One of every record type, with every field set to a distinct value, using strings interned
// into `store`.
struct SampleRecords {
  std::vector<KernelRecord> kernels;
  std::vector<ApiCallRecord> api_calls;
  std::vector<RangeRecord> ranges;
  std::vector<MemopRecord> memops;
  std::vector<KernelMetricRecord> kernel_metrics;
  std::vector<SampleRecord> samples;
};
SampleRecords sample_records(SessionStore& store, int64_t base_ns = 1'000'000);
// Adds every record through `run` (and names process 4242 "python3 train.py" and two of its
// threads, and keeps two texts with the run).
void insert_all(RunWriter& run, const SampleRecords& r);
// A complete run: begun, filled with `r`, committed. Returns its id.
int64_t add_run(SessionStore& store, const RunInfo& info, const SampleRecords& r = {});

}  // namespace fusionscope::storage::testing
