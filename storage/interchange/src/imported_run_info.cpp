#include "imported_run_info.h"

#include <nlohmann/json.hpp>

#include "trace_run_writer.h"

namespace fusionscope::interchange::detail {

storage::RunInfo imported_run_info(const TorchTrace& trace, const WriteOptions& options) {
  storage::RunInfo run;
  run.name = options.run_name.empty() ? trace.source_name : options.run_name;
  run.kind = "imported";
  run.variant = options.variant.empty() ? trace.variant : options.variant;
  run.dtype = trace.dtype;
  run.warmup = trace.warmup_steps;
  run.iterations = trace.profiler_steps - trace.warmup_steps;
  run.cuda_graph = run.variant == "torch-cuda-graph";
  run.wall_ns = trace.steps_wall_ns;
  run.status = storage::RunStatus::kOk;
  run.created_utc = trace.session.created_utc;  // when the trace was taken, where it says
  if (trace.stats.skipped > 0) {
    run.trace_status = "partial: " + std::to_string(trace.stats.skipped) +
                       " malformed events were skipped on import";
  }
  run.dropped_records = trace.stats.skipped;
  nlohmann::json config = {{"source", "pytorch-profiler"},
                           {"trace", trace.source_name},
                           {"profiler_steps", trace.profiler_steps}};
  if (!trace.trace_id.empty()) config["trace_id"] = trace.trace_id;
  run.config_json = config.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return run;
}

RunEnding run_ending(const TorchTrace& trace, const WriteOptions& options) {
  RunEnding end;
  end.info = imported_run_info(trace, options);
  end.session = trace.session;
  for (const auto& p : trace.processes) end.processes.emplace_back(p.pid, trace.str(p.name));
  end.threads = trace.threads;
  end.extras = trace.extras;
  return end;
}

}  // namespace fusionscope::interchange::detail
