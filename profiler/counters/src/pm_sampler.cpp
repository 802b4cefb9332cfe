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
#include <deque>
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

const std::vector<std::string>& dram_sample_metrics() {
  static const std::vector<std::string> metrics = {std::string(metric::kSampleDramRead),
                                                   std::string(metric::kSampleDramWrite)};
  return metrics;
}

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

std::vector<PmGap> sample_gaps(const std::vector<PmSample>& samples, uint64_t interval_ns,
                               int64_t stopped_ns) {
  std::vector<PmGap> gaps;
  const int64_t interval = static_cast<int64_t>(interval_ns);
  for (size_t i = 1; i < samples.size(); ++i) {
    const int64_t from = samples[i - 1].end_ns, to = samples[i].start_ns;
    if (to - from > interval / 2) gaps.push_back({from, to});
  }
  // Samples end up to a few intervals before the stop; more than that was lost.
  if (!samples.empty() && stopped_ns - samples.back().end_ns > 4 * interval + 100'000)
    gaps.push_back({samples.back().end_ns, stopped_ns});
  return gaps;
}

int64_t PmSamplingResult::lost_ns() const {
  int64_t sum = 0;
  for (const PmGap& g : gaps) sum += g.end_ns - g.start_ns;
  return sum;
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

int64_t cupti_now() {
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return static_cast<int64_t>(t);
}

}  // namespace

struct PmSampler::Impl {
  PmSamplingOptions options;
  PmSamplingResult result;
  bool running = false;

  detail::DeviceContext device;
  std::unique_ptr<detail::ProfilerApi> api;
  std::vector<uint8_t> availability;
  std::unique_ptr<detail::ProfilerHost> host;
  CUpti_PmSampling_Object* sampler = nullptr;
  std::vector<uint8_t> config;
  size_t image_bytes = 0;
  std::vector<uint8_t> counter_data;  // the image being decoded into (decode thread)
  size_t kept_samples = 0;            // samples handed to evaluation

  // Decoded images wait here for an evaluation thread (or for stop() with none); each image's
  // samples go to chunks[sequence number], so the series keeps its order.
  struct Image {
    size_t seq = 0;
    std::vector<uint8_t> data;
  };
  std::mutex queue_mutex;
  std::condition_variable queue_wake;
  std::deque<Image> queue;
  bool no_more_images = false;
  size_t next_seq = 0;
  std::vector<std::vector<PmSample>> chunks;
  std::vector<std::thread> evaluators;
  CounterStatus evaluate_status;  // the first evaluation error, if any (guarded by queue_mutex)

  std::optional<int64_t> globaltimer_offset;        // CUPTI clock minus GPU global timer, if given
  std::pair<int64_t, int64_t> start_bracket{0, 0};  // CUPTI clock around cuptiPmSamplingStart

  std::thread decoder;
  std::mutex mutex;  // for `wake`: the decode thread sleeps between drains
  std::condition_variable wake;
  // Read by the decode thread between decodes, so that stop() waits for one decode at most (a
  // decode of a busy buffer takes up to ~0.4 s on an H100), not for a whole drain.
  std::atomic<bool> stopping{false};
  CounterStatus decode_status;  // the first decode error, if any

  void start();
  // Drains the hardware buffer into the current image (a full one goes to evaluation); returns
  // true when every record was decoded.
  bool decode_once();
  size_t completed_samples(const std::vector<uint8_t>& image) const;
  // How long decoding what the hardware still holds should take (after the stop): the intervals
  // since the start not yet decoded, at most one image, at the mean decode time per sample so far.
  double expected_decode_s() const;
  // A fresh, initialised image to decode into.
  void new_image();
  // Hands the current image to evaluation and, if `fresh`, starts a new one (not after stop()'s
  // last decode: nothing would be decoded into it, and initialising one is not free).
  void keep_image(bool fresh = true);
  std::vector<PmSample> evaluate(const detail::ProfilerHost& h,
                                 const std::vector<uint8_t>& image) const;
  void evaluate_loop();
  void finish_evaluation();
  // The samples in order, on the CUPTI clock, and the gaps among them.
  void assemble();
  void decide_clock(int64_t first_sample_end);
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
  kept_samples = 0;
  globaltimer_offset = options.clock_offset_ns;

  auto avail = detail::cupti_params<CUpti_PmSampling_GetCounterAvailability_Params>(
      CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE);
  avail.deviceIndex = static_cast<size_t>(device.index);
  check_cupti(cuptiPmSamplingGetCounterAvailability(&avail),
              "reading which counters are available");
  availability.assign(avail.counterAvailabilityImageSize, 0);
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

  // Evaluation threads, each with a host object of its own (one object is not shared across
  // threads), started before sampling so that their setup is not in the sampled time.
  {
    std::lock_guard<std::mutex> lock(queue_mutex);
    queue.clear();
    chunks.clear();
    next_seq = 0;
    no_more_images = false;
    evaluate_status = CounterStatus::success();
  }
  for (uint32_t i = 0; i < options.evaluate_threads; ++i)
    evaluators.emplace_back([this] { evaluate_loop(); });

  auto set = detail::cupti_params<CUpti_PmSampling_SetConfig_Params>(
      CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE);
  set.pPmSamplingObject = sampler;
  set.configSize = config.size();
  set.pConfig = config.data();
  set.hardwareBufferSize = options.hardware_buffer_bytes;
  set.samplingInterval = options.interval_ns;
  set.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  set.hwBufferAppendMode = options.buffer_mode == PmBufferMode::kKeepLatest
                               ? CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST
                               : CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  check_cupti(cuptiPmSamplingSetConfig(&set), "configuring PM sampling");

  auto start = detail::cupti_params<CUpti_PmSampling_Start_Params>(
      CUpti_PmSampling_Start_Params_STRUCT_SIZE);
  start.pPmSamplingObject = sampler;
  const int64_t before = cupti_now();
  check_cupti(cuptiPmSamplingStart(&start), "starting PM sampling");
  const int64_t after = cupti_now();
  start_bracket = {before, after};
  result.started_ns = after;
  running = true;
  stopping = false;
  decoder = std::thread([this] { decode_loop(); });
}

void PmSampler::Impl::decide_clock(int64_t first_end) {
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

void PmSampler::Impl::keep_image(bool fresh) {
  const size_t n = completed_samples(counter_data);
  if (n == 0) return;
  if (kept_samples + n > options.max_samples) {
    result.dropped_samples += n;
  } else {
    kept_samples += n;
    ++result.times.images;
    {
      std::lock_guard<std::mutex> lock(queue_mutex);
      queue.push_back({next_seq++, std::move(counter_data)});
    }
    queue_wake.notify_one();
  }
  if (fresh) new_image();
}

double PmSampler::Impl::expected_decode_s() const {
  const size_t decoded = kept_samples + result.dropped_samples + completed_samples(counter_data);
  if (decoded == 0) return 0;
  const double intervals = static_cast<double>(result.stopped_ns - result.started_ns) /
                           static_cast<double>(options.interval_ns);
  // Samples lost earlier count as pending too, so this errs long; one decode fills one image.
  const double pending = std::clamp(intervals - static_cast<double>(decoded), 0.0,
                                    static_cast<double>(options.samples_per_decode));
  return pending * result.times.decode_s / static_cast<double>(decoded);
}

bool PmSampler::Impl::decode_once() {
  const auto t0 = Clock::now();
  auto decode = detail::cupti_params<CUpti_PmSampling_DecodeData_Params>(
      CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE);
  decode.pPmSamplingObject = sampler;
  decode.pCounterDataImage = counter_data.data();
  decode.counterDataImageSize = counter_data.size();
  // One call cannot be cut short, so the longest is what stop() may wait for.
  const auto timed_decode = [&] {
    const auto c0 = Clock::now();
    const CUptiResult rc = cuptiPmSamplingDecodeData(&decode);
    ++result.times.decode_calls;
    result.times.decode_longest_s = std::max(result.times.decode_longest_s, seconds_since(c0));
    return rc;
  };
  CUptiResult r = timed_decode();
  detail::trace("decoding PM samples", r);
  if (r == CUPTI_ERROR_OUT_OF_MEMORY && completed_samples(counter_data) > 0) {
    // Out of memory with samples in the image: it may be the image that is full. Keep it and
    // decode into a fresh one before concluding that the hardware buffer overflowed.
    keep_image();
    decode.pCounterDataImage = counter_data.data();
    decode.counterDataImageSize = counter_data.size();
    r = timed_decode();
    detail::trace("decoding PM samples into a fresh image", r);
  }
  result.times.decode_s += seconds_since(t0);
  if (r == CUPTI_ERROR_OUT_OF_MEMORY) {  // the hardware buffer overflowed
    result.hardware_overflow = true;
    return true;
  }
  check_cupti(r, "decoding PM samples");
  if (decode.overflow) result.hardware_overflow = true;
  if (decode.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) {
    // Measured on an H100 with CUPTI 13.0: the records a decode could not fit into a full image
    // are gone, not left for the next decode. Hence the hand-off below, which keeps an image
    // from filling within one decode unless the decode thread falls far behind.
    keep_image();
    return false;
  }
  // Hand a half-full image on after any decode that did not fill it (measured on the H100: a
  // decode may stop for another reason than the end of the records, so waiting for that let
  // images fill within a decode and lose 1-2 ms of samples every image).
  if (completed_samples(counter_data) * 2 > options.samples_per_decode) keep_image();
  return decode.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS;
}

std::vector<PmSample> PmSampler::Impl::evaluate(const detail::ProfilerHost& h,
                                                const std::vector<uint8_t>& image) const {
  const size_t n = completed_samples(image);
  std::vector<PmSample> out;
  out.reserve(n);
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
    s.values = h.evaluate(image, i);
    out.push_back(std::move(s));
  }
  return out;
}

void PmSampler::Impl::evaluate_loop() {
  std::unique_ptr<detail::ProfilerHost> own;
  try {
    own = std::make_unique<detail::ProfilerHost>(CUPTI_PROFILER_TYPE_PM_SAMPLING, result.chip,
                                                 availability);
    own->configure(result.metrics);
  } catch (const CounterFailure& f) {
    std::lock_guard<std::mutex> lock(queue_mutex);
    if (evaluate_status.ok()) evaluate_status = f.status;
    return;
  }
  std::unique_lock<std::mutex> lock(queue_mutex);
  while (true) {
    queue_wake.wait(lock, [this] { return !queue.empty() || no_more_images; });
    if (queue.empty()) return;
    Image img = std::move(queue.front());
    queue.pop_front();
    lock.unlock();
    const auto t0 = Clock::now();
    std::vector<PmSample> samples;
    CounterStatus failed;
    try {
      samples = evaluate(*own, img.data);
    } catch (const CounterFailure& f) {
      failed = f.status;
    }
    const double took = seconds_since(t0);
    lock.lock();
    result.times.evaluate_s += took;
    if (!failed.ok() && evaluate_status.ok()) evaluate_status = failed;
    if (chunks.size() <= img.seq) chunks.resize(img.seq + 1);
    chunks[img.seq] = std::move(samples);
  }
}

void PmSampler::Impl::finish_evaluation() {
  {
    std::lock_guard<std::mutex> lock(queue_mutex);
    no_more_images = true;
  }
  queue_wake.notify_all();
  for (auto& t : evaluators) t.join();
  evaluators.clear();
  // Without evaluation threads (or if they failed to start), what is left is evaluated here.
  while (!queue.empty()) {
    Image img = std::move(queue.front());
    queue.pop_front();
    const auto t0 = Clock::now();
    std::vector<PmSample> samples = evaluate(*host, img.data);
    result.times.evaluate_s += seconds_since(t0);
    if (chunks.size() <= img.seq) chunks.resize(img.seq + 1);
    chunks[img.seq] = std::move(samples);
  }
  if (!evaluate_status.ok()) throw CounterFailure(evaluate_status);
}

void PmSampler::Impl::assemble() {
  size_t total = 0;
  for (const auto& c : chunks) total += c.size();
  result.samples.reserve(total);
  for (auto& c : chunks)
    for (auto& s : c) result.samples.push_back(std::move(s));
  chunks.clear();
  std::stable_sort(result.samples.begin(), result.samples.end(),
                   [](const PmSample& a, const PmSample& b) { return a.end_ns < b.end_ns; });
  const int64_t interval = static_cast<int64_t>(options.interval_ns);
  if (!result.samples.empty()) {
    // The first sample of a decode may start when the counters were last armed, long before:
    // a sample covers one interval.
    for (PmSample& x : result.samples)
      if (x.end_ns - x.start_ns > interval + interval / 2) x.start_ns = x.end_ns - interval;
    decide_clock(result.samples.front().end_ns);
    for (PmSample& s : result.samples) {
      s.start_ns += result.clock_offset_ns;
      s.end_ns += result.clock_offset_ns;
    }
  }
  result.gaps = sample_gaps(result.samples, options.interval_ns, result.stopped_ns);
}

void PmSampler::Impl::decode_loop() {
  while (!stopping) {
    try {
      // Drain fully: a full host image stops a decode before the hardware buffer is empty.
      for (int i = 0; i < 1024 && !stopping && !decode_once(); ++i) {
      }
    } catch (const CounterFailure& f) {
      if (decode_status.ok()) decode_status = f.status;
      return;
    }
    std::unique_lock<std::mutex> lock(mutex);
    wake.wait_for(lock, std::chrono::milliseconds(options.decode_period_ms),
                  [this] { return stopping.load(); });
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
  if (!evaluators.empty()) {
    {
      std::lock_guard<std::mutex> lock(queue_mutex);
      no_more_images = true;
      queue.clear();
    }
    queue_wake.notify_all();
    for (auto& t : evaluators) t.join();
    evaluators.clear();
  }
  queue.clear();
  chunks.clear();
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
  const auto t0 = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    d.stopping = true;
  }
  d.wake.notify_all();
  d.decoder.join();
  d.result.times.stop_join_s = seconds_since(t0);
  try {
    auto stop = detail::cupti_params<CUpti_PmSampling_Stop_Params>(
        CUpti_PmSampling_Stop_Params_STRUCT_SIZE);
    stop.pPmSamplingObject = d.sampler;
    d.running = false;
    d.result.stopped_ns = cupti_now();
    check_cupti(cuptiPmSamplingStop(&stop), "stopping PM sampling");
    if (d.decode_status.ok()) {
      // What the hardware still holds, within a time budget: past it the rest is reported lost
      // (a gap up to the stop) rather than making stop() take seconds. A decode cannot be cut
      // short (one that fills a 10,000-sample image of the default metrics took ~0.25 s on the
      // H100), so one starts only when it is expected to end within the budget: checking the
      // clock alone let stop() take 1.09 s.
      const double budget_s = static_cast<double>(d.options.stop_decode_budget_ms) * 1e-3;
      const auto t1 = Clock::now();
      for (int i = 0; i < 1024 && seconds_since(t0) + d.expected_decode_s() < budget_s; ++i)
        if (d.decode_once()) break;
      d.keep_image(false);
      d.result.times.stop_decode_s = seconds_since(t1);
    }
    const auto t2 = Clock::now();
    d.finish_evaluation();
    d.assemble();
    d.result.times.stop_evaluate_s = seconds_since(t2);
    d.result.status = d.decode_status;
  } catch (const CounterFailure& f) {
    d.result.status = f.status;
  }
  const auto t3 = Clock::now();
  d.release();
  d.result.times.stop_release_s = seconds_since(t3);
  d.result.times.stop_s = seconds_since(t0);
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
