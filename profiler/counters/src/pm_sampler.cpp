#include "fusionscope/counters/pm_sampler.h"

#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_target.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "cupti_status.h"
#include "device_context.h"
#include "fusionscope/counters/metric_names.h"
#include "profiler_host.h"

namespace fusionscope::counters {

using detail::check_cupti;
using detail::CounterFailure;

const std::vector<std::string>& default_sample_metrics() {
  static const std::vector<std::string> metrics = [] {
    namespace m = metric;
    std::vector<std::string> v;
    // No DRAM throughput percentage: as a throughput metric it pulls in many more raw counters
    // per sample, and read + write bytes per second over the calibrated bandwidth says the same.
    for (std::string_view name : {m::kSampleDramRead, m::kSampleDramWrite, m::kSampleSmActivePct,
                                  m::kSampleTensorActivePct}) {
      v.emplace_back(name);
    }
    return v;
  }();
  return metrics;
}

struct PmSampler::Impl {
  PmSamplingOptions options;
  PmSamplingResult result;
  bool running = false;

  detail::DeviceContext device;
  std::unique_ptr<detail::ProfilerApi> api;
  std::unique_ptr<detail::ProfilerHost> host;
  CUpti_PmSampling_Object* sampler = nullptr;
  std::vector<uint8_t> config;
  std::vector<uint8_t> counter_data;
  size_t image_bytes = 0;
  // Full images waiting to be evaluated. The decode thread only drains the hardware buffer into
  // images; turning samples into values (slow) waits for stop(), so draining keeps up at 5 us.
  std::vector<std::vector<uint8_t>> filled;
  size_t filled_samples = 0;

  std::optional<int64_t> globaltimer_offset;        // CUPTI clock minus GPU global timer, if given
  std::pair<int64_t, int64_t> start_bracket{0, 0};  // CUPTI clock around cuptiPmSamplingStart
  bool clock_decided = false;

  // Picks the mapping of sample times onto the CUPTI clock from the first sample (see header).
  void decide_clock(int64_t first_sample_start);

  std::thread decoder;
  std::mutex mutex;  // guards `stopping` and serialises decodes
  std::condition_variable wake;
  bool stopping = false;
  CounterStatus decode_status;  // the first decode error, if any

