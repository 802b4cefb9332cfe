#include "digest.h"

#include <bit>
#include <charconv>
#include <cstdio>
#include <cstring>

namespace fusionscope::storage::detail {

namespace {

// Per-kind seeds: a record read from another table never hashes like one of this table.
enum Seed : uint64_t {
  kKernel = 1,
  kApi,
  kRange,
  kMemop,
  kMetric,
  kSample,
  kProcess,
  kInfo,
  kSession,
  kThread,
  kExtra,
};

// Ids outside the string table (a damaged name_id) hash apart from every real text.
constexpr uint64_t kUnknownString = 0x5A17C0DEull << 32;

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// Fields of version 4 join a record's hash only when they differ from their defaults: a record
// written before they existed hashes as it did, so the digests of older runs stay valid.
void add_v4(Hasher& h, int64_t external_id, uint64_t extra_hash) {
  if (external_id == 0 && extra_hash == 0) return;
  h.add(uint64_t{0x5634});  // "V4": never equal to a hash of the fields before it
  h.add(external_id);
  h.add(extra_hash);
}

}  // namespace

void Hasher::add(double v) {
  // SQLite may keep an integral REAL as an integer and gives back +0.0 for -0.0: hash the value
  // as it reads back.
  if (v == 0.0) v = 0.0;
  add(std::bit_cast<uint64_t>(v));
}

void Hasher::add(std::string_view text) {
  add(uint64_t{text.size()});
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, text.data() + i, 8);
    add(w);
  }
  if (i < text.size()) {
    uint64_t w = 0;
    std::memcpy(&w, text.data() + i, text.size() - i);
    add(w);
  }
}

