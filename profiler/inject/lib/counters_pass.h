// The counters pass inside an injected process (`capture --counters`, the second run of the
// command). A program runs once, so only CUPTI's kernel replay applies; it is used twice, over two
// consecutive windows, so that DRAM bytes agree with Nsight Compute and the other metrics are there
// too (docs/counters.md):
//  1. the window (the capture range, else timed iteration number `warmup`): the one-pass DRAM set
//     (dram_kernel_metrics()), with a read-only sweep of the L2 launched before each kernel from
//     the launch callback, on the kernel's stream, so that each kernel starts as under Nsight
//     Compute's `--cache-control all`; the sweeps' ranges are dropped. One pass needs no memory
//     save and restore, whose dirty lines would count as the kernel's writes.
//  2. the next such window (the range's second occurrence, the next iteration): the default set
//     (FLOPs, SM and tensor activity, L1 bytes...) over several replay passes, no sweep. Its DRAM
//     figures are not used.
// The two are merged kernel by kernel when both windows launched the same kernels; otherwise the
// DRAM set stands alone and WireCounters::method says what is missing. No activity tracing runs in
// this mode (replayed kernels would lose their timestamps).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "../wire/activity_wire.h"
#include "settings.h"

namespace fusionscope::counters {
class KernelCounterSession;
struct CounterPassResult;
}  // namespace fusionscope::counters

namespace fusionscope::inject {

class InjectedCounters {
 public:
  enum class Window : uint8_t { kDram, kOthers };

  explicit InjectedCounters(const Settings& settings);
  ~InjectedCounters();

  // A window opened, on a thread that may call CUDA (an NVTX call of the program's). `what` says
  // which window, in words.
  void begin(Window window, std::string what);
  bool active() const;
  // A kernel launch at its API entry (driver callback), in launch order, with its stream (a
  // CUstream; null for the launch's default stream, `per_thread` when that is the per-thread
  // one). In the DRAM window the L2 sweep is enqueued on that stream first. Launches of the
  // pass's own (the sweeps, and the sweep buffer's first sweep in begin()) call back here on the
  // same thread, and are ignored before any lock is taken.
  void launched(const char* symbol, void* stream, bool per_thread);
  // A window closed. Returns what goes to the capturing process once the pass is complete (after
  // the second window); nothing after the first.
  std::optional<WireCounters> end(Window window);
  // The program is exiting: what is open or pending, completed with what is missing said; empty
  // when no window ever opened or the result was sent. `next_window` names the second window.
  std::optional<WireCounters> finish(const std::string& next_window);
  // The program ended without the window ever opening.
  WireCounters never_opened(const std::string& window) const;

 private:
  struct Done;
  WireCounters finished_result(const std::string& others_missing);
  counters::CounterPassResult end_session();

  Settings settings_;
  mutable std::mutex mu_;
  std::unique_ptr<counters::KernelCounterSession> session_;
  Window window_ = Window::kDram;
  std::vector<std::string> launches_;  // symbols of the open window's launches
  std::size_t sweeps_ = 0;             // sweeps enqueued in the open window
  bool active_ = false;
  std::string dram_what_, others_what_;
  std::unique_ptr<Done> dram_;    // the DRAM window's result, once it closed
  std::unique_ptr<Done> others_;  // the other window's, once it closed (or failed to begin)
  bool sent_ = false;
};

// Kernel by kernel: the DRAM window's values for the metrics it has, the other window's for the
// rest, then the derived metrics (FLOPs, rates, intensity) again from the merged values. `dram`
// becomes the merged result. False, with the reason, when the two windows did not launch the same
// kernels (count or names); `dram` is left as it was.
bool merge_counter_windows(counters::CounterPassResult& dram,
                           const counters::CounterPassResult& others, std::string* why);

// Keeps the kernels whose names match `filter` (ECMAScript; empty keeps all), at most `limit`
// (0: all). Returns how many were filtered out by name. Names and values stay aligned.
std::size_t apply_kernel_filter(WireCounters& counters, const std::string& filter,
                                std::size_t limit, std::string* error);

}  // namespace fusionscope::inject
