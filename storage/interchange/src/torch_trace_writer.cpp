#include <utility>
#include <vector>

#include "fusionscope/interchange/torch_trace_import.h"
#include "imported_run_info.h"
#include "trace_run_writer.h"

namespace fusionscope::interchange {

int64_t write_torch_trace(storage::SessionStore& store, const TorchTrace& trace,
                          const WriteOptions& options, const ImportOptions& import) {
  // The whole trace as one last batch; the writer publishes the run whole or not at all.
  detail::RecordBatch all;
  all.first_string = 1;
  all.strings.assign(trace.strings.begin() + (trace.strings.empty() ? 0 : 1), trace.strings.end());
  all.kernels = trace.kernels;
  all.api_calls = trace.api_calls;
  all.ranges = trace.ranges;
  all.memops = trace.memops;
  const uint64_t total = all.size();
  detail::TraceRunWriter writer(store, detail::imported_run_info(trace, options), import);
  return writer.finish(std::move(all), detail::run_ending(trace, options), total);
}

}  // namespace fusionscope::interchange
