#include "torch_trace_builder.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <limits>
#include <string_view>

#include "fusionscope/interchange/interchange_error.h"
#include "json_fields.h"
#include "trace_facts.h"
#include "trace_time.h"

namespace fusionscope::interchange::detail {
namespace {

using nlohmann::json;
using Kind = JsonKind;
using storage::ApiDomain;
using storage::CopyKind;
using storage::MemopKind;
using storage::RangeKind;

enum class Category {
  kOther,
  kKernel,
  kMemset,
  kMemcpy,
  kRuntime,
  kDriver,
  kCpuOp,
  kUserAnnotation,
  kGpuAnnotation,
  kNvtx,
  kSync,
  kTracerOverhead,
};

// Kineto's categories, with the names older PyTorch releases used.
Category classify(std::string_view cat) {
  // Kineto writes these exactly; the lower-casing below is for older and other writers.
  if (cat == "cpu_op") return Category::kCpuOp;
  if (cat == "kernel") return Category::kKernel;
  if (cat == "cuda_runtime") return Category::kRuntime;
  if (cat == "ac2g" || cat == "python_function") return Category::kOther;
  std::string c(cat);
  std::transform(c.begin(), c.end(), c.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (c == "kernel") return Category::kKernel;
  if (c == "gpu_memset" || c == "memset") return Category::kMemset;
  if (c == "gpu_memcpy" || c == "memcpy") return Category::kMemcpy;
  if (c == "cuda_runtime" || c == "runtime") return Category::kRuntime;
  if (c == "cuda_driver" || c == "driver") return Category::kDriver;
  if (c == "cpu_op" || c == "operator") return Category::kCpuOp;
  if (c == "user_annotation") return Category::kUserAnnotation;
  if (c == "gpu_user_annotation") return Category::kGpuAnnotation;
  // Our own exports: NVTX ranges, CPU-side synchronization waits, and tracer overhead.
  if (c == "nvtx") return Category::kNvtx;
  if (c == "cpu_sync") return Category::kSync;
  if (c == "tracer_overhead") return Category::kTracerOverhead;
  return Category::kOther;
}

const char* category_words(Category c) {
  switch (c) {
    case Category::kKernel:
      return "kernel";
    case Category::kMemset:
      return "memset";
    case Category::kMemcpy:
      return "memcpy";
    case Category::kRuntime:
      return "runtime call";
    case Category::kDriver:
      return "driver call";
    case Category::kCpuOp:
      return "cpu_op";
    case Category::kUserAnnotation:
      return "user_annotation";
    case Category::kGpuAnnotation:
      return "gpu_user_annotation";
    case Category::kNvtx:
      return "nvtx range";
    case Category::kSync:
      return "sync wait";
    case Category::kTracerOverhead:
      return "tracer overhead";
    case Category::kOther:
      break;
  }
  return "event";
}

// "Memcpy HtoD (Pageable -> Device)" -> kHtoD.
CopyKind copy_kind_of(std::string_view name) {
  if (name.find("HtoD") != std::string_view::npos) return CopyKind::kHtoD;
  if (name.find("DtoH") != std::string_view::npos) return CopyKind::kDtoH;
  if (name.find("DtoD") != std::string_view::npos) return CopyKind::kDtoD;
  if (name.find("HtoH") != std::string_view::npos) return CopyKind::kHtoH;
  if (name.find("PtoP") != std::string_view::npos || name.find("Peer") != std::string_view::npos) {
    return CopyKind::kPeer;
  }
  return CopyKind::kUnknown;
}

enum class TimeStatus { kOk, kMissing, kNotNumber, kOutOfRange, kOverflow };

// A `ts` or `dur` member in nanoseconds, converted from the number's text.
TimeStatus read_time(const FieldValue& v, int64_t& ns) {
  if (!v.present()) return TimeStatus::kMissing;
  if (v.kind != Kind::kNumber) return TimeStatus::kNotNumber;
  if (const auto result = micros_text_to_ns(v.text)) {
    ns = *result;
    return TimeStatus::kOk;
  }
  const auto number = parse_json_number(v.text);
  if (!number) return TimeStatus::kNotNumber;
  return number->overflows_double ? TimeStatus::kOverflow : TimeStatus::kOutOfRange;
}

std::optional<std::string_view> as_string(const FieldValue& v) {
  if (v.kind != Kind::kString) return std::nullopt;
  return v.text;
}

// A non-negative integer no larger than `max`. Integral floats (3.0) count; strings do not.
std::optional<uint64_t> as_unsigned(const FieldValue& v,
                                    uint64_t max = std::numeric_limits<uint64_t>::max()) {
  if (v.kind != Kind::kNumber) return std::nullopt;
  // Plain digits, the common case, without the general number reader.
  if (!v.text.empty() && v.text.size() <= 19 && v.text[0] != '-' &&
      (v.text[0] != '0' || v.text.size() == 1)) {
    uint64_t value = 0;
    bool digits = true;
    for (char c : v.text) {
      if (c < '0' || c > '9') {
        digits = false;
        break;
      }
      value = value * 10 + static_cast<uint64_t>(c - '0');
    }
    if (digits) {
      if (value > max) return std::nullopt;
      return value;
    }
  }
  const auto n = parse_json_number(v.text);
  if (!n || !n->integral || (n->negative && n->magnitude != 0) || n->magnitude > max) {
    return std::nullopt;
  }
  return n->magnitude;
}

std::optional<uint32_t> as_u32(const FieldValue& v) {
  const auto u = as_unsigned(v, std::numeric_limits<uint32_t>::max());
  if (!u) return std::nullopt;
  return static_cast<uint32_t>(*u);
}

const FieldValue& arg(const EventFields& e, std::string_view key) {
  static const FieldValue kAbsent;
  for (const auto& m : e.arg_members) {
    if (m.key == key) return m.value;
  }
  return kAbsent;
}

// [x, y, z] of non-negative 32-bit integers, from the array's JSON text.
std::optional<storage::Dim3> as_dim3(const FieldValue& v) {
  if (v.kind != Kind::kArray) return std::nullopt;
  std::string_view t = v.text;
  if (t.size() < 2 || t.front() != '[' || t.back() != ']') return std::nullopt;
  t = t.substr(1, t.size() - 2);
  uint32_t out[3] = {};
  for (int i = 0; i < 3; ++i) {
    const size_t comma = i < 2 ? t.find(',') : t.size();
    if (comma == std::string_view::npos) return std::nullopt;
    std::string_view item = t.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\n' || item.front() == '\t' ||
                             item.front() == '\r')) {
      item.remove_prefix(1);
    }
    while (!item.empty() && (item.back() == ' ' || item.back() == '\n' || item.back() == '\t' ||
                             item.back() == '\r')) {
      item.remove_suffix(1);
    }
    const auto u = as_u32(FieldValue{Kind::kNumber, item});
    if (!u) return std::nullopt;
    out[i] = *u;
    t = comma < t.size() ? t.substr(comma + 1) : std::string_view();
  }
  return storage::Dim3{out[0], out[1], out[2]};
}

// A flow id: an integer, or a string of digits (some writers quote ids).
std::optional<uint64_t> as_flow_id(const FieldValue& v) {
  if (auto u = as_unsigned(v)) return u;
  const auto s = as_string(v);
  if (!s || s->empty() || s->size() > 19) return std::nullopt;
  uint64_t id = 0;
  for (char c : *s) {
    if (c < '0' || c > '9') return std::nullopt;
    id = id * 10 + static_cast<uint64_t>(c - '0');
  }
  return id;
}

}  // namespace

