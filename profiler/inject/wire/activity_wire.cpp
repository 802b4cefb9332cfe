#include "activity_wire.h"

#include <cstring>
#include <type_traits>

namespace fusionscope::inject {

void FrameWriter::begin(FrameType type) {
  start_ = out_.size();
  const uint32_t placeholder = 0;
  const uint16_t t = static_cast<uint16_t>(type);
  const uint16_t flags = 0;
  raw(&placeholder, 4);
  raw(&t, 2);
  raw(&flags, 2);
}

void FrameWriter::str(std::string_view s) {
  u32(static_cast<uint32_t>(s.size()));
  raw(s.data(), s.size());
}

void FrameWriter::raw(const void* data, std::size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  out_.insert(out_.end(), p, p + n);
}

void FrameWriter::align8() {
  const std::size_t payload = out_.size() - start_ - 8;
  out_.resize(out_.size() + (8 - payload % 8) % 8, 0);
}

void FrameWriter::end() {
  const uint32_t payload = static_cast<uint32_t>(out_.size() - start_ - 8);
  std::memcpy(out_.data() + start_, &payload, 4);
}

uint8_t PayloadReader::u8() {
  uint8_t v = 0;
  raw(&v, 1);
  return v;
}
uint32_t PayloadReader::u32() {
  uint32_t v = 0;
  raw(&v, 4);
  return v;
}
uint64_t PayloadReader::u64() {
  uint64_t v = 0;
  raw(&v, 8);
  return v;
}
double PayloadReader::f64() {
  double v = 0;
  raw(&v, 8);
  return v;
}

std::string PayloadReader::str() {
  const uint32_t n = u32();
  const uint8_t* p = view(n);
  return p ? std::string(reinterpret_cast<const char*>(p), n) : std::string();
}

bool PayloadReader::raw(void* out, std::size_t n) {
  const uint8_t* p = view(n);
  if (p == nullptr) {
    std::memset(out, 0, n);
    return false;
  }
  std::memcpy(out, p, n);
  return true;
}

const uint8_t* PayloadReader::view(std::size_t n) {
  if (!ok_ || n > data_.size() - at_) {
    ok_ = false;
    return nullptr;
  }
  const uint8_t* p = data_.data() + at_;
  at_ += n;
  return p;
}

void PayloadReader::align8() {
  const std::size_t pad = (8 - at_ % 8) % 8;
  if (pad > data_.size() - at_) {
    at_ = data_.size();
    return;
  }
  at_ += pad;
}

void FrameStream::feed(std::span<const uint8_t> bytes) {
  if (consumed_ > 0 && consumed_ == buffer_.size()) {
    buffer_.clear();
    consumed_ = 0;
  } else if (consumed_ > (1u << 20) && consumed_ * 2 > buffer_.size()) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(consumed_));
    consumed_ = 0;
  }
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

bool FrameStream::next(FrameType& type, std::span<const uint8_t>& payload) {
  if (broken_ || buffer_.size() - consumed_ < 8) return false;
  uint32_t bytes = 0;
  uint16_t t = 0;
  std::memcpy(&bytes, buffer_.data() + consumed_, 4);
  std::memcpy(&t, buffer_.data() + consumed_ + 4, 2);
  if (bytes > kMaxFrameBytes) {
    broken_ = true;
    return false;
  }
  if (buffer_.size() - consumed_ - 8 < bytes) return false;
  type = static_cast<FrameType>(t);
  payload = std::span<const uint8_t>(buffer_.data() + consumed_ + 8, bytes);
  consumed_ += 8 + bytes;
  return true;
}

void encode_hello(const Hello& hello, std::vector<uint8_t>& out) {
  FrameWriter w(out);
  w.begin(FrameType::kHello);
  w.u32(hello.version);
  w.u32(hello.pid);
  w.u32(hello.ppid);
  w.u64(hello.cupti_ns);
  w.u64(hello.monotonic_ns);
  w.u32(static_cast<uint32_t>(hello.argv.size()));
  for (const auto& a : hello.argv) w.str(a);
  w.end();
}

Hello decode_hello(std::span<const uint8_t> payload, bool* ok) {
  PayloadReader r(payload);
  Hello h;
  h.version = r.u32();
  h.pid = r.u32();
  h.ppid = r.u32();
  h.cupti_ns = r.u64();
  h.monotonic_ns = r.u64();
  const uint32_t n = r.u32();
  for (uint32_t i = 0; i < n && r.ok(); ++i) h.argv.push_back(r.str());
  if (ok) *ok = r.ok() && h.version == kWireVersion;
  return h;
}

void encode_status(StatusLevel level, std::string_view text, std::vector<uint8_t>& out) {
  FrameWriter w(out);
  w.begin(FrameType::kStatus);
  w.u32(static_cast<uint32_t>(level));
  w.str(text);
  w.end();
}

