#include "fusionscope/profiler/trace_sink.h"

#include "fusionscope/storage/session_store.h"

namespace fusionscope::profiler {

storage::StringId StoreTraceSink::intern(std::string_view text) {
  return store_.intern(text);
}

void StoreTraceSink::insert_kernels(std::span<const storage::KernelRecord> records) {
  store_.insert_kernels(run_id_, records);
}
void StoreTraceSink::insert_api_calls(std::span<const storage::ApiCallRecord> records) {
  store_.insert_api_calls(run_id_, records);
}
void StoreTraceSink::insert_ranges(std::span<const storage::RangeRecord> records) {
  store_.insert_ranges(run_id_, records);
}
void StoreTraceSink::insert_memops(std::span<const storage::MemopRecord> records) {
  store_.insert_memops(run_id_, records);
}

}  // namespace fusionscope::profiler