storage::StringId TorchTraceBuilder::intern(std::string_view text) {
  if (text.empty()) return storage::kNoString;
  const auto it = string_ids_.find(text);
  if (it != string_ids_.end()) return it->second;
  const auto id = static_cast<storage::StringId>(out_.strings.size());
  out_.strings.emplace_back(text);
  string_ids_.emplace(out_.strings.back(), id);
  return id;
}

void TorchTraceBuilder::skip(const std::string& reason) {
  ++out_.stats.skipped;
  ++skipped_[reason];
}

void TorchTraceBuilder::note(const std::string& reason, uint64_t count) {
  if (count > 0) notes_[reason] += count;
}

void TorchTraceBuilder::on_non_object_event() {
  ++out_.stats.events;
  skip("skipped entry of traceEvents: not a JSON object");
}

void TorchTraceBuilder::on_oversized_event(uint64_t /*bytes*/) {
  ++out_.stats.events;
  skip("skipped event: longer than " + std::to_string(kMaxEventBytes >> 20) + " MiB");
}

void TorchTraceBuilder::on_header(std::string_view key, std::string_view json_text) {
  try {
    header_[std::string(key)] = json::parse(json_text);
  } catch (const json::exception&) {
    note("top-level `" + std::string(key) + "` is not valid JSON (ignored)");
  }
}

