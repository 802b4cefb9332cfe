#include "fusionscope/counters/status.h"

#include <string>

namespace fusionscope::counters {

std::string_view to_string(CounterAvailability a) {
  switch (a) {
    case CounterAvailability::kOk:
      return "ok";
    case CounterAvailability::kNoDevice:
      return "no GPU";
    case CounterAvailability::kNotSupported:
      return "not supported";
    case CounterAvailability::kInsufficientPrivileges:
      return "not permitted";
    case CounterAvailability::kBusy:
      return "busy";
    case CounterAvailability::kFailed:
      return "failed";
  }
  return "unknown";
}

std::string CounterStatus::describe() const {
  if (ok()) return "counters: ok";
  std::string s = "counters: ";
  s += to_string(availability);
  if (!message.empty()) s += ": " + message;
  return s;
}

}  // namespace fusionscope::counters
