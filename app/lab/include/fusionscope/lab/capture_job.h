// A capture job: configurations x variants to run one after another under capture into a
// session, and what the lab reports while it works and when it is done. No UI, no CUDA headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fusionscope/kernels/config.h"
#include "fusionscope/kernels/runner.h"
#include "fusionscope/profiler/tracer.h"
#include "fusionscope/storage/session_store.h"

namespace fusionscope::lab {

struct RunSpec {
  kernels::MlpConfig config;
  kernels::Variant variant = kernels::Variant::kEager;
  int round = 0;  // of a job run in rounds (in_rounds): 1, 2, ...; 0 otherwise
  friend bool operator==(const RunSpec&, const RunSpec&) = default;
};

struct CaptureJob {
  std::vector<RunSpec> runs;
  int warmup = 5;
  int iterations = 20;
  bool cuda_graph = false;
  // Compare each run's output with the fp32 reference. Off by default: the reference's own
  // kernels would then sit in every trace.
  bool verify = false;
  int device = 0;
  // Hardware counters (hardware_counters.h, docs/bandwidth.md): a counters pass per run after its
  // timed pass, storing DRAM bytes, FLOPs and activity per kernel of the first timed iteration;
  // and PM sampling of DRAM throughput and SM/tensor activity during the run, every
  // pm_interval_ns. Neither touches the timed iterations.
  bool counters = false;
  bool pm_sampling = false;
  uint64_t pm_interval_ns = 10'000;
};

// Every configuration in every variant, in that order. A variant that does not apply to a
// configuration is left out; `skipped` (when given) receives "config / variant: why".
std::vector<RunSpec> expand(const std::vector<kernels::MlpConfig>& configs,
                            const std::vector<kernels::Variant>& variants,
                            std::vector<std::string>* skipped = nullptr);

// The runs `rounds` times over, each round starting one place further along the list, as
// scripts/bench_vs_torch.py times its contenders: on a GPU whose clock follows its power draw, a
// run's time depends on what ran before it, and in rounds every run follows each of the others
// once, so two variants are compared over rounds rather than by one run each. rounds <= 1: the
// runs as given.
std::vector<RunSpec> in_rounds(const std::vector<RunSpec>& runs, int rounds);

// The run's name in the session: "<configuration name> / <variant>", with " (round N)" for a run
// of a job in rounds (the lab adds " (graph)" for runs replayed from a CUDA graph).
std::string run_name(const RunSpec& spec);

struct Progress {
  // kCounters (after kFinishing, before kFinished): the run's counters pass, when asked for.
  enum class Stage : uint8_t {
    kStarting,
    kSetup,
    kWarmup,
    kTimed,
    kFinishing,
    kFinished,
    kCounters
  };
  Stage stage = Stage::kStarting;
  std::size_t run_index = 0;  // 0-based position in the job
  std::size_t run_count = 0;
  std::string run_name;
  int64_t run_id = 0;
  int iteration = 0;  // kWarmup / kTimed: within the phase
  int total = 0;
  // kFinished only:
  storage::RunStatus status = storage::RunStatus::kRunning;
  std::string message;             // why the run failed, or what is missing from its trace
  double median_ms = 0;            // CUDA-event time per timed iteration
  std::size_t kernels_traced = 0;  // kernels in the run's trace
  std::string counters;            // what the counters pass and PM sampling stored, in words
};
using ProgressCallback = std::function<void(const Progress&)>;

// What happened to one run.
struct RunOutcome {
  int64_t run_id = 0;
  storage::RunStatus status = storage::RunStatus::kPending;
  kernels::RunResult result;  // the runner's timing (CUDA events), plan and errors
  profiler::TraceOutcome trace;
  // Outcome of the counters pass and of PM sampling when the job asked for them: "ok: ..." or
  // why not (also stored as session properties, analysis/metrics_status.h). Empty otherwise.
  std::string kernel_counters;
  std::string pm_sampling;
};

struct JobResult {
  std::vector<int64_t> run_ids;  // every run added to the session, in job order
  std::vector<RunOutcome> runs;  // same order
  std::size_t ok = 0;
  std::size_t failed = 0;
  bool cancelled = false;
  // Set when the job ran without any trace (no GPU, another profiler attached...): why.
  std::string trace_unavailable;
};

}  // namespace fusionscope::lab