void TorchTraceBuilder::on_event(std::string_view text) {
  ++out_.stats.events;
  const std::string error = reader_.read(text, fields_);
  if (!error.empty()) {
    skip("skipped event: " + error);
    return;
  }
  const EventFields& e = fields_;
  // A number no double can hold makes the event unreadable, whatever its kind.
  for (const FieldValue* v : {&e.ts, &e.dur}) {
    if (v->kind != Kind::kNumber || v->text.find_first_of("eE") == std::string_view::npos) {
      continue;
    }
    const auto n = parse_json_number(v->text);
    if (n && n->overflows_double) {
      skip(std::string("skipped event: `") + (v == &e.ts ? "ts" : "dur") +
           "` is a number past a double's range (overflow)");
      return;
    }
  }
  const auto ph = as_string(e.ph);
  if (!ph) {
    skip("skipped event: no `ph` (phase) string");
    return;
  }
  if (*ph == "X") {
    complete_event(e);
  } else if (*ph == "s" || *ph == "f") {
    flow_event(e, *ph == "s");
  } else {
    ++out_.stats.ignored;  // metadata, instants, counters: nothing the session stores
  }
}

std::optional<uint32_t> TorchTraceBuilder::cpu_thread(const FieldValue& tid) {
  if (auto t = as_u32(tid)) return t;
  if (tid.kind != Kind::kNumber && tid.kind != Kind::kString) return std::nullopt;
  // Thread ids that are strings or wider than 32 bits get stable stand-ins.
  const std::string key = (tid.kind == Kind::kString ? "s:" : "n:") + std::string(tid.text);
  const auto it = renumbered_threads_.find(key);
  if (it != renumbered_threads_.end()) return it->second;
  const auto id = 0x80000000u + static_cast<uint32_t>(renumbered_threads_.size());
  renumbered_threads_.emplace(key, id);
  note("CPU thread ids that are not 32-bit integers were renumbered from 2147483648");
  return id;
}

void TorchTraceBuilder::count_input_types(const EventFields& event) {
  for (const auto& m : event.arg_members) {
    if (m.key != "Input type" || m.value.kind != Kind::kArray) continue;
    // Counted per distinct text: operators repeat the same inputs step after step.
    ++input_type_texts_[std::string(m.raw)];
  }
}

