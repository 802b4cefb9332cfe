// counters_tracer_coexistence: can the CUPTI activity tracer (the profiler's Tracer) and the
// counters (range profiler with kernel replay, PM sampling) work in one process, and in which
// arrangement? Each case launches three 64 MiB copy kernels and prints what the counters and the
// trace saw. docs/bandwidth.md records the answer measured on an H100.
#include <cstdio>
#include <span>
#include <string>

#include "fusionscope/counters/calibration.h"
#include "fusionscope/counters/kernel_counters.h"
#include "fusionscope/counters/metric_names.h"
#include "fusionscope/counters/pm_sampler.h"
#include "fusionscope/profiler/trace_sink.h"
#include "fusionscope/profiler/tracer.h"

namespace fc = fusionscope::counters;
namespace fp = fusionscope::profiler;
namespace st = fusionscope::storage;

namespace {

// Counts what the tracer delivers.
class CountingSink final : public fp::TraceSink {
 public:
  st::StringId intern(std::string_view) override { return 1; }
  void insert_kernels(std::span<const st::KernelRecord> r) override { kernels += r.size(); }
  void insert_api_calls(std::span<const st::ApiCallRecord> r) override { api_calls += r.size(); }
  void insert_ranges(std::span<const st::RangeRecord>) override {}
  void insert_memops(std::span<const st::MemopRecord>) override {}
  size_t kernels = 0, api_calls = 0;
};

void print_pass(const char* what, const fc::CounterPassResult& p, size_t bytes) {
  std::printf("%s: %s; %zu kernels profiled, %zu replay passes", what,
              p.status.ok() ? "ok" : p.status.describe().c_str(), p.kernels.size(), p.passes);
  if (!p.kernels.empty())
    std::printf("; kernel 0 read %.4fx, wrote %.4fx of its bytes",
                p.value(0, fc::metric::kDramRead) / static_cast<double>(bytes),
                p.value(0, fc::metric::kDramWrite) / static_cast<double>(bytes));
  std::printf("\n");
}

}  // namespace

int main() {
  constexpr size_t kBytes = size_t{64} << 20;
  fc::CopyWorkload copy(kBytes);
  auto three_copies = [&] {
    for (int i = 0; i < 3; ++i) copy.launch();
  };
  three_copies();  // warm up outside any capture
  if (!copy.verify()) std::printf("warning: the warm-up copy is wrong\n");

  fp::Tracer tracer;
  std::printf("tracer: %s\n",
              tracer.available() ? "subscribed" : tracer.unavailable_reason().c_str());

  // A: the tracer subscribed, no run open (activity kinds disabled): the lab's arrangement.
  print_pass("A counters pass, tracer subscribed but paused", fc::run_counter_pass(three_copies),
             kBytes);

  // B: a trace run open while the range profiler replays kernels.
  {
    CountingSink sink;
    tracer.begin_run(sink);
    const fc::CounterPassResult p = fc::run_counter_pass(three_copies);
    const fp::TraceOutcome out = tracer.end_run();
    print_pass("B counters pass inside an open trace run", p, kBytes);
    std::printf("B   trace: %zu kernel records for 3 launches (%zu API calls)%s%s\n", sink.kernels,
                sink.api_calls, out.status.empty() ? "" : "; trace status: ", out.status.c_str());
  }
  std::printf("B   copy still correct after the replays: %s\n", copy.verify() ? "yes" : "NO");

  // C: PM sampling inside an open trace run.
  {
    CountingSink sink;
    tracer.begin_run(sink);
    fc::PmSamplingOptions o;
    o.hardware_buffer_bytes = size_t{256} << 20;
    const fc::PmSamplingResult r = fc::sample_during(three_copies, o);
    const fp::TraceOutcome out = tracer.end_run();
    std::printf(
        "C PM sampling inside an open trace run: %s; %zu samples (%s); trace: %zu kernel "
        "records%s%s\n",
        r.status.ok() ? "ok" : r.status.describe().c_str(), r.samples.size(),
        r.clock_mapping.c_str(), sink.kernels, out.status.empty() ? "" : "; ", out.status.c_str());
  }

  // D: tracing after all of that.
  {
    CountingSink sink;
    tracer.begin_run(sink);
    three_copies();
    copy.verify();
    const fp::TraceOutcome out = tracer.end_run();
    std::printf("D tracing afterwards: %zu kernel records for 3 launches%s%s\n", sink.kernels,
                out.status.empty() ? "" : "; ", out.status.c_str());
  }
  return 0;
}