void encode_dropped(uint64_t count, std::vector<uint8_t>& out) {
  FrameWriter w(out);
  w.begin(FrameType::kDropped);
  w.u64(count);
  w.end();
}

void encode_crash(int signal, std::vector<uint8_t>& out) {
  FrameWriter w(out);
  w.begin(FrameType::kCrash);
  w.u32(static_cast<uint32_t>(signal));
  w.end();
}

void encode_end(std::vector<uint8_t>& out) {
  FrameWriter w(out);
  w.begin(FrameType::kEnd);
  w.end();
}

void encode_graph_nodes(std::span<const WireGraphNode> nodes, std::vector<uint8_t>& out) {
  FrameWriter w(out);
  w.begin(FrameType::kGraphNodes);
  w.u32(static_cast<uint32_t>(nodes.size()));
  for (const auto& n : nodes) {
    w.u8(n.cloned);
    w.u64(n.node_id);
    w.u64(n.original_id);
    w.u32(n.thread_id);
    w.u64(static_cast<uint64_t>(n.t_ns));
  }
  w.end();
}

std::vector<WireGraphNode> decode_graph_nodes(std::span<const uint8_t> payload, bool* ok) {
  PayloadReader r(payload);
  std::vector<WireGraphNode> nodes;
  const uint32_t n = r.u32();
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    WireGraphNode g;
    g.cloned = r.u8();
    g.node_id = r.u64();
    g.original_id = r.u64();
    g.thread_id = r.u32();
    g.t_ns = static_cast<int64_t>(r.u64());
    if (r.ok()) nodes.push_back(g);
  }
  if (ok) *ok = r.ok();
  return nodes;
}

void encode_counters(const WireCounters& c, std::vector<uint8_t>& out) {
  FrameWriter w(out);
  w.begin(FrameType::kCounters);
  w.u32(c.availability);
  w.str(c.message);
  w.str(c.chip);
  w.str(c.window);
  w.u32(c.passes);
  w.u8(c.limit_reached ? 1 : 0);
  w.u32(c.filtered_out);
  w.u32(c.l2_sweeps);
  w.str(c.method);
  w.u32(static_cast<uint32_t>(c.metrics.size()));
  for (std::size_t i = 0; i < c.metrics.size(); ++i) {
    w.str(c.metrics[i]);
    w.str(i < c.units.size() ? c.units[i] : std::string_view());
  }
  w.u32(static_cast<uint32_t>(c.skipped_metrics.size()));
  for (const auto& s : c.skipped_metrics) w.str(s);
  w.u32(static_cast<uint32_t>(c.kernels.size()));
  for (const auto& k : c.kernels) {
    w.u32(k.launch_index);
    w.str(k.name);
    w.u32(static_cast<uint32_t>(k.values.size()));
    for (double v : k.values) w.f64(v);
  }
  w.end();
}

WireCounters decode_counters(std::span<const uint8_t> payload, bool* ok) {
  PayloadReader r(payload);
  WireCounters c;
  c.availability = r.u32();
  c.message = r.str();
  c.chip = r.str();
  c.window = r.str();
  c.passes = r.u32();
  c.limit_reached = r.u8() != 0;
  c.filtered_out = r.u32();
  c.l2_sweeps = r.u32();
  c.method = r.str();
  const uint32_t metrics = r.u32();
  for (uint32_t i = 0; i < metrics && r.ok(); ++i) {
    c.metrics.push_back(r.str());
    c.units.push_back(r.str());
  }
  const uint32_t skipped = r.u32();
  for (uint32_t i = 0; i < skipped && r.ok(); ++i) c.skipped_metrics.push_back(r.str());
  const uint32_t kernels = r.u32();
  for (uint32_t i = 0; i < kernels && r.ok(); ++i) {
    WireKernelCounters k;
    k.launch_index = r.u32();
    k.name = r.str();
    const uint32_t n = r.u32();
    if (n > payload.size() / 8) {
      r.view(payload.size());  // a count larger than the payload can hold: malformed
      break;
    }
    for (uint32_t j = 0; j < n && r.ok(); ++j) k.values.push_back(r.f64());
    c.kernels.push_back(std::move(k));
  }
  if (ok) *ok = r.ok();
  return c;
}