void TorchTraceBuilder::complete_event(const EventFields& f) {
  const auto cat_text = as_string(f.cat);
  const Category category = cat_text ? classify(*cat_text) : Category::kOther;
  if (category == Category::kOther) {
    ++out_.stats.ignored;  // python functions, profiler spans, overhead, ...
    return;
  }
  const std::string what = category_words(category);
  const auto name = as_string(f.name);
  if (!name) {
    skip("skipped " + what + ": no `name` string");
    return;
  }
  int64_t ts = 0, dur = 0;
  switch (read_time(f.ts, ts)) {
    case TimeStatus::kOk:
      break;
    case TimeStatus::kMissing:
      skip("skipped " + what + ": no `ts`");
      return;
    case TimeStatus::kNotNumber:
      skip("skipped " + what + ": `ts` is not a number");
      return;
    case TimeStatus::kOutOfRange:
    case TimeStatus::kOverflow:
      skip("skipped " + what + ": `ts` out of range");
      return;
  }
  switch (read_time(f.dur, dur)) {
    case TimeStatus::kOk:
      break;
    case TimeStatus::kMissing:
      skip("skipped " + what + ": no `dur`");
      return;
    case TimeStatus::kNotNumber:
      skip("skipped " + what + ": `dur` is not a number");
      return;
    case TimeStatus::kOutOfRange:
    case TimeStatus::kOverflow:
      skip("skipped " + what + ": `dur` out of range");
      return;
  }
  if (dur < 0) {
    skip("skipped " + what + ": `dur` is negative");
    return;
  }
  const auto end = checked_add(ts, dur);
  if (!end) {
    skip("skipped " + what + ": `ts` + `dur` out of range");
    return;
  }
  if (f.args.present() && f.args.kind != Kind::kObject) {
    note(what + " events whose `args` is not an object (read as empty)");
  }

  // Correlation ids are 32-bit in CUPTI; anything else is unusable for linking.
  uint32_t correlation = 0;
  if (const FieldValue& c = arg(f, "correlation"); c.present()) {
    if (auto id = as_u32(c)) {
      correlation = *id;
    } else {
      note(what + " events with an unusable `args.correlation` (not a 32-bit id)");
    }
  }

  switch (category) {
    case Category::kKernel:
    case Category::kMemset:
    case Category::kMemcpy: {
      auto device = as_u32(arg(f, "device"));
      if (!device) device = as_u32(f.pid);
      auto stream = as_u32(arg(f, "stream"));
      if (!stream) stream = as_u32(f.tid);
      if (!device || !stream) {
        skip("skipped " + what + ": no device and stream (neither in `args` nor `pid`/`tid`)");
        return;
      }
      if (category == Category::kKernel) {
        storage::KernelRecord k;
        k.start_ns = ts;
        k.end_ns = *end;
        k.device = *device;
        k.stream = *stream;
        k.correlation_id = correlation;
        // Our own exports write kernel names demangled and keep the mangled one in args.
        const FieldValue& mangled = arg(f, "mangled name");
        k.name = intern(mangled.kind == Kind::kString ? mangled.text : *name);
        for (const char* key : {"grid", "block"}) {
          const FieldValue& v = arg(f, key);
          const auto dim = as_dim3(v);
          if (v.present() && !dim) {
            note(std::string("kernels whose `args.") + key +
                 "` is not three non-negative integers (read as 1,1,1)");
          }
          if (dim) (std::string_view(key) == "grid" ? k.grid : k.block) = *dim;
        }
        k.registers = as_u32(arg(f, "registers per thread")).value_or(0);
        const auto static_smem = as_u32(arg(f, "static shared memory"));
        const auto dynamic_smem = as_u32(arg(f, "dynamic shared memory"));
        if (static_smem || dynamic_smem) {
          k.static_smem = static_smem.value_or(0);
          k.dynamic_smem = dynamic_smem.value_or(0);
        } else {
          // Kineto writes static + dynamic as one figure; kernels that need much shared memory
          // ask for it dynamically, so the sum is kept as the dynamic part.
          k.dynamic_smem = as_u32(arg(f, "shared memory")).value_or(0);
        }
        if (const FieldValue& op = arg(f, "op"); op.kind == Kind::kString) {
          explicit_ops_.emplace_back(out_.kernels.size(), intern(op.text));
        }
        out_.kernels.push_back(k);
        ++out_.stats.kernels;
      } else {
        storage::MemopRecord m;
        m.start_ns = ts;
        m.end_ns = *end;
        m.device = *device;
        m.stream = *stream;
        m.correlation_id = correlation;
        m.bytes = as_unsigned(arg(f, "bytes")).value_or(0);
        if (category == Category::kMemset) {
          m.kind = MemopKind::kMemset;
          ++out_.stats.memsets;
        } else {
          m.kind = MemopKind::kMemcpy;
          m.copy_kind = copy_kind_of(*name);
          ++out_.stats.memcpys;
        }
        out_.memops.push_back(m);
      }
      return;
    }
    case Category::kRuntime:
    case Category::kDriver: {
      const auto thread = cpu_thread(f.tid);
      if (!thread) {
        skip("skipped " + what + ": no `tid`");
        return;
      }
      storage::ApiCallRecord a;
      a.start_ns = ts;
      a.end_ns = *end;
      a.thread_id = *thread;
      a.correlation_id = correlation;
      a.name = intern(*name);
      a.domain = category == Category::kRuntime ? ApiDomain::kRuntime : ApiDomain::kDriver;
      out_.api_calls.push_back(a);
      ++(category == Category::kRuntime ? out_.stats.runtime_calls : out_.stats.driver_calls);
      return;
    }
    case Category::kCpuOp:
    case Category::kUserAnnotation:
    case Category::kNvtx:
    case Category::kSync:
    case Category::kTracerOverhead:
    case Category::kGpuAnnotation: {
      std::optional<uint32_t> lane;
      if (category == Category::kGpuAnnotation) {
        lane = as_u32(arg(f, "stream"));
        if (!lane) lane = as_u32(f.tid);
      } else {
        lane = cpu_thread(f.tid);
      }
      if (!lane) {
        skip("skipped " + what + ": no `tid`");
        return;
      }
      storage::RangeRecord r;
      r.start_ns = ts;
      r.end_ns = *end;
      r.thread_id = *lane;
      r.name = intern(*name);
      switch (category) {
        case Category::kCpuOp:
          r.kind = RangeKind::kCpuOp;
          ++out_.stats.cpu_ops;
          count_input_types(f);
          break;
        case Category::kUserAnnotation:
          r.kind = RangeKind::kUserAnnotation;
          ++out_.stats.user_annotations;
          break;
        case Category::kGpuAnnotation:
          r.kind = RangeKind::kGpuAnnotation;
          ++out_.stats.gpu_annotations;
          break;
        case Category::kSync:
          r.kind = RangeKind::kSync;
          break;
        case Category::kTracerOverhead:
          r.kind = RangeKind::kTracerOverhead;
          break;
        default:
          r.kind = RangeKind::kNvtx;
          break;
      }
      out_.ranges.push_back(r);
      return;
    }
    case Category::kOther:
      return;
  }
}

