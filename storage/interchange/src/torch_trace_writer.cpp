#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "fusionscope/interchange/torch_trace_import.h"
#include "fusionscope/storage/run_writer.h"
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

  // Strings first (one transaction), then the run: on any failure the writer removes the run, so
  // a session never shows a half-imported trace as complete.
  std::vector<storage::StringId> ids(trace.strings.size(), storage::kNoString);
  if (trace.strings.size() > 1) {
    const std::vector<storage::StringId> interned =
        store.intern_all(std::span<const std::string>(trace.strings).subspan(1));
    std::copy(interned.begin(), interned.end(), ids.begin() + 1);
  }
  auto remap = [&ids](storage::StringId local) {
    return local < ids.size() ? ids[local] : storage::kNoString;
  };
  storage::RunWriter run(store, detail::imported_run_info(trace, options));
  std::vector<storage::KernelRecord> kernels = trace.kernels;
  for (auto& k : kernels) {
    k.name = remap(k.name);
    k.op = remap(k.op);
  }
  std::vector<storage::ApiCallRecord> calls = trace.api_calls;
  for (auto& a : calls) a.name = remap(a.name);
  std::vector<storage::RangeRecord> ranges = trace.ranges;
  for (auto& r : ranges) r.name = remap(r.name);
  run.add_kernels(kernels);
  run.add_api_calls(calls);
  run.add_ranges(ranges);
  run.add_memops(trace.memops);
  run.commit();
  const int64_t run_id = run.id();
  return run_id;
}

}  // namespace fusionscope::interchange