namespace {

// The record structs the capture stores, as this build's CUPTI headers define them (the same
// ones RunAssembler reads), and the string fields each carries.
template <class Record>
void put_record(const Record& source, uint32_t kind, FrameWriter& w,
                std::initializer_list<const char*> strings) {
  static_assert(std::is_trivially_copyable_v<Record>);
  Record copy;
  std::memcpy(&copy, &source, sizeof copy);
  w.u32(kind);
  w.u32(static_cast<uint32_t>(sizeof copy));
  if constexpr (std::is_same_v<Record, CUpti_ActivityKernel10>) {
    copy.name = nullptr;
    copy.reserved0 = nullptr;
    copy.pAccessPolicyWindow = nullptr;
  } else if constexpr (std::is_same_v<Record, CUpti_ActivityMarker2>) {
    copy.name = nullptr;
    copy.domain = nullptr;
  } else if constexpr (std::is_same_v<Record, CUpti_ActivityMemcpy6> ||
                       std::is_same_v<Record, CUpti_ActivityMemset4>) {
    copy.reserved0 = nullptr;
  } else if constexpr (std::is_same_v<Record, CUpti_ActivityOverhead3>) {
    copy.overheadData = nullptr;
  }
  w.raw(&copy, sizeof copy);
  w.align8();
  w.u32(static_cast<uint32_t>(strings.size()));
  for (const char* s : strings) {
    // A null string and an empty one differ for CUPTI (no name vs. an empty name): a null
    // travels as length 0xffffffff.
    if (s == nullptr) {
      w.u32(0xffffffffu);
    } else {
      w.str(s);
    }
  }
  w.align8();
}

}  // namespace

void encode_activity_record(const CUpti_Activity& record, FrameWriter& w) {
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto& k = reinterpret_cast<const CUpti_ActivityKernel10&>(record);
      put_record(k, record.kind, w, {k.name});
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      put_record(reinterpret_cast<const CUpti_ActivityMemcpy6&>(record), record.kind, w, {});
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      put_record(reinterpret_cast<const CUpti_ActivityMemset4&>(record), record.kind, w, {});
      break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
      put_record(reinterpret_cast<const CUpti_ActivityAPI&>(record), record.kind, w, {});
      break;
    case CUPTI_ACTIVITY_KIND_MARKER: {
      const auto& m = reinterpret_cast<const CUpti_ActivityMarker2&>(record);
      put_record(m, record.kind, w, {m.name, m.domain});
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      put_record(reinterpret_cast<const CUpti_ActivitySynchronization2&>(record), record.kind, w,
                 {});
      break;
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      put_record(reinterpret_cast<const CUpti_ActivityOverhead3&>(record), record.kind, w, {});
      break;
    default:
      break;
  }
}

namespace {

bool stored_kind(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_MEMCPY:
    case CUPTI_ACTIVITY_KIND_MEMSET:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_MARKER:
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      return true;
    default:
      return false;
  }
}

std::size_t expected_size(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_MARKER:
      return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      return sizeof(CUpti_ActivityOverhead3);
    default:
      return 0;
  }
}

std::size_t string_count(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return 1;
    case CUPTI_ACTIVITY_KIND_MARKER:
      return 2;
    default:
      return 0;
  }
}

}  // namespace

std::size_t record_size(uint32_t kind) {
  return expected_size(kind);
}

std::size_t encode_activity_buffer(uint8_t* buffer, std::size_t valid_bytes,
                                   std::vector<uint8_t>& out, std::size_t* skipped) {
  FrameWriter w(out);
  w.begin(FrameType::kRecords);
  std::size_t n = 0, other = 0;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    if (stored_kind(record->kind)) {
      encode_activity_record(*record, w);
      ++n;
    } else {
      ++other;
    }
  }
  w.end();
  if (skipped) *skipped = other;
  return n;
}

bool decode_activity_records(std::span<const uint8_t> payload,
                             const std::function<void(const CUpti_Activity&)>& on_record) {
  PayloadReader r(payload);
  std::string strings[2];
  bool has[2] = {false, false};
  while (!r.at_end()) {
    const uint32_t kind = r.u32();
    const uint32_t bytes = r.u32();
    if (!r.ok() || bytes != expected_size(kind)) return false;
    AnyActivity rec;
    std::memset(&rec, 0, sizeof rec);
    if (!r.raw(&rec, bytes)) return false;
    r.align8();
    const uint32_t count = r.u32();
    if (!r.ok() || count != string_count(kind)) return false;
    for (uint32_t i = 0; i < count; ++i) {
      const uint32_t len = r.u32();
      has[i] = len != 0xffffffffu;
      if (!has[i]) continue;
      const uint8_t* p = r.view(len);
      if (p == nullptr) return false;
      strings[i].assign(reinterpret_cast<const char*>(p), len);
    }
    r.align8();
    if (!r.ok()) return false;
    if (count >= 1 &&
        (kind == CUPTI_ACTIVITY_KIND_KERNEL || kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) {
      rec.kernel.name = has[0] ? strings[0].c_str() : nullptr;
    } else if (kind == CUPTI_ACTIVITY_KIND_MARKER) {
      rec.marker.name = has[0] ? strings[0].c_str() : nullptr;
      rec.marker.domain = has[1] ? strings[1].c_str() : nullptr;
    }
    on_record(rec.base);
  }
  return r.ok();
}

}  // namespace fusionscope::inject
