// A run's records with every field, strings resolved to their text, in one comparable value:
// runs of two sessions (whose string ids differ) compare equal when they hold the same things.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "fusionscope/storage/session_store.h"

namespace fusionscope::testing {

struct RunRows {
  using Kernel =
      std::tuple<int64_t, int64_t, uint32_t, uint32_t, uint32_t, std::string, std::string,
                 std::tuple<uint32_t, uint32_t, uint32_t>, std::tuple<uint32_t, uint32_t, uint32_t>,
                 uint32_t, uint32_t, uint32_t, uint32_t, int64_t, std::string>;
  using Memop = std::tuple<int64_t, int64_t, uint32_t, uint32_t, uint32_t, uint64_t, int, int,
                           uint32_t, int64_t, std::string>;
  using ApiCall = std::tuple<int64_t, int64_t, uint32_t, uint32_t, std::string, int, uint32_t,
                             int64_t, std::string>;
  using Range = std::tuple<int64_t, int64_t, uint32_t, std::string, int, uint16_t, uint32_t,
                           int64_t, std::string, int32_t>;
  std::vector<Kernel> kernels;
  std::vector<Memop> memops;
  std::vector<ApiCall> api_calls;
  std::vector<Range> ranges;
  std::vector<std::tuple<uint32_t, std::string>> processes;
  std::vector<std::tuple<uint32_t, uint32_t, std::string>> threads;
  std::vector<std::tuple<std::string, std::string>> extras;
  friend bool operator==(const RunRows&, const RunRows&) = default;
};

// Every record of `run` (arranged, as load_run() gives it), field by field.
RunRows rows_of(const storage::RunData& run);

// The first difference between two, for a failure message; "" when equal.
std::string first_difference(const RunRows& a, const RunRows& b);

}  // namespace fusionscope::testing
