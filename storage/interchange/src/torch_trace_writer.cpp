#include <vector>

#include "fusionscope/interchange/torch_trace_import.h"
#include "imported_run_info.h"

namespace fusionscope::interchange {

int64_t write_torch_trace(storage::SessionStore& store, const TorchTrace& trace,
                          const WriteOptions& options) {
  // Fill the session's machine description only where it has none.
  storage::SessionInfo session = store.session();
  if (session.gpu_name.empty() && !trace.session.gpu_name.empty()) {
    session.gpu_name = trace.session.gpu_name;
    session.cc_major = trace.session.cc_major;
    session.cc_minor = trace.session.cc_minor;
    session.sm_count = trace.session.sm_count;
    if (session.driver_version.empty()) session.driver_version = trace.session.driver_version;
    if (session.cuda_version.empty()) session.cuda_version = trace.session.cuda_version;
    if (session.cupti_version.empty()) session.cupti_version = trace.session.cupti_version;
    store.update_session(session);
  }

  const int64_t run_id = store.add_run(detail::imported_run_info(trace, options));
  try {
    std::vector<storage::StringId> ids(trace.strings.size(), storage::kNoString);
    for (size_t i = 1; i < trace.strings.size(); ++i) ids[i] = store.intern(trace.strings[i]);
    auto remap = [&ids](storage::StringId local) {
      return local < ids.size() ? ids[local] : storage::kNoString;
    };
    std::vector<storage::KernelRecord> kernels = trace.kernels;
    for (auto& k : kernels) {
      k.name = remap(k.name);
      k.op = remap(k.op);
    }
    std::vector<storage::ApiCallRecord> calls = trace.api_calls;
    for (auto& a : calls) a.name = remap(a.name);
    std::vector<storage::RangeRecord> ranges = trace.ranges;
    for (auto& r : ranges) r.name = remap(r.name);
    store.insert_kernels(run_id, kernels);
    store.insert_api_calls(run_id, calls);
    store.insert_ranges(run_id, ranges);
    store.insert_memops(run_id, trace.memops);
  } catch (...) {
    try {
      store.delete_run(run_id);
    } catch (...) {
      // The original failure is the one worth reporting.
    }
    throw;
  }
  return run_id;
}

}  // namespace fusionscope::interchange
