// Builds a storage::RunData in memory, in the form SessionStore::load_run() returns: records
// sorted per lane, range depths and lanes filled in, the run's extent set. Used to make the
// sample session and by tests that need runs without a session file.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "fusionscope/storage/session_store.h"

namespace fusionscope::sample {

class RunBuilder {
 public:
  explicit RunBuilder(storage::RunInfo info = {});

  storage::StringId intern(std::string_view text);

  // Each returns the new record so the caller can set the remaining fields.
  storage::KernelRecord& kernel(int64_t start_ns, int64_t end_ns, std::string_view name,
                                std::string_view op = {}, uint32_t stream = 7,
                                uint32_t correlation_id = 0);
  storage::ApiCallRecord& api_call(int64_t start_ns, int64_t end_ns, std::string_view name,
                                   uint32_t thread_id, uint32_t correlation_id = 0);
  storage::RangeRecord& range(int64_t start_ns, int64_t end_ns, std::string_view name,
                              uint32_t thread_id,
                              storage::RangeKind kind = storage::RangeKind::kNvtx);
  storage::MemopRecord& memop(int64_t start_ns, int64_t end_ns, storage::MemopKind kind,
                              uint64_t bytes, uint32_t stream = 7, uint32_t correlation_id = 0);
  void metric(uint32_t correlation_id, std::string_view name, std::string_view unit, double value);
  void sample(int64_t t_ns, std::string_view metric, double value);

  // Arranges the run as load_run() does (storage::arrange_run); the builder is left empty.
  storage::RunData finish();

 private:
  storage::RunData run_;
  std::unordered_map<std::string, storage::StringId> ids_;
};

}  // namespace fusionscope::sample
