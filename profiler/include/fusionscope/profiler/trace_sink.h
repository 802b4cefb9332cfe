// Where a run's decoded trace goes. The session store is the real destination (StoreTraceSink);
// tests collect records in memory. Each call carries one batch, and the store writes each batch in
// one transaction.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "fusionscope/storage/records.h"

namespace fusionscope::storage {
class RunWriter;
}

namespace fusionscope::profiler {

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual storage::StringId intern(std::string_view text) = 0;
  virtual void insert_kernels(std::span<const storage::KernelRecord> records) = 0;
  virtual void insert_api_calls(std::span<const storage::ApiCallRecord> records) = 0;
  virtual void insert_ranges(std::span<const storage::RangeRecord> records) = 0;
  virtual void insert_memops(std::span<const storage::MemopRecord> records) = 0;
  // Names a process whose records carry `pid` (a run of several processes); kept by the store.
  virtual void name_process(uint32_t pid, std::string_view name) {
    (void)pid;
    (void)name;
  }
};

// Writes into one run of a session, through the RunWriter that makes it appear whole or not at
// all. The tracer calls it from its worker thread while the run executes: nothing else may use the
// same writer or SessionStore object until Tracer::end_run() returns.
class StoreTraceSink final : public TraceSink {
 public:
  explicit StoreTraceSink(storage::RunWriter& run) : run_(run) {}
  storage::StringId intern(std::string_view text) override;
  void insert_kernels(std::span<const storage::KernelRecord> records) override;
  void insert_api_calls(std::span<const storage::ApiCallRecord> records) override;
  void insert_ranges(std::span<const storage::RangeRecord> records) override;
  void insert_memops(std::span<const storage::MemopRecord> records) override;
  void name_process(uint32_t pid, std::string_view name) override;

 private:
  storage::RunWriter& run_;
};

}  // namespace fusionscope::profiler
