#include "counters_pass.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "fusionscope/counters/kernel_counters.h"

namespace fusionscope::inject {
namespace {

// Set while this thread launches work of the counters pass's own (an L2 sweep, the sweep
// buffer's first sweep when a session begins): such a launch reaches the launch callback again,
// on this thread, and must be neither counted nor swept for, nor wait for the lock this thread
// already holds.
thread_local bool own_launch = false;

class OwnLaunches {
 public:
  OwnLaunches() : was_(own_launch) { own_launch = true; }
  ~OwnLaunches() { own_launch = was_; }
  OwnLaunches(const OwnLaunches&) = delete;
  OwnLaunches& operator=(const OwnLaunches&) = delete;

 private:
  bool was_;
};

std::size_t kernels_to_profile(const Settings& s) {
  // Without a name filter the limit bounds what is profiled; with one, the names are known only
  // after the pass, so more are profiled and the filter picks among them.
  return s.kernel_limit > 0 && s.kernel_filter.empty() ? s.kernel_limit : std::size_t{4096};
}

constexpr const char* kDramMethod =
    "DRAM bytes in one replay pass with the L2 swept before each kernel, as Nsight Compute's "
    "--cache-control all";

}  // namespace

struct InjectedCounters::Done {
  counters::CounterPassResult result;
};

InjectedCounters::InjectedCounters(const Settings& settings) : settings_(settings) {}
InjectedCounters::~InjectedCounters() = default;

void InjectedCounters::begin(Window window, std::string what) {
  std::lock_guard lock(mu_);
  if (active_) return;  // windows do not overlap; one that opens inside another is not profiled
  if (window == Window::kDram && dram_) return;
  // The other metrics only complete a DRAM window that worked.
  if (window == Window::kOthers && (!dram_ || !dram_->result.status.ok() || !others_what_.empty()))
    return;
  counters::CounterPassOptions options;
  int device = 0;
  if (cudaGetDevice(&device) == cudaSuccess) options.device = device;
  options.replay = counters::ReplayMode::kKernel;
  options.max_kernels = kernels_to_profile(settings_);
  if (window == Window::kDram) {
    options.metrics = counters::dram_kernel_metrics();
    options.flush_l2 = true;
    dram_what_ = std::move(what);
  } else {
    others_what_ = std::move(what);
  }
  window_ = window;
  launches_.clear();
  sweeps_ = 0;
  session_ = std::make_unique<counters::KernelCounterSession>(std::move(options));
  const counters::CounterStatus s = [&] {
    const OwnLaunches ours;  // the L2 sweep buffer runs a first sweep as it is set up
    return session_->begin();
  }();
  active_ = s.ok();
  if (!active_) {
    // end() of a session that did not begin returns why.
    auto failed = std::make_unique<Done>(Done{session_->end()});
    session_.reset();
    (window == Window::kDram ? dram_ : others_) = std::move(failed);
  }
}

bool InjectedCounters::active() const {
  std::lock_guard lock(mu_);
  return active_;
}

void InjectedCounters::launched(const char* symbol, void* stream, bool per_thread) {
  if (own_launch) return;
  std::lock_guard lock(mu_);
  if (!active_) return;
  launches_.emplace_back(symbol ? symbol : "");
  if (window_ != Window::kDram || launches_.size() > kernels_to_profile(settings_)) return;
  void* on = stream == nullptr && per_thread ? static_cast<void*>(cudaStreamPerThread) : stream;
  {
    const OwnLaunches ours;
    session_->before_kernel(on);
  }
  ++sweeps_;
}

counters::CounterPassResult InjectedCounters::end_session() {
  std::unique_lock lock(mu_);
  active_ = false;
  auto session = std::move(session_);
  std::vector<std::string> names = std::move(launches_);
  lock.unlock();
  counters::CounterPassResult r = session->end();
  // The launch's symbol when it was seen; CUPTI's range name ("0", "1"...) otherwise.
  for (std::size_t i = 0; i < r.kernels.size() && i < names.size(); ++i)
    if (!names[i].empty()) r.kernels[i].range_name = names[i];
  return r;
}

std::optional<WireCounters> InjectedCounters::end(Window window) {
  {
    std::lock_guard lock(mu_);
    if (!active_ || window_ != window) return std::nullopt;
  }
  counters::CounterPassResult r = end_session();
  if (window == Window::kDram) {
    std::lock_guard lock(mu_);
    dram_ = std::make_unique<Done>(Done{std::move(r)});
    return std::nullopt;
  }
  std::lock_guard lock(mu_);
  others_ = std::make_unique<Done>(Done{std::move(r)});
  return finished_result({});
}

std::optional<WireCounters> InjectedCounters::finish(const std::string& next_window) {
  bool open = false;
  Window which = Window::kDram;
  {
    std::lock_guard lock(mu_);
    open = active_;
    which = window_;
  }
  if (open) {
    counters::CounterPassResult r = end_session();
    std::lock_guard lock(mu_);
    if (which == Window::kDram) {
      dram_ = std::make_unique<Done>(Done{std::move(r)});
      return finished_result("the program ended inside the window, before " + next_window);
    }
    others_ = std::make_unique<Done>(Done{std::move(r)});
    return finished_result({});
  }
  std::lock_guard lock(mu_);
  if (!dram_ || sent_) return std::nullopt;
  return finished_result("the program never opened " + next_window);
}

WireCounters InjectedCounters::finished_result(const std::string& others_missing) {
  counters::CounterPassResult& d = dram_->result;
  std::string method = kDramMethod;
  if (d.status.ok()) {
    if (others_ && others_->result.status.ok()) {
      std::string why;
      const std::size_t passes = others_->result.passes;
      if (merge_counter_windows(d, others_->result, &why)) {
        method += "; the other metrics in " + std::to_string(passes) + " replay passes over " +
                  others_what_;
      } else {
        method += "; FLOPs and SM/tensor activity left out: " + why;
      }
    } else {
      method +=
          "; FLOPs and SM/tensor activity not measured: " +
          (others_ ? others_what_ + ": " + others_->result.status.describe() : others_missing);
    }
  }
  WireCounters out;
  out.window = dram_what_;
  out.availability = static_cast<uint32_t>(d.status.availability);
  out.message = d.status.message;
  out.chip = d.chip;
  out.passes = static_cast<uint32_t>(d.passes);
  out.limit_reached = d.limit_reached;
  out.l2_sweeps = static_cast<uint32_t>(d.l2_sweeps);
  out.method = d.status.ok() ? method : std::string();
  out.metrics = d.metrics;
  out.units = d.units;
  out.skipped_metrics = d.skipped_metrics;
  for (std::size_t i = 0; i < d.kernels.size(); ++i) {
    WireKernelCounters k;
    k.launch_index = static_cast<uint32_t>(i);
    k.name = d.kernels[i].range_name;
    k.values = d.kernels[i].values;
    out.kernels.push_back(std::move(k));
  }
  std::string error;
  out.filtered_out = static_cast<uint32_t>(
      apply_kernel_filter(out, settings_.kernel_filter, settings_.kernel_limit, &error));
  if (!error.empty() && out.message.empty()) out.message = error;
  sent_ = true;  // a later finish() finds it done
  return out;
}

WireCounters InjectedCounters::never_opened(const std::string& window) const {
  WireCounters out;
  out.window = window;
  out.availability = static_cast<uint32_t>(counters::CounterAvailability::kFailed);
  out.message = "no kernel was profiled: the program never opened " + window;
  return out;
}

bool merge_counter_windows(counters::CounterPassResult& dram,
                           const counters::CounterPassResult& others, std::string* why) {
  auto fail = [&](std::string text) {
    if (why) *why = std::move(text);
    return false;
  };
  if (others.kernels.size() != dram.kernels.size())
    return fail("the next window launched " + std::to_string(others.kernels.size()) +
                " kernels, the DRAM window " + std::to_string(dram.kernels.size()));
  for (std::size_t i = 0; i < dram.kernels.size(); ++i) {
    if (dram.kernels[i].range_name != others.kernels[i].range_name)
      return fail("kernel " + std::to_string(i) + " of the next window is " +
                  others.kernels[i].range_name + ", not " + dram.kernels[i].range_name);
  }
  std::vector<std::pair<std::size_t, std::size_t>> taken;  // others' column -> merged column
  for (std::size_t c = 0; c < others.metrics.size(); ++c) {
    const std::string& m = others.metrics[c];
    // Derived metrics are computed again below; the DRAM window's raw values stand.
    if (m.starts_with("fusionscope/")) continue;
    if (std::find(dram.metrics.begin(), dram.metrics.end(), m) != dram.metrics.end()) continue;
    dram.metrics.push_back(m);
    dram.units.push_back(c < others.units.size() ? others.units[c] : std::string());
    taken.emplace_back(c, dram.metrics.size() - 1);
  }
  for (std::size_t i = 0; i < dram.kernels.size(); ++i) {
    auto& values = dram.kernels[i].values;
    values.resize(dram.metrics.size(), std::nan(""));
    const auto& from = others.kernels[i].values;
    for (const auto& [c, to] : taken) values[to] = c < from.size() ? from[c] : std::nan("");
  }
  for (const auto& s : others.skipped_metrics)
    if (std::find(dram.skipped_metrics.begin(), dram.skipped_metrics.end(), s) ==
        dram.skipped_metrics.end())
      dram.skipped_metrics.push_back(s);
  dram.limit_reached = dram.limit_reached || others.limit_reached;
  counters::add_derived_metrics(dram);
  return true;
}

std::size_t apply_kernel_filter(WireCounters& c, const std::string& filter, std::size_t limit,
                                std::string* error) {
  std::size_t dropped = 0;
  std::vector<WireKernelCounters> kept;
  std::regex re;
  bool use_filter = !filter.empty();
  if (use_filter) {
    try {
      re = std::regex(filter, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      if (error) *error = "the kernel filter \"" + filter + "\" is not a valid regex: " + e.what();
      use_filter = false;
    }
  }
  for (auto& k : c.kernels) {
    if (use_filter && !std::regex_search(k.name, re)) {
      ++dropped;
      continue;
    }
    if (limit > 0 && kept.size() >= limit) {
      c.limit_reached = true;
      continue;
    }
    kept.push_back(std::move(k));
  }
  c.kernels = std::move(kept);
  return dropped;
}

}  // namespace fusionscope::inject