uint64_t Hasher::value() const {
  uint64_t z = h_ + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

namespace {
uint64_t text_hash(std::string_view text) {
  Hasher x(0);
  x.add(text);
  return x.value() | 1;  // never 0, which marks "not computed"
}
}  // namespace

uint64_t StringHashes::of(StringId id) {
  if (strings_ == nullptr) {
    if (const uint64_t* h = fetched_.find(id)) return *h;
    const std::optional<std::string> text = fetch_(id);
    if (!text) return kUnknownString | id;
    const uint64_t h = text_hash(*text);
    fetched_.insert(id, h);
    return h;
  }
  if (id >= strings_->size()) return kUnknownString | id;
  if (cache_.size() < strings_->size()) cache_.resize(strings_->size(), 0);
  uint64_t& h = cache_[id];
  if (h == 0) h = text_hash((*strings_)[id]);
  return h;
}

void StringHashes::remember(StringId id, std::string_view text) {
  if (strings_ == nullptr) fetched_.insert(id, text_hash(text));
}

void StringHashes::forget() {
  fetched_.clear();
}

uint64_t record_hash(const KernelRecord& r, StringHashes& s) {
  Hasher h(kKernel);
  h.add(r.start_ns);
  h.add(r.end_ns);
  h.add(r.device);
  h.add(r.stream);
  h.add(r.correlation_id);
  h.add(s.of(r.name));
  h.add(s.of(r.op));
  for (uint32_t v : {r.grid.x, r.grid.y, r.grid.z, r.block.x, r.block.y, r.block.z, r.registers,
                     r.static_smem, r.dynamic_smem, r.pid})
    h.add(v);
  add_v4(h, r.external_id, r.extra == kNoString ? 0 : s.of(r.extra));
  return h.value();
}

uint64_t record_hash(const ApiCallRecord& r, StringHashes& s) {
  Hasher h(kApi);
  h.add(r.start_ns);
  h.add(r.end_ns);
  h.add(r.thread_id);
  h.add(r.correlation_id);
  h.add(s.of(r.name));
  h.add(uint32_t{static_cast<uint8_t>(r.domain)});
  h.add(r.pid);
  add_v4(h, r.external_id, r.extra == kNoString ? 0 : s.of(r.extra));
  return h.value();
}

uint64_t record_hash(const RangeRecord& r, StringHashes& s) {
  Hasher h(kRange);  // depth is derived on load, not stored
  h.add(r.start_ns);
  h.add(r.end_ns);
  h.add(r.thread_id);
  h.add(s.of(r.name));
  h.add(uint32_t{static_cast<uint8_t>(r.kind)});
  h.add(r.pid);
  add_v4(h, r.external_id, r.extra == kNoString ? 0 : s.of(r.extra));
  if (r.event_index != -1) h.add(int64_t{r.event_index});
  return h.value();
}

uint64_t record_hash(const MemopRecord& r, StringHashes& s) {
  Hasher h(kMemop);
  h.add(r.start_ns);
  h.add(r.end_ns);
  h.add(r.device);
  h.add(r.stream);
  h.add(r.correlation_id);
  h.add(r.bytes);
  h.add(uint32_t{static_cast<uint8_t>(r.kind)});
  h.add(uint32_t{static_cast<uint8_t>(r.copy_kind)});
  h.add(r.pid);
  add_v4(h, r.external_id, r.extra == kNoString ? 0 : s.of(r.extra));
  return h.value();
}

uint64_t record_hash(const KernelMetricRecord& r, StringHashes& s) {
  Hasher h(kMetric);
  h.add(r.correlation_id);
  h.add(s.of(r.name));
  h.add(s.of(r.unit));
  h.add(r.value);
  return h.value();
}

uint64_t record_hash(const SampleRecord& r, StringHashes& s) {
  Hasher h(kSample);
  h.add(r.t_ns);
  h.add(s.of(r.metric));
  h.add(r.value);
  return h.value();
}

uint64_t record_hash(const ProcessRecord& r, StringHashes& s) {
  Hasher h(kProcess);
  h.add(r.pid);
  h.add(s.of(r.name));
  return h.value();
}

uint64_t record_hash(const ThreadRecord& r, StringHashes& s) {
  Hasher h(kThread);
  h.add(r.pid);
  h.add(r.thread_id);
  h.add(s.of(r.name));
  return h.value();
}

uint64_t record_hash(const RunExtraRecord& r, StringHashes&) {
  Hasher h(kExtra);
  h.add(std::string_view(r.key));
  h.add(std::string_view(r.value));
  return h.value();
}

namespace {

struct Field {
  const char* key;
  uint64_t RecordsDigest::*member;
  bool since_v4 = false;  // absent from digests written before version 4: reads as 0
};
constexpr Field kFields[] = {
    {"kernels", &RecordsDigest::kernels},
    {"memops", &RecordsDigest::memops},
    {"api_calls", &RecordsDigest::api_calls},
    {"ranges", &RecordsDigest::ranges},
    {"kernel_metrics", &RecordsDigest::kernel_metrics},
    {"samples", &RecordsDigest::samples},
    {"processes", &RecordsDigest::processes},
    {"threads", &RecordsDigest::threads, true},
    {"extras", &RecordsDigest::extras, true},
};

}  // namespace

std::string RecordsDigest::encode() const {
  std::string out;
  for (const Field& f : kFields) {
    // Counts added by version 4 are written only when there is something to count, so that a
    // run like those version 3 wrote has the digest version 3 wrote.
    if (f.since_v4 && this->*f.member == 0) continue;
    out += std::string(f.key) + "=" + std::to_string(this->*f.member) + " ";
  }
  return out + "hash=" + hex(hash);
}

std::optional<RecordsDigest> RecordsDigest::decode(std::string_view text) {
  RecordsDigest d;
  auto take = [&](std::string_view key, uint64_t& value, int base) {
    if (!text.starts_with(key) || text.size() <= key.size() || text[key.size()] != '=')
      return false;
    text.remove_prefix(key.size() + 1);
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    if (ec != std::errc() || end == text.data()) return false;
    text.remove_prefix(static_cast<size_t>(end - text.data()));
    if (!text.empty()) {
      if (text.front() != ' ') return false;
      text.remove_prefix(1);
    }
    return true;
  };
  for (const Field& f : kFields) {
    if (f.since_v4 && !text.starts_with(std::string(f.key) + "=")) continue;
    if (!take(f.key, d.*f.member, 10)) return std::nullopt;
  }
  if (!take("hash", d.hash, 16) || !text.empty()) return std::nullopt;
  return d;
}

RecordsDigest digest_records(const RunData& run, StringHashes& s) {
  RecordsDigest d;
  auto fold = [&](const auto& records, uint64_t& count) {
    count = records.size();
    for (const auto& r : records) d.hash += record_hash(r, s);
  };
  fold(run.kernels, d.kernels);
  fold(run.memops, d.memops);
  fold(run.api_calls, d.api_calls);
  fold(run.ranges, d.ranges);
  fold(run.kernel_metrics, d.kernel_metrics);
  fold(run.samples, d.samples);
  fold(run.processes, d.processes);
  fold(run.threads, d.threads);
  fold(run.extras, d.extras);
  return d;
}

std::string describe_difference(const RecordsDigest& expected, const RecordsDigest& found) {
  std::string out;
  for (const Field& f : kFields) {
    const uint64_t want = expected.*f.member, got = found.*f.member;
    if (want == got) continue;
    if (!out.empty()) out += ", ";
    out += std::to_string(got) + " " + f.key + " where " + std::to_string(want) + " were written";
  }
  if (out.empty()) out = "the records' contents differ from what was written";
  return out;
}

std::string info_digest(const RunInfo& r, std::string_view records_digest) {
  Hasher h(kInfo);
  h.add(r.id);
  for (const std::string* t : {&r.name, &r.config_json, &r.kind, &r.variant, &r.dtype})
    h.add(std::string_view(*t));
  h.add(int64_t{r.warmup});
  h.add(int64_t{r.iterations});
  h.add(int64_t{r.cuda_graph ? 1 : 0});
  h.add(r.wall_ns);
  h.add(int64_t{static_cast<uint8_t>(r.status)});
  for (const std::string* t : {&r.error, &r.trace_status}) h.add(std::string_view(*t));
  h.add(r.dropped_records);
  h.add(std::string_view(r.created_utc));
  h.add(int64_t{static_cast<uint8_t>(r.state)});
  h.add(records_digest);
  return hex(h.value());
}

std::string session_digest(const SessionInfo& s,
                           const std::vector<std::pair<std::string, std::string>>& properties) {
  Hasher h(kSession);
  for (const std::string* t : {&s.name, &s.created_utc, &s.host, &s.gpu_name})
    h.add(std::string_view(*t));
  h.add(int64_t{s.cc_major});
  h.add(int64_t{s.cc_minor});
  h.add(int64_t{s.sm_count});
  for (double v : {s.mem_bandwidth_gbs, s.peak_fp32_tflops, s.peak_tensor_tflops,
                   s.calibrated_bandwidth_gbs, s.calibrated_tensor_tflops})
    h.add(v);
  for (const std::string* t : {&s.driver_version, &s.cuda_version, &s.cupti_version, &s.notes})
    h.add(std::string_view(*t));
  h.add(uint64_t{properties.size()});
  for (const auto& [key, value] : properties) {
    h.add(std::string_view(key));
    h.add(std::string_view(value));
  }
  return hex(h.value());
}

}  // namespace fusionscope::storage::detail
