// The counters pass inside an injected process (`capture --counters`, the second run of the
// command): the counters library's range profiler over the recorded window, kernel by kernel
// (kernel replay), the kernels' names taken from their launches, and the kernel filter and limit
// applied. No activity tracing runs in this mode (replayed kernels would lose their timestamps).
#pragma once

#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include "../wire/activity_wire.h"
#include "settings.h"

namespace fusionscope::counters {
class KernelCounterSession;
}

namespace fusionscope::inject {

class InjectedCounters {
 public:
  explicit InjectedCounters(const Settings& settings);
  ~InjectedCounters();

  // The window opened, on a thread that may call CUDA (an NVTX call of the program's).
  void begin(std::string window);
  bool active() const;
  // A kernel launch seen while the window is open (driver API callback), in launch order.
  void launched(const char* symbol);
  // The window closed (or the program is exiting with it open): profiles what ran and returns
  // what goes to the capturing process.
  WireCounters end();
  // The program ended without the window ever opening.
  WireCounters never_opened(const std::string& window) const;

 private:
  Settings settings_;
  std::unique_ptr<counters::KernelCounterSession> session_;
  std::string window_;
  mutable std::mutex mu_;
  std::vector<std::string> launches_;
  bool active_ = false;
};

// Keeps the kernels whose names match `filter` (ECMAScript; empty keeps all), at most `limit`
// (0: all). Returns how many were filtered out by name. Names and values stay aligned.
std::size_t apply_kernel_filter(WireCounters& counters, const std::string& filter,
                                std::size_t limit, std::string* error);

}  // namespace fusionscope::inject
