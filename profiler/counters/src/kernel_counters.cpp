#include "fusionscope/counters/kernel_counters.h"

#include <cuda_runtime_api.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "cupti_status.h"
#include "device_context.h"
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
          m::kFfma, m::kFadd, m::kFmul}) {
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

  void begin();
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
  size.maxNumOfRanges = options.max_kernels;
  size.maxNumRangeTreeNodes = static_cast<uint32_t>(options.max_kernels);
  check_cupti(cuptiRangeProfilerGetCounterDataSize(&size), "sizing the counter data");
  counter_data.assign(size.counterDataSize, 0);

  auto init = detail::cupti_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = profiler;
  init.counterDataSize = counter_data.size();
  init.pCounterData = counter_data.data();
  check_cupti(cuptiRangeProfilerCounterDataImageInitialize(&init), "preparing the counter data");

  // One range per kernel launch, each kernel replayed by CUPTI once per pass.
  auto set = detail::cupti_params<CUpti_RangeProfiler_SetConfig_Params>(
      CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  set.pRangeProfilerObject = profiler;
  set.configSize = config.size();
  set.pConfig = config.data();
  set.counterDataImageSize = counter_data.size();
  set.pCounterDataImage = counter_data.data();
  set.range = CUPTI_AutoRange;
  set.replayMode = CUPTI_KernelReplay;
  set.maxRangesPerPass = options.max_kernels;
  set.numNestingLevels = 1;
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  check_cupti(cuptiRangeProfilerSetConfig(&set), "configuring the range profiler");

  auto start = detail::cupti_params<CUpti_RangeProfiler_Start_Params>(
      CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  start.pRangeProfilerObject = profiler;
  check_cupti(cuptiRangeProfilerStart(&start), "starting the range profiler");
  started = true;
}

void KernelCounterSession::Impl::collect() {
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
  if (!stop.isAllPassSubmitted) {
    detail::fail(CounterAvailability::kFailed,
                 "the range profiler did not complete every pass in kernel replay");
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
  result.limit_reached = result.kernels.size() >= options.max_kernels;
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
  return impl_->started;
}

CounterPassResult KernelCounterSession::end() {
  if (!impl_->started) {
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
    workload();
  } catch (...) {
    session.end();
    throw;
  }
  detail::trace("the workload returned", CUPTI_SUCCESS);
  return session.end();
}

}  // namespace fusionscope::counters
