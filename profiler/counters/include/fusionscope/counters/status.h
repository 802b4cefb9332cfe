// Whether hardware counters could be read, and if not, why: a status the caller stores next to
// the run (RunInfo::trace_status, or a note) so the views can say why a chart is empty.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fusionscope::counters {

enum class CounterAvailability : uint8_t {
  kOk = 0,
  kNoDevice,                // no CUDA driver or device
  kNotSupported,            // the GPU, driver or setup (vGPU, confidential computing...) has none
  kInsufficientPrivileges,  // the driver restricts counters to administrators
  kBusy,                    // another profiler (Nsight, a second session) holds the counters
  kFailed,                  // anything else; the message says what
};

std::string_view to_string(CounterAvailability a);

struct CounterStatus {
  CounterAvailability availability = CounterAvailability::kOk;
  std::string message;  // empty when ok; otherwise one or two sentences for a person

  bool ok() const { return availability == CounterAvailability::kOk; }
  // "counters: <availability>: <message>", the form stored in a run's trace status.
  std::string describe() const;

  static CounterStatus success() { return {}; }
};

}  // namespace fusionscope::counters