  void start();
  // Drains the hardware buffer into the current image (a full one goes to `filled`); returns true
  // when every record was decoded.
  bool decode_once();
  size_t completed_samples(const std::vector<uint8_t>& image) const;
  // A fresh, initialised image to decode into (CUPTI refuses a copy of a blank one).
  void new_image();
  void keep_image();
  // Samples of every kept image into `result`, on the CUPTI clock.
  void evaluate_images();
  void decode_loop();
  void release();
};

void PmSampler::Impl::start() {
  if (options.interval_ns == 0)
    detail::fail(CounterAvailability::kFailed, "interval_ns must be > 0");
  if (options.samples_per_decode == 0) {
    detail::fail(CounterAvailability::kFailed, "samples_per_decode must be > 0");
  }
  device = detail::open_device(options.device);
  api = std::make_unique<detail::ProfilerApi>();
  detail::require_support(device, CUPTI_PROFILER_PM_SAMPLING);
  result.chip = detail::chip_name(device);
  result.interval_ns = options.interval_ns;
  clock_decided = false;
  filled.clear();
  filled_samples = 0;
  globaltimer_offset = options.clock_offset_ns;

  auto avail = detail::cupti_params<CUpti_PmSampling_GetCounterAvailability_Params>(
      CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE);
  avail.deviceIndex = static_cast<size_t>(device.index);
  check_cupti(cuptiPmSamplingGetCounterAvailability(&avail),
              "reading which counters are available");
  std::vector<uint8_t> availability(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  check_cupti(cuptiPmSamplingGetCounterAvailability(&avail),
              "reading which counters are available");

  host = std::make_unique<detail::ProfilerHost>(CUPTI_PROFILER_TYPE_PM_SAMPLING, result.chip,
                                                availability);
  result.metrics = detail::known_metrics(*host, options.metrics, result.skipped_metrics);
  for (const auto& m : result.metrics) result.units.push_back(host->unit(m));
  config = host->configure(result.metrics);
  const size_t passes = detail::ProfilerHost::passes(config);
  if (passes != 1) {
    detail::fail(CounterAvailability::kNotSupported,
                 "the sampled metrics need " + std::to_string(passes) + " hardware passes on " +
                     result.chip + "; PM sampling collects one");
  }

  auto enable = detail::cupti_params<CUpti_PmSampling_Enable_Params>(
      CUpti_PmSampling_Enable_Params_STRUCT_SIZE);
  enable.deviceIndex = static_cast<size_t>(device.index);
  check_cupti(cuptiPmSamplingEnable(&enable), "enabling PM sampling");
  sampler = enable.pPmSamplingObject;

  auto size = detail::cupti_params<CUpti_PmSampling_GetCounterDataSize_Params>(
      CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pPmSamplingObject = sampler;
  size.pMetricNames = const_cast<const char**>(host->metric_names().data());
  size.numMetrics = host->metric_names().size();
  size.maxSamples = options.samples_per_decode;
  check_cupti(cuptiPmSamplingGetCounterDataSize(&size), "sizing the sample buffer");
  image_bytes = size.counterDataSize;
  if (detail::tracing()) {
    std::fprintf(stderr, "counters: PM sample image: %zu bytes for %u samples\n", image_bytes,
                 options.samples_per_decode);
  }
  new_image();

  auto set = detail::cupti_params<CUpti_PmSampling_SetConfig_Params>(
      CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE);
  set.pPmSamplingObject = sampler;
  set.configSize = config.size();
  set.pConfig = config.data();
  set.hardwareBufferSize = options.hardware_buffer_bytes;
  set.samplingInterval = options.interval_ns;
  set.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  set.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  check_cupti(cuptiPmSamplingSetConfig(&set), "configuring PM sampling");

  auto start = detail::cupti_params<CUpti_PmSampling_Start_Params>(
      CUpti_PmSampling_Start_Params_STRUCT_SIZE);
  start.pPmSamplingObject = sampler;
  uint64_t before = 0, after = 0;
  cuptiGetTimestamp(&before);
  check_cupti(cuptiPmSamplingStart(&start), "starting PM sampling");
  cuptiGetTimestamp(&after);
  start_bracket = {static_cast<int64_t>(before), static_cast<int64_t>(after)};
  running = true;
  stopping = false;
  decoder = std::thread([this] { decode_loop(); });
}

void PmSampler::Impl::decide_clock(int64_t first_end) {
  clock_decided = true;
  // The first sample ends within an interval or so after sampling started.
  const int64_t slack = 50'000 + 4 * static_cast<int64_t>(options.interval_ns);
  const auto fits = [&](int64_t t) {
    return t >= start_bracket.first && t <= start_bracket.second + slack;
  };
  result.clock_offset_ns = 0;
  if (fits(first_end)) {
    result.clock_mapping = "CUPTI clock";
  } else if (globaltimer_offset && fits(first_end + *globaltimer_offset)) {
    result.clock_offset_ns = *globaltimer_offset;
    result.clock_mapping = "GPU global timer + offset";
  } else {
    result.clock_mapping = "CUPTI clock (unverified: the first sample does not follow the start)";
  }
  if (detail::tracing()) {
    std::fprintf(stderr,
                 "counters: first PM sample ends at %lld; sampling started within [%lld, %lld]; "
                 "mapping: %s\n",
                 static_cast<long long>(first_end), static_cast<long long>(start_bracket.first),
                 static_cast<long long>(start_bracket.second), result.clock_mapping.c_str());
  }
}

size_t PmSampler::Impl::completed_samples(const std::vector<uint8_t>& image) const {
  auto info = detail::cupti_params<CUpti_PmSampling_GetCounterDataInfo_Params>(
      CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = image.data();
  info.counterDataImageSize = image.size();
  check_cupti(cuptiPmSamplingGetCounterDataInfo(&info), "counting PM samples");
  return info.numCompletedSamples;
}

void PmSampler::Impl::new_image() {
  counter_data.assign(image_bytes, 0);
  auto init = detail::cupti_params<CUpti_PmSampling_CounterDataImage_Initialize_Params>(
      CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pPmSamplingObject = sampler;
  init.counterDataSize = counter_data.size();
  init.pCounterData = counter_data.data();
  check_cupti(cuptiPmSamplingCounterDataImageInitialize(&init), "preparing a sample buffer");
}

void PmSampler::Impl::keep_image() {
  const size_t n = completed_samples(counter_data);
  if (n == 0) return;
  if (filled_samples + n > options.max_samples) {
    result.dropped_samples += n;
  } else {
    filled_samples += n;
    filled.push_back(std::move(counter_data));
  }
  new_image();
}

bool PmSampler::Impl::decode_once() {
  auto decode = detail::cupti_params<CUpti_PmSampling_DecodeData_Params>(
      CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE);
  decode.pPmSamplingObject = sampler;
  decode.pCounterDataImage = counter_data.data();
  decode.counterDataImageSize = counter_data.size();
  CUptiResult r = cuptiPmSamplingDecodeData(&decode);
  detail::trace("decoding PM samples", r);
  if (r == CUPTI_ERROR_OUT_OF_MEMORY && completed_samples(counter_data) > 0) {
    // Out of memory with samples in the image: it may be the image that is full. Keep it and
    // decode into a fresh one before concluding that the hardware buffer overflowed.
    keep_image();
    decode.pCounterDataImage = counter_data.data();
    decode.counterDataImageSize = counter_data.size();
    r = cuptiPmSamplingDecodeData(&decode);
    detail::trace("decoding PM samples into a fresh image", r);
  }
  if (r == CUPTI_ERROR_OUT_OF_MEMORY) {  // the hardware buffer overflowed; sampling ends here
    result.hardware_overflow = true;
    return true;
  }
  check_cupti(r, "decoding PM samples");
  if (decode.overflow) result.hardware_overflow = true;
  if (decode.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) {
    keep_image();
    return false;
  }
  return decode.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS;
}

void PmSampler::Impl::evaluate_images() {
  result.samples.reserve(filled_samples);
  const int64_t interval = static_cast<int64_t>(options.interval_ns);
  for (const auto& image : filled) {
    const size_t n = completed_samples(image);
    for (size_t i = 0; i < n; ++i) {
      auto sample = detail::cupti_params<CUpti_PmSampling_CounterData_GetSampleInfo_Params>(
          CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE);
      sample.pPmSamplingObject = sampler;
      sample.pCounterDataImage = image.data();
      sample.counterDataImageSize = image.size();
      sample.sampleIndex = i;
      check_cupti(cuptiPmSamplingCounterDataGetSampleInfo(&sample), "reading a PM sample");
      PmSample s;
      s.end_ns = static_cast<int64_t>(sample.endTimestamp);
      s.start_ns = static_cast<int64_t>(sample.startTimestamp);
      // The first sample starts when the counters were last armed, possibly long before
      // sampling started: it covers one interval.
      if (result.samples.empty() && s.end_ns - s.start_ns > 2 * interval) {
        s.start_ns = s.end_ns - interval;
      }
      if (!clock_decided) decide_clock(s.end_ns);
      s.start_ns += result.clock_offset_ns;
      s.end_ns += result.clock_offset_ns;
      s.values = host->evaluate(image, i);
      result.samples.push_back(std::move(s));
    }
  }
  filled.clear();
}

void PmSampler::Impl::decode_loop() {
  std::unique_lock<std::mutex> lock(mutex);
  while (!stopping) {
    try {
      // Drain fully: a full host image stops a decode before the hardware buffer is empty.
      for (int i = 0; i < 1024 && !decode_once(); ++i) {
      }
    } catch (const CounterFailure& f) {
      if (decode_status.ok()) decode_status = f.status;
      return;
    }
    wake.wait_for(lock, std::chrono::milliseconds(options.decode_period_ms),
                  [this] { return stopping; });
  }
}

void PmSampler::Impl::release() {
  if (decoder.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    decoder.join();
  }
  if (sampler != nullptr) {
    if (running) {
      auto stop = detail::cupti_params<CUpti_PmSampling_Stop_Params>(
          CUpti_PmSampling_Stop_Params_STRUCT_SIZE);
      stop.pPmSamplingObject = sampler;
      cuptiPmSamplingStop(&stop);
    }
    auto disable = detail::cupti_params<CUpti_PmSampling_Disable_Params>(
        CUpti_PmSampling_Disable_Params_STRUCT_SIZE);
    disable.pPmSamplingObject = sampler;
    cuptiPmSamplingDisable(&disable);
    sampler = nullptr;
  }
  running = false;
  host.reset();
  api.reset();
  counter_data.clear();
}

PmSampler::PmSampler(PmSamplingOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

PmSampler::~PmSampler() {
  impl_->release();
}

CounterStatus PmSampler::start() {
  impl_->release();
  impl_->result = PmSamplingResult{};
  impl_->decode_status = CounterStatus::success();
  try {
    impl_->start();
    impl_->result.status = CounterStatus::success();
  } catch (const CounterFailure& f) {
    impl_->result.status = f.status;
    impl_->release();
  } catch (const std::exception& e) {
    impl_->result.status = {CounterAvailability::kFailed, e.what()};
    impl_->release();
  }
  return impl_->result.status;
}

bool PmSampler::running() const {
  return impl_->running;
}

PmSamplingResult PmSampler::stop() {
  Impl& d = *impl_;
  if (!d.running) {
    PmSamplingResult r = std::move(d.result);
    if (r.status.ok())
      r.status = {CounterAvailability::kFailed, "stop() without a started sampler"};
    d.result = PmSamplingResult{};
    return r;
  }
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    d.stopping = true;
  }
  d.wake.notify_all();
  d.decoder.join();
  try {
    auto stop = detail::cupti_params<CUpti_PmSampling_Stop_Params>(
        CUpti_PmSampling_Stop_Params_STRUCT_SIZE);
    stop.pPmSamplingObject = d.sampler;
    d.running = false;
    check_cupti(cuptiPmSamplingStop(&stop), "stopping PM sampling");
    if (d.decode_status.ok()) {
      for (int i = 0; i < 1024 && !d.decode_once(); ++i) {
      }
      d.keep_image();
      d.evaluate_images();
    }
    d.result.status = d.decode_status;
  } catch (const CounterFailure& f) {
    d.result.status = f.status;
  }
  std::stable_sort(d.result.samples.begin(), d.result.samples.end(),
                   [](const PmSample& a, const PmSample& b) { return a.start_ns < b.start_ns; });
  d.release();
  PmSamplingResult r = std::move(d.result);
  d.result = PmSamplingResult{};
  return r;
}

PmSamplingResult sample_during(const std::function<void()>& workload,
                               const PmSamplingOptions& options) {
  PmSampler sampler(options);
  if (!sampler.start().ok()) return sampler.stop();
  try {
    workload();
  } catch (...) {
    sampler.stop();
    throw;
  }
  cudaDeviceSynchronize();
  return sampler.stop();
}

}  // namespace fusionscope::counters
