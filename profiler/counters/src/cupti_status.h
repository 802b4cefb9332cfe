// CUPTI results to CounterStatus, and the internal exception that carries one up to the public
// entry points (which never let it escape).
#pragma once

#include <cupti_result.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fusionscope/counters/status.h"

namespace fusionscope::counters::detail {

std::string cupti_error_text(CUptiResult r);

// What a failed CUPTI call means for the user; `what` names the step, e.g. "enabling the range
// profiler".
CounterStatus status_from_cupti(CUptiResult r, std::string_view what);

class CounterFailure : public std::runtime_error {
 public:
  explicit CounterFailure(CounterStatus s) : std::runtime_error(s.message), status(std::move(s)) {}
  CounterStatus status;
};

// With FUSIONSCOPE_COUNTERS_TRACE set in the environment, each CUPTI step is printed to stderr
// (what it was and its result), to find where a driver or CUPTI misbehaves.
bool tracing();
void trace(std::string_view what, CUptiResult r);

// Throws CounterFailure when r is not CUPTI_SUCCESS.
void check_cupti(CUptiResult r, std::string_view what);
[[noreturn]] void fail(CounterAvailability a, std::string message);

// A zeroed CUPTI parameter struct with its size set, as every CUPTI call expects.
template <class Params>
Params cupti_params(size_t struct_size) {
  Params p{};
  p.structSize = struct_size;
  return p;
}

}  // namespace fusionscope::counters::detail