void TorchTraceBuilder::flow_event(const EventFields& f, bool is_start) {
  const auto cat = as_string(f.cat);
  if (!cat || *cat != "ac2g") {
    ++out_.stats.ignored;  // flows of other kinds (e.g. forward/backward links)
    return;
  }
  const auto id = as_flow_id(f.id);
  if (!id) {
    skip("skipped ac2g flow: no usable `id`");
    return;
  }
  int64_t ts = 0;
  if (read_time(f.ts, ts) != TimeStatus::kOk) {
    skip("skipped ac2g flow: `ts` missing or not a usable number");
    return;
  }
  FlowEnd end{*id, 0, ts};
  if (is_start) {
    const auto thread = cpu_thread(f.tid);
    if (!thread) {
      skip("skipped ac2g flow: no `tid`");
      return;
    }
    end.lane = *thread;
    flow_starts_.push_back(end);
    ++out_.stats.flow_starts;
  } else {
    const auto stream = as_u32(f.tid);
    if (!stream) {
      skip("skipped ac2g flow: `tid` is not a stream number");
      return;
    }
    end.lane = *stream;
    flow_finishes_.push_back(end);
    ++out_.stats.flow_finishes;
  }
}

void TorchTraceBuilder::refuse_if_nothing_read(std::string_view source) const {
  const auto& s = out_.stats;
  const uint64_t kept = out_.kernels.size() + out_.memops.size() + out_.api_calls.size() +
                        out_.ranges.size() + s.flow_starts + s.flow_finishes;
  if (s.skipped == 0 || kept > 0) return;
  // Name the most frequent reasons, so the message says what is wrong with the file.
  std::vector<std::pair<uint64_t, std::string>> reasons;
  for (const auto& [reason, count] : skipped_) reasons.emplace_back(count, reason);
  std::sort(reasons.rbegin(), reasons.rend());
  std::string list;
  for (size_t i = 0; i < reasons.size() && i < 3; ++i) {
    list += (i ? "; " : "") + reasons[i].second + " (" + std::to_string(reasons[i].first) + ")";
  }
  throw InterchangeError(std::string(source) + ": none of its " + std::to_string(s.events) +
                         " events could be read, " + std::to_string(s.skipped) +
                         " of them malformed: " + list);
}

