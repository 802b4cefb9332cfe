// A TraceSink that keeps everything in memory, for tests: records, strings, and the size of
// each batch it was handed.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "fusionscope/profiler/trace_sink.h"

namespace fusionscope::testing {

class MemorySink : public profiler::TraceSink {
 public:
  storage::StringId intern(std::string_view text) override {
    for (size_t i = 0; i < strings.size(); ++i)
      if (strings[i] == text) return static_cast<storage::StringId>(i);
    strings.emplace_back(text);
    return static_cast<storage::StringId>(strings.size() - 1);
  }
  void insert_kernels(std::span<const storage::KernelRecord> r) override {
    check();
    kernels.insert(kernels.end(), r.begin(), r.end());
    kernel_batches.push_back(r.size());
  }
  void insert_api_calls(std::span<const storage::ApiCallRecord> r) override {
    check();
    api_calls.insert(api_calls.end(), r.begin(), r.end());
    api_batches.push_back(r.size());
  }
  void insert_ranges(std::span<const storage::RangeRecord> r) override {
    check();
    ranges.insert(ranges.end(), r.begin(), r.end());
    range_batches.push_back(r.size());
  }
  void insert_memops(std::span<const storage::MemopRecord> r) override {
    check();
    memops.insert(memops.end(), r.begin(), r.end());
    memop_batches.push_back(r.size());
  }

  const std::string& str(storage::StringId id) const { return strings.at(id); }

  std::vector<std::string> strings{""};
  std::vector<storage::KernelRecord> kernels;
  std::vector<storage::ApiCallRecord> api_calls;
  std::vector<storage::RangeRecord> ranges;
  std::vector<storage::MemopRecord> memops;
  std::vector<size_t> kernel_batches, api_batches, range_batches, memop_batches;
  bool fail_writes = false;  // simulate a store that cannot write (disk full...)

 private:
  void check() const {
    if (fail_writes) throw std::runtime_error("disk full");
  }
};

}  // namespace fusionscope::testing
