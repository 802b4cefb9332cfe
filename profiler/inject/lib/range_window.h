// When the recorded window opens and closes, from the NVTX ranges the program opens: the N-th
// range with a given name (`--capture-range nvtx:NAME`: the first; the counters pass also takes
// the second), or the N-th of the ranges whose name starts with one of a few prefixes (the
// counters pass's timed iteration and the one after it). Push/pop ranges nest per
// thread and domain; start/end ranges are matched by id. Thread-safe; no CUPTI here.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fusionscope::inject {

class RangeWindow {
 public:
  enum class Event { kNone, kOpen, kClose };

  // Range number `occurrence` (from 0) of those named exactly `name`.
  static std::unique_ptr<RangeWindow> exact(std::string name, int occurrence = 0);
  // Range number `occurrence` (from 0) of those whose name starts with one of `prefixes`; the
  // first prefix seen decides which one counts (PyTorch's "ProfilerStep#", else "iteration").
  static std::unique_ptr<RangeWindow> nth_with_prefix(std::vector<std::string> prefixes,
                                                      int occurrence);

  Event push(uint32_t thread, uint64_t domain, std::string_view name);
  Event pop(uint32_t thread, uint64_t domain);
  Event start(uint64_t id, std::string_view name);
  Event end(uint64_t id);

  bool opened() const;
  bool closed() const;
  // What the window is, in words: "the first NVTX range \"step\"".
  std::string describe() const;

 private:
  RangeWindow() = default;
  bool matches(std::string_view name);  // counts matches; true for the one that opens

  mutable std::mutex mu_;
  std::vector<std::string> names_;
  bool prefix_ = false;
  int occurrence_ = 0;
  int seen_ = 0;
  int chosen_ = -1;  // index into names_ once a prefix has been seen
  enum class State { kWaiting, kOpen, kClosed } state_ = State::kWaiting;
  std::map<std::pair<uint32_t, uint64_t>, int> depth_;  // (thread, domain) -> open pushes
  std::pair<uint32_t, uint64_t> open_key_{};
  int open_depth_ = 0;
  uint64_t open_id_ = 0;
  bool open_by_id_ = false;
};

}  // namespace fusionscope::inject
