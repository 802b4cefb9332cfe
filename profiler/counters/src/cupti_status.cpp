#include "cupti_status.h"

#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace fusionscope::counters {
namespace detail {

std::string cupti_error_text(CUptiResult r) {
  const char* text = nullptr;
  if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || text == nullptr) {
    return "CUPTI error " + std::to_string(static_cast<int>(r));
  }
  return text;
}

CounterStatus status_from_cupti(CUptiResult r, std::string_view what) {
  CounterStatus s;
  if (r == CUPTI_SUCCESS) return s;
  const std::string step = std::string(what) + " failed (" + cupti_error_text(r) + ")";
  switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      s.availability = CounterAvailability::kInsufficientPrivileges;
      s.message = step +
                  ": the GPU driver lets only administrators read performance counters. Run as "
                  "root, or load the driver with NVreg_RestrictProfilingToAdminUsers=0 "
                  "(https://developer.nvidia.com/ERR_NVGPUCTRPERM).";
      break;
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_INVALID_CHIP_NAME:
      s.availability = CounterAvailability::kNotSupported;
      s.message = step + ": this GPU or its setup offers no performance counters to CUPTI.";
      break;
    case CUPTI_ERROR_HARDWARE_BUSY:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      s.availability = CounterAvailability::kBusy;
      s.message = step +
                  ": another profiler (Nsight Compute or Systems, or a second session in "
                  "this process) holds the GPU's counters.";
      break;
    case CUPTI_ERROR_NOT_INITIALIZED:
      s.availability = CounterAvailability::kNoDevice;
      s.message = step +
                  ": CUPTI could not start; the CUDA driver is missing or older than "
                  "this CUPTI.";
      break;
    default:
      s.availability = CounterAvailability::kFailed;
      s.message = step + ".";
      break;
  }
  return s;
}

bool tracing() {
  static const bool on = std::getenv("FUSIONSCOPE_COUNTERS_TRACE") != nullptr;
  return on;
}

void trace(std::string_view what, CUptiResult r) {
  if (!tracing()) return;
  std::fprintf(stderr, "counters: %.*s: %s\n", static_cast<int>(what.size()), what.data(),
               cupti_error_text(r).c_str());
  std::fflush(stderr);
}

void check_cupti(CUptiResult r, std::string_view what) {
  trace(what, r);
  if (r != CUPTI_SUCCESS) throw CounterFailure(status_from_cupti(r, what));
}

void fail(CounterAvailability a, std::string message) {
  throw CounterFailure(CounterStatus{a, std::move(message)});
}

}  // namespace detail
}  // namespace fusionscope::counters
