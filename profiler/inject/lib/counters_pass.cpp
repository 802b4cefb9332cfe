#include "counters_pass.h"

#include <utility>

#include "fusionscope/counters/kernel_counters.h"

namespace fusionscope::inject {

InjectedCounters::InjectedCounters(const Settings& settings) : settings_(settings) {}
InjectedCounters::~InjectedCounters() = default;

void InjectedCounters::begin(std::string window) {
  std::lock_guard lock(mu_);
  if (active_ || session_) return;
  window_ = std::move(window);
  counters::CounterPassOptions options;
  // Without a name filter the limit bounds what is profiled; with one, the names are known only
  // after the pass, so more are profiled and the filter picks among them.
  options.max_kernels = settings_.kernel_limit > 0 && settings_.kernel_filter.empty()
                            ? settings_.kernel_limit
                            : std::size_t{4096};
  session_ = std::make_unique<counters::KernelCounterSession>(std::move(options));
  const counters::CounterStatus s = session_->begin();
  active_ = s.ok();
}

bool InjectedCounters::active() const {
  std::lock_guard lock(mu_);
  return active_;
}

void InjectedCounters::launched(const char* symbol) {
  std::lock_guard lock(mu_);
  if (active_) launches_.emplace_back(symbol ? symbol : "");
}

WireCounters InjectedCounters::end() {
  std::unique_lock lock(mu_);
  WireCounters out;
  out.window = window_;
  if (!session_) {
    out.availability = static_cast<uint32_t>(counters::CounterAvailability::kFailed);
    out.message = "the counters pass never began";
    return out;
  }
  active_ = false;
  auto session = std::move(session_);
  std::vector<std::string> names = std::move(launches_);
  lock.unlock();
  const counters::CounterPassResult pass = session->end();
  out.availability = static_cast<uint32_t>(pass.status.availability);
  out.message = pass.status.message;
  out.chip = pass.chip;
  out.passes = static_cast<uint32_t>(pass.passes);
  out.limit_reached = pass.limit_reached;
  out.metrics = pass.metrics;
  out.units = pass.units;
  out.skipped_metrics = pass.skipped_metrics;
  for (size_t i = 0; i < pass.kernels.size(); ++i) {
    WireKernelCounters k;
    k.launch_index = static_cast<uint32_t>(i);
    // The launch's symbol when it was seen; CUPTI's range name otherwise.
    k.name = i < names.size() && !names[i].empty() ? names[i] : pass.kernels[i].range_name;
    k.values = pass.kernels[i].values;
    out.kernels.push_back(std::move(k));
  }
  std::string error;
  out.filtered_out = static_cast<uint32_t>(
      apply_kernel_filter(out, settings_.kernel_filter, settings_.kernel_limit, &error));
  if (!error.empty() && out.message.empty()) out.message = error;
  return out;
}

WireCounters InjectedCounters::never_opened(const std::string& window) const {
  WireCounters out;
  out.window = window;
  out.availability = static_cast<uint32_t>(counters::CounterAvailability::kFailed);
  out.message = "no kernel was profiled: the program never opened " + window;
  return out;
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