void TorchTraceBuilder::finish(std::string_view source) {
  refuse_if_nothing_read(source);
  const json& header = header_;
  const NoteFn note_fn = [this](const std::string& reason, uint64_t count) { note(reason, count); };
  link_correlations(out_, flow_starts_, flow_finishes_, note_fn);
  attribute_ops(out_, note_fn);
  // Kernels whose op the trace names (our own exports) keep it.
  for (const auto& [index, op] : explicit_ops_) out_.kernels[index].op = op;
  apply_time_base(header);
  read_header(out_, header, note_fn);
  summarize_steps(out_);
  read_own_header(out_, header);

  // The most common floating-point input type of the operators names the run's dtype.
  static const std::pair<const char*, const char*> kTypes[] = {
      {"c10::BFloat16", "bf16"}, {"c10::Half", "fp16"}, {"float", "fp32"}, {"double", "fp64"}};
  std::map<std::string, uint64_t> input_types;
  for (const auto& [text, count] : input_type_texts_) {
    const json types = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!types.is_array()) continue;
    for (const auto& t : types) {
      if (t.is_string()) input_types[t.get<std::string>()] += count;
    }
  }
  uint64_t best = 0;
  for (const auto& [torch_name, short_name] : kTypes) {
    const auto it = input_types.find(torch_name);
    if (it != input_types.end() && it->second > best) {
      best = it->second;
      out_.dtype = short_name;
    }
  }

  auto by_start = [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; };
  std::stable_sort(out_.kernels.begin(), out_.kernels.end(), by_start);
  std::stable_sort(out_.memops.begin(), out_.memops.end(), by_start);
  std::stable_sort(out_.api_calls.begin(), out_.api_calls.end(), by_start);
  // Enclosing ranges first when two start together.
  std::stable_sort(out_.ranges.begin(), out_.ranges.end(), [](const auto& a, const auto& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
  });

  out_.variant = derive_variant(out_);

  for (const auto& [reason, count] : skipped_) out_.stats.warnings.push_back({reason, count});
  for (const auto& [reason, count] : notes_) out_.stats.warnings.push_back({reason, count});
}

void TorchTraceBuilder::apply_time_base(const json& header) {
  // Kineto writes ts relative to baseTimeNanoseconds; adding it back puts traces taken at
  // different times on one clock.
  const json* base_value = member(header, "baseTimeNanoseconds");
  if (base_value == nullptr) return;
  const auto base = as_unsigned(base_value, static_cast<uint64_t>(INT64_MAX));
  if (!base) {
    note("baseTimeNanoseconds is not a usable integer: times kept relative to the trace");
    return;
  }
  const auto b = static_cast<int64_t>(*base);
  int64_t lo = 0, hi = 0;
  bool any = false;
  auto extend = [&](int64_t s, int64_t e) {
    lo = any ? std::min(lo, s) : s;
    hi = any ? std::max(hi, e) : e;
    any = true;
  };
  for (const auto& r : out_.kernels) extend(r.start_ns, r.end_ns);
  for (const auto& r : out_.memops) extend(r.start_ns, r.end_ns);
  for (const auto& r : out_.api_calls) extend(r.start_ns, r.end_ns);
  for (const auto& r : out_.ranges) extend(r.start_ns, r.end_ns);
  if (!any) return;
  if (!checked_add(lo, b) || !checked_add(hi, b)) {
    note("baseTimeNanoseconds would overflow the event times: times kept relative to the trace");
    return;
  }
  auto shift = [b](auto& records) {
    for (auto& r : records) {
      r.start_ns += b;
      r.end_ns += b;
    }
  };
  shift(out_.kernels);
  shift(out_.memops);
  shift(out_.api_calls);
  shift(out_.ranges);
  // Kineto's base is the wall clock (ns since 1970) when the trace was taken, to the second:
  // the trace's own date. (Its event times count on another clock, so base + ts is not one.)
  constexpr int64_t kYear2000 = 946'684'800LL * 1'000'000'000LL;
  constexpr int64_t kYear2100 = 4'102'444'800LL * 1'000'000'000LL;
  const int64_t when = b > kYear2000 && b < kYear2100 ? b : lo + b;
  if (when > kYear2000 && when < kYear2100) {
    const std::time_t seconds = static_cast<std::time_t>(when / 1'000'000'000);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    out_.session.created_utc = text;
  }
}

}  // namespace fusionscope::interchange::detail
