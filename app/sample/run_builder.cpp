#include "run_builder.h"

#include <utility>

namespace fusionscope::sample {

using namespace storage;

RunBuilder::RunBuilder(RunInfo info) {
  run_.info = std::move(info);
  run_.strings.push_back("");
  ids_.emplace("", kNoString);
}

StringId RunBuilder::intern(std::string_view text) {
  auto [it, inserted] =
      ids_.try_emplace(std::string(text), static_cast<StringId>(run_.strings.size()));
  if (inserted) run_.strings.emplace_back(text);
  return it->second;
}

KernelRecord& RunBuilder::kernel(int64_t start_ns, int64_t end_ns, std::string_view name,
                                 std::string_view op, uint32_t stream, uint32_t correlation_id) {
  KernelRecord k;
  k.start_ns = start_ns;
  k.end_ns = end_ns;
  k.stream = stream;
  k.correlation_id = correlation_id;
  k.name = intern(name);
  k.op = intern(op);
  return run_.kernels.emplace_back(k);
}

ApiCallRecord& RunBuilder::api_call(int64_t start_ns, int64_t end_ns, std::string_view name,
                                    uint32_t thread_id, uint32_t correlation_id) {
  ApiCallRecord a;
  a.start_ns = start_ns;
  a.end_ns = end_ns;
  a.thread_id = thread_id;
  a.correlation_id = correlation_id;
  a.name = intern(name);
  return run_.api_calls.emplace_back(a);
}

RangeRecord& RunBuilder::range(int64_t start_ns, int64_t end_ns, std::string_view name,
                               uint32_t thread_id, RangeKind kind) {
  RangeRecord r;
  r.start_ns = start_ns;
  r.end_ns = end_ns;
  r.thread_id = thread_id;
  r.name = intern(name);
  r.kind = kind;
  return run_.ranges.emplace_back(r);
}

MemopRecord& RunBuilder::memop(int64_t start_ns, int64_t end_ns, MemopKind kind, uint64_t bytes,
                               uint32_t stream, uint32_t correlation_id) {
  MemopRecord m;
  m.start_ns = start_ns;
  m.end_ns = end_ns;
  m.kind = kind;
  m.bytes = bytes;
  m.stream = stream;
  m.correlation_id = correlation_id;
  return run_.memops.emplace_back(m);
}

void RunBuilder::metric(uint32_t correlation_id, std::string_view name, std::string_view unit,
                        double value) {
  run_.kernel_metrics.push_back({correlation_id, intern(name), intern(unit), value});
}

void RunBuilder::sample(int64_t t_ns, std::string_view metric, double value) {
  run_.samples.push_back({t_ns, intern(metric), value});
}

RunData RunBuilder::finish() {
  arrange_run(run_);
  RunData out = std::move(run_);
  run_ = RunData{};
  run_.strings.push_back("");
  ids_.clear();
  ids_.emplace("", kNoString);
  return out;
}

}  // namespace fusionscope::sample
