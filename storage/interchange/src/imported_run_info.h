// The RunInfo of an imported trace: kind "imported", the variant and dtype read from the trace,
// one iteration per profiler step, and the source described in config_json.
#pragma once

#include "fusionscope/interchange/torch_trace_import.h"

namespace fusionscope::interchange::detail {

storage::RunInfo imported_run_info(const TorchTrace& trace, const WriteOptions& options);

}  // namespace fusionscope::interchange::detail
