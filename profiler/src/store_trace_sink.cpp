#include "fusionscope/profiler/trace_sink.h"

#include "fusionscope/storage/run_writer.h"

namespace fusionscope::profiler {

storage::StringId StoreTraceSink::intern(std::string_view text) {
  return run_.intern(text);
}

void StoreTraceSink::insert_kernels(std::span<const storage::KernelRecord> records) {
  run_.add_kernels(records);
}
void StoreTraceSink::insert_api_calls(std::span<const storage::ApiCallRecord> records) {
  run_.add_api_calls(records);
}
void StoreTraceSink::insert_ranges(std::span<const storage::RangeRecord> records) {
  run_.add_ranges(records);
}
void StoreTraceSink::insert_memops(std::span<const storage::MemopRecord> records) {
  run_.add_memops(records);
}

void StoreTraceSink::name_process(uint32_t pid, std::string_view name) {
  run_.add_process(pid, name);
}

}  // namespace fusionscope::profiler
