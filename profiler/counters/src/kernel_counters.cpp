#include "fusionscope/counters/kernel_counters.h"

#include <cuda_runtime_api.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "cupti_status.h"
#include "device_context.h"
#include "fusionscope/counters/l2_flush.h"
#include "fusionscope/counters/metric_names.h"
#include "profiler_host.h"

namespace fusionscope::counters {

using detail::check_cupti;
using detail::CounterFailure;

const std::vector<std::string>& default_kernel_metrics() {
  static const std::vector<std::string> metrics = [] {
    namespace m = metric;
    std::vector<std::string> v;
    for (std::string_view name :
         {m::kDuration, m::kDramRead, m::kDramWrite, m::kL2Bytes, m::kL1Bytes,
          m::kDramThroughputPct, m::kSmActivePct, m::kSmIssuePct, m::kTensorActivePct,
          m::kTensorHmmaActivePct, m::kTensorOpsBf16, m::kTensorOpsFp16, m::kTensorOpsTf32,
          m::kFfma, m::kFadd, m::kFmul, m::kL2WriteSectors}) {
      v.emplace_back(name);
    }
    return v;
  }();
  return metrics;
}

const std::vector<std::string>& dram_kernel_metrics() {
  static const std::vector<std::string> metrics = [] {
    namespace m = metric;
    std::vector<std::string> v;
    for (std::string_view name : {m::kDuration, m::kDramRead, m::kDramWrite, m::kL2Bytes,
                                  m::kL2WriteSectors, m::kDramThroughputPct}) {
      v.emplace_back(name);
    }
    return v;
  }();
  return metrics;
}

struct KernelCounterSession::Impl {
  CounterPassOptions options;
  CounterStatus begin_status{CounterAvailability::kFailed, "the session was not begun"};
  bool started = false;

  detail::DeviceContext device;
  std::unique_ptr<detail::ProfilerApi> api;
  std::unique_ptr<detail::ProfilerHost> host;
  CUpti_RangeProfiler_Object* profiler = nullptr;
  std::vector<uint8_t> config;
  std::vector<uint8_t> counter_data;
  CounterPassResult result;
  bool user_replay = false;
  bool all_submitted = false;
  size_t passes_run = 0;
  std::optional<CounterStatus> pass_failure;  // the first failure of a user-replay pass
  std::unique_ptr<L2Flusher> flusher;         // flush_l2
  size_t sweeps_this_pass = 0;
  std::optional<size_t> sweeps_per_pass;

  size_t range_capacity() const { return options.max_kernels * (options.flush_l2 ? 2 : 1); }
  void begin();
  void start();
  void stop_pass();
  void collect();
  void release();
};

void KernelCounterSession::Impl::begin() {
  if (options.max_kernels == 0) {
    detail::fail(CounterAvailability::kFailed, "max_kernels must be at least 1");
  }
  device = detail::open_device(options.device);
  api = std::make_unique<detail::ProfilerApi>();
  detail::require_support(device, CUPTI_PROFILER_RANGE_PROFILING);
  result.chip = detail::chip_name(device);
  result.replay = options.replay;
  int l2 = 0;
  if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device.index) == cudaSuccess && l2 > 0)
    result.l2_bytes = static_cast<size_t>(l2);
  sweeps_this_pass = 0;
  sweeps_per_pass.reset();
  if (options.flush_l2) {
    // The sweeps' ranges are told apart by their traffic, so L2 and DRAM bytes are collected.
    for (std::string_view needed : {metric::kL2Bytes, metric::kDramRead}) {
      if (std::find(options.metrics.begin(), options.metrics.end(), needed) ==
          options.metrics.end())
        options.metrics.emplace_back(needed);
    }
    try {
      flusher = std::make_unique<L2Flusher>(options.device, options.l2_sweep_multiple,
                                            options.l2_sweep_end);
    } catch (const std::exception& e) {
      detail::fail(CounterAvailability::kFailed, e.what());
    }
  }

  // No counter availability image: with the one cuptiProfilerGetCounterAvailability() returns,
  // CUPTI 13.0 crashes in the host calls that follow (seen on an H100, driver 580). Without it
  // the host assumes every counter of the chip, which holds when no other profiler runs.
  host = std::make_unique<detail::ProfilerHost>(CUPTI_PROFILER_TYPE_RANGE_PROFILER, result.chip,
                                                std::vector<uint8_t>{});
  result.metrics = detail::known_metrics(*host, options.metrics, result.skipped_metrics);
  for (const auto& m : result.metrics) result.units.push_back(host->unit(m));
  config = host->configure(result.metrics);
  result.passes = detail::ProfilerHost::passes(config);

  auto enable = detail::cupti_params<CUpti_RangeProfiler_Enable_Params>(
      CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = device.context;
  check_cupti(cuptiRangeProfilerEnable(&enable), "enabling the range profiler");
  profiler = enable.pRangeProfilerObject;

  auto size = detail::cupti_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = profiler;
  size.pMetricNames = const_cast<const char**>(host->metric_names().data());
  size.numMetrics = host->metric_names().size();
  size.maxNumOfRanges = range_capacity();
  size.maxNumRangeTreeNodes = static_cast<uint32_t>(range_capacity());
  check_cupti(cuptiRangeProfilerGetCounterDataSize(&size), "sizing the counter data");
  counter_data.assign(size.counterDataSize, 0);

  auto init = detail::cupti_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = profiler;
  init.counterDataSize = counter_data.size();
  init.pCounterData = counter_data.data();
  check_cupti(cuptiRangeProfilerCounterDataImageInitialize(&init), "preparing the counter data");

  // One range per kernel launch; each kernel replayed by CUPTI once per pass, or the whole
  // workload by the caller (user replay).
  user_replay = options.replay == ReplayMode::kUser;
  all_submitted = false;
  passes_run = 0;
  pass_failure.reset();
  auto set = detail::cupti_params<CUpti_RangeProfiler_SetConfig_Params>(
      CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  set.pRangeProfilerObject = profiler;
  set.configSize = config.size();
  set.pConfig = config.data();
  set.counterDataImageSize = counter_data.size();
  set.pCounterDataImage = counter_data.data();
  set.range = CUPTI_AutoRange;
  set.replayMode = user_replay ? CUPTI_UserReplay : CUPTI_KernelReplay;
  set.maxRangesPerPass = range_capacity();
  set.numNestingLevels = 1;
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  check_cupti(cuptiRangeProfilerSetConfig(&set), "configuring the range profiler");
  if (!user_replay) start();
}

void KernelCounterSession::Impl::start() {
  auto start = detail::cupti_params<CUpti_RangeProfiler_Start_Params>(
      CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  start.pRangeProfilerObject = profiler;
  check_cupti(cuptiRangeProfilerStart(&start), "starting the range profiler");
  started = true;
}

void KernelCounterSession::Impl::stop_pass() {
  // Kernels launched asynchronously must have run before the profiler stops.
  const cudaError_t sync = cudaDeviceSynchronize();
  detail::trace("synchronising the device", CUPTI_SUCCESS);
  auto stop = detail::cupti_params<CUpti_RangeProfiler_Stop_Params>(
      CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  stop.pRangeProfilerObject = profiler;
  started = false;
  check_cupti(cuptiRangeProfilerStop(&stop), "stopping the range profiler");
  if (sync != cudaSuccess) {
    detail::fail(CounterAvailability::kFailed,
                 std::string("the workload failed on the GPU: ") + cudaGetErrorString(sync));
  }
  ++passes_run;
  all_submitted = stop.isAllPassSubmitted != 0;
  // Every pass must launch the same kernels, so the same number of sweeps.
  if (!sweeps_per_pass) {
    sweeps_per_pass = sweeps_this_pass;
  } else if (*sweeps_per_pass != sweeps_this_pass && !pass_failure) {
    pass_failure = CounterStatus{
        CounterAvailability::kFailed,
        "pass " + std::to_string(passes_run) + " announced " + std::to_string(sweeps_this_pass) +
            " kernel(s) but the first pass " + std::to_string(*sweeps_per_pass) +
            "; user replay needs the same launches in every pass"};
  }
  sweeps_this_pass = 0;
}

namespace {

// Indexes of the L2 sweeps among a pass's ranges: `sweeps` of them, each just before a kernel of
// the workload. A sweep reads its whole buffer from DRAM through the L2 and little else does, so
// when the ranges alternate (one kernel per announced launch) every other one must look like it;
// otherwise the sweeps are the ranges that read as much as the buffer. Empty when neither holds.
std::vector<size_t> find_sweeps(const CounterPassResult& r, size_t sweeps, double buffer) {
  const auto looks_like_sweep = [&](size_t k) {
    const double read = r.value(k, metric::kDramRead), l2 = r.value(k, metric::kL2Bytes);
    return read >= 0.8 * buffer && read <= 1.2 * buffer && (!(l2 >= 0) || l2 >= 0.9 * buffer);
  };
  std::vector<size_t> out;
  if (r.kernels.size() == 2 * sweeps) {
    for (size_t k = 0; k < r.kernels.size(); k += 2) out.push_back(k);
    bool all = true;
    for (size_t k : out) all = all && looks_like_sweep(k);
    if (all) return out;
    out.clear();
  }
  for (size_t k = 0; k < r.kernels.size(); ++k)
    if (looks_like_sweep(k)) out.push_back(k);
  if (out.size() != sweeps) out.clear();
  return out;
}

}  // namespace

void drop_l2_sweeps(CounterPassResult& r, size_t sweeps, size_t buffer_bytes) {
  if (sweeps == 0) return;
  const std::vector<size_t> found = find_sweeps(r, sweeps, static_cast<double>(buffer_bytes));
  if (found.empty()) {
    throw std::runtime_error("could not tell the " + std::to_string(sweeps) +
                             " L2 sweep(s) from the workload's " + "kernels among " +
                             std::to_string(r.kernels.size()) + " ranges");
  }
  std::vector<KernelCounters> kept;
  size_t next = 0;
  for (size_t k = 0; k < r.kernels.size(); ++k) {
    if (next < found.size() && found[next] == k) {
      ++next;
      continue;
    }
    kept.push_back(std::move(r.kernels[k]));
    kept.back().index = kept.size() - 1;
  }
  r.kernels = std::move(kept);
  r.l2_sweeps = sweeps;
}

void KernelCounterSession::Impl::collect() {
  if (pass_failure) throw CounterFailure(*pass_failure);
  if (started) stop_pass();
  if (!all_submitted) {
    detail::fail(CounterAvailability::kFailed,
                 user_replay
                     ? "the workload ran " + std::to_string(passes_run) + " of the " +
                           std::to_string(result.passes) + " passes the metrics need (user replay)"
                     : std::string("the range profiler did not complete every pass in "
                                   "kernel replay"));
  }

  auto decode = detail::cupti_params<CUpti_RangeProfiler_DecodeData_Params>(
      CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = profiler;
  check_cupti(cuptiRangeProfilerDecodeData(&decode), "decoding the counters");
  result.dropped_ranges = decode.numOfRangeDropped;

  auto info = detail::cupti_params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = counter_data.data();
  info.counterDataImageSize = counter_data.size();
  check_cupti(cuptiRangeProfilerGetCounterDataInfo(&info), "counting the profiled kernels");

  result.kernels.reserve(info.numTotalRanges);
  for (size_t i = 0; i < info.numTotalRanges; ++i) {
    KernelCounters k;
    k.index = i;
    auto range = detail::cupti_params<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(
        CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
    range.pCounterDataImage = counter_data.data();
    range.counterDataImageSize = counter_data.size();
    range.rangeIndex = i;
    range.rangeDelimiter = "/";
    const CUptiResult info_result = cuptiRangeProfilerCounterDataGetRangeInfo(&range);
    detail::trace("reading a range's name", info_result);
    if (info_result == CUPTI_SUCCESS && range.rangeName) {
      k.range_name = range.rangeName;
    }
    k.values = host->evaluate(counter_data, i);
    result.kernels.push_back(std::move(k));
  }
  result.limit_reached = result.kernels.size() >= range_capacity();
  if (flusher && sweeps_per_pass && *sweeps_per_pass > 0) {
    try {
      drop_l2_sweeps(result, *sweeps_per_pass, flusher->buffer_bytes());
    } catch (const std::exception& e) {
      detail::fail(CounterAvailability::kFailed, e.what());
    }
  }
}

void KernelCounterSession::Impl::release() {
  if (profiler != nullptr) {
    if (started) {
      auto stop = detail::cupti_params<CUpti_RangeProfiler_Stop_Params>(
          CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
      stop.pRangeProfilerObject = profiler;
      detail::trace("stopping the range profiler (cleanup)", cuptiRangeProfilerStop(&stop));
      started = false;
    }
    auto disable = detail::cupti_params<CUpti_RangeProfiler_Disable_Params>(
        CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    disable.pRangeProfilerObject = profiler;
    detail::trace("disabling the range profiler", cuptiRangeProfilerDisable(&disable));
    profiler = nullptr;
  }
  host.reset();
  api.reset();
  flusher.reset();
  config.clear();
  counter_data.clear();
}

KernelCounterSession::KernelCounterSession(CounterPassOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

KernelCounterSession::~KernelCounterSession() {
  impl_->release();
}

CounterStatus KernelCounterSession::begin() {
  impl_->release();
  impl_->result = CounterPassResult{};
  try {
    impl_->begin();
    impl_->begin_status = CounterStatus::success();
  } catch (const CounterFailure& f) {
    impl_->begin_status = f.status;
    impl_->release();
  } catch (const std::exception& e) {
    impl_->begin_status = {CounterAvailability::kFailed, e.what()};
    impl_->release();
  }
  return impl_->begin_status;
}

bool KernelCounterSession::active() const {
  return impl_->profiler != nullptr && (impl_->started || impl_->user_replay);
}

size_t KernelCounterSession::passes() const {
  return impl_->result.passes;
}

bool KernelCounterSession::begin_pass() {
  Impl& d = *impl_;
  if (!d.user_replay || d.profiler == nullptr || d.all_submitted || d.pass_failure) return false;
  if (d.started) end_pass();
  if (d.all_submitted || d.pass_failure) return false;
  try {
    d.start();
  } catch (const CounterFailure& f) {
    d.pass_failure = f.status;
    return false;
  }
  return true;
}

void KernelCounterSession::end_pass() {
  Impl& d = *impl_;
  if (!d.user_replay || !d.started) return;
  try {
    d.stop_pass();
  } catch (const CounterFailure& f) {
    if (!d.pass_failure) d.pass_failure = f.status;
  }
}

bool KernelCounterSession::all_passes_done() const {
  return impl_->all_submitted;
}

void KernelCounterSession::before_kernel(void* stream) {
  Impl& d = *impl_;
  if (!d.flusher || !d.started) return;
  try {
    d.flusher->flush(stream);
    ++d.sweeps_this_pass;
  } catch (const std::exception& e) {
    if (!d.pass_failure) d.pass_failure = CounterStatus{CounterAvailability::kFailed, e.what()};
  }
}

CounterPassResult KernelCounterSession::end() {
  if (!active()) {
    CounterPassResult r = std::move(impl_->result);
    r.status = impl_->begin_status.ok()
                   ? CounterStatus{CounterAvailability::kFailed, "end() without a begun session"}
                   : impl_->begin_status;
    r.kernels.clear();
    impl_->release();
    return r;
  }
  CounterPassResult r;
  try {
    impl_->collect();
    r = std::move(impl_->result);
    r.status = CounterStatus::success();
    add_derived_metrics(r);
  } catch (const CounterFailure& f) {
    r = std::move(impl_->result);
    r.kernels.clear();
    r.status = f.status;
  } catch (const std::exception& e) {
    r = std::move(impl_->result);
    r.kernels.clear();
    r.status = {CounterAvailability::kFailed, e.what()};
  }
  impl_->release();
  impl_->result = CounterPassResult{};
  return r;
}

CounterPassResult run_counter_pass(const std::function<void()>& workload,
                                   const CounterPassOptions& options) {
  KernelCounterSession session(options);
  const CounterStatus status = session.begin();
  if (!status.ok()) return session.end();
  detail::trace("running the workload", CUPTI_SUCCESS);
  try {
    if (options.replay == ReplayMode::kUser) {
      while (session.begin_pass()) {
        workload();
        session.end_pass();
      }
    } else {
      workload();
    }
  } catch (...) {
    session.end();
    throw;
  }
  detail::trace("the workload returned", CUPTI_SUCCESS);
  return session.end();
}

}  // namespace fusionscope::counters
