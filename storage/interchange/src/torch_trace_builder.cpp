#include "torch_trace_builder.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <limits>
#include <string_view>

#include "chrome_form.h"
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

// Whether a number's text has an exponent (1e400). (Not find_first_of: it searches the set of
// characters once for every character of the text.)
bool has_exponent(std::string_view number) {
  for (char c : number)
    if (c == 'e' || c == 'E') return true;
  return false;
}

// Kineto's categories, with the names older PyTorch releases used.
Category classify(std::string_view cat) {
  // Kineto writes these exactly; the lower-casing below is for older and other writers.
  if (cat == "cpu_op") return Category::kCpuOp;
  if (cat == "kernel") return Category::kKernel;
  if (cat == "cuda_runtime") return Category::kRuntime;
  if (cat == "cuda_driver") return Category::kDriver;
  if (cat == "gpu_memset") return Category::kMemset;
  if (cat == "gpu_memcpy") return Category::kMemcpy;
  if (cat == "user_annotation") return Category::kUserAnnotation;
  if (cat == "gpu_user_annotation") return Category::kGpuAnnotation;
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

// The category the exporter writes for records of `c` (so the importer need not keep it).
const char* written_category(Category c) {
  switch (c) {
    case Category::kKernel:
      return "kernel";
    case Category::kMemset:
      return "gpu_memset";
    case Category::kMemcpy:
      return "gpu_memcpy";
    case Category::kRuntime:
      return "cuda_runtime";
    case Category::kDriver:
      return "cuda_driver";
    case Category::kCpuOp:
      return "cpu_op";
    case Category::kUserAnnotation:
      return "user_annotation";
    case Category::kGpuAnnotation:
      return "gpu_user_annotation";
    case Category::kSync:
      return "cpu_sync";
    case Category::kTracerOverhead:
      return "tracer_overhead";
    case Category::kNvtx:   // written as ProfilerStep, cpu_op or user_annotation by its name
    case Category::kOther:  // written from the record's extra object
      break;
  }
  return nullptr;
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

// A 32-bit id written as the exporter writes it (plain digits).
std::optional<uint32_t> as_canonical_u32(const FieldValue& v) {
  if (v.kind != Kind::kNumber || !is_canonical_unsigned(v.raw)) return std::nullopt;
  return as_u32(v);
}

// An int64 written as plain digits, optionally negative; nullopt otherwise.
std::optional<int64_t> as_canonical_i64(const FieldValue& v) {
  if (v.kind != Kind::kNumber || !is_canonical_integer(v.raw)) return std::nullopt;
  const auto n = parse_json_number(v.text);
  if (!n || !n->integral) return std::nullopt;
  if (n->negative) {
    if (n->magnitude > uint64_t{1} << 63) return std::nullopt;
    return static_cast<int64_t>(0 - n->magnitude);
  }
  if (n->magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return std::nullopt;
  return static_cast<int64_t>(n->magnitude);
}

// [x, y, z] of non-negative 32-bit integers, from the array's JSON text. `canonical` tells
// whether each was written as plain digits.
std::optional<storage::Dim3> as_dim3(const FieldValue& v, bool* canonical = nullptr) {
  if (v.kind != Kind::kArray) return std::nullopt;
  std::string_view t = v.text;
  if (t.size() < 2 || t.front() != '[' || t.back() != ']') return std::nullopt;
  t = t.substr(1, t.size() - 2);
  uint32_t out[3] = {};
  bool plain = true;
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
    const auto u = as_u32(FieldValue{Kind::kNumber, item, item});
    if (!u) return std::nullopt;
    plain = plain && is_canonical_unsigned(item);
    out[i] = *u;
    t = comma < t.size() ? t.substr(comma + 1) : std::string_view();
  }
  if (canonical != nullptr) *canonical = plain;
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
  if (const storage::StringId* id = string_ids_.find(text)) return *id;
  const auto id = static_cast<storage::StringId>(first_kept_ + out_.strings.size());
  out_.strings.emplace_back(text);
  string_ids_.insert(text, id);
  return id;
}

void TorchTraceBuilder::bound_strings(size_t entries, size_t bytes) {
  string_ids_ = storage::TextCache<storage::StringId, TextHash>(entries, bytes);
  demangled_names_ = storage::TextCache<std::string, TextHash>(entries / 16, bytes / 16);
}

storage::StringId TorchTraceBuilder::release_strings(std::vector<std::string>& into) {
  const size_t skip = first_kept_ == 0 && !out_.strings.empty() ? 1 : 0;  // "", id 0
  const auto first = static_cast<storage::StringId>(first_kept_ + skip);
  into.assign(std::make_move_iterator(out_.strings.begin() + static_cast<std::ptrdiff_t>(skip)),
              std::make_move_iterator(out_.strings.end()));
  first_kept_ += static_cast<storage::StringId>(out_.strings.size());
  out_.strings.clear();
  return first;
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
  if (key == "fusionscope" || is_header_key(key)) {
    try {
      header_[std::string(key)] = json::parse(json_text);
    } catch (const json::exception&) {
      note("top-level `" + std::string(key) + "` is not valid JSON (ignored)");
    }
  }
  // The time base, when it comes before the events, puts each record on the trace's clock as it
  // is read.
  if (key == "baseTimeNanoseconds" && !events_begun_) {
    if (const auto base =
            as_unsigned(member(header_, "baseTimeNanoseconds"), static_cast<uint64_t>(INT64_MAX))) {
      base_known_ = true;
      base_ns_ = static_cast<int64_t>(*base);
    }
  }
  // Everything but our own description is kept as written, for the export.
  if (key == "fusionscope") return;
  if (header_bytes_ + json_text.size() > kMaxKeptHeaderBytes) {
    note("top-level members past " + std::to_string(kMaxKeptHeaderBytes >> 20) +
         " MiB in all were not kept");
    return;
  }
  header_bytes_ += key.size() + json_text.size();
  header_members_.emplace_back(std::string(key), std::string(json_text));
}

void TorchTraceBuilder::on_oversized_header(std::string_view key, uint64_t /*bytes*/) {
  note("top-level `" + std::string(key) + "` longer than " +
       std::to_string(kMaxHeaderValueBytes >> 20) + " MiB was not kept");
}

storage::StringId TorchTraceBuilder::extra_id() {
  view_.write_extra(extra_);
  return extra_.empty() ? storage::kNoString : intern(extra_.text());
}

void TorchTraceBuilder::on_event(std::string_view text) {
  events_begun_ = true;
  ++out_.stats.events;
  const std::string error = reader_.read(text, fields_);
  if (!error.empty()) {
    skip("skipped event: " + error);
    return;
  }
  const EventFields& e = fields_;
  // A number no double can hold makes the event unreadable, whatever its kind.
  for (const FieldValue* v : {&e.ts, &e.dur}) {
    if (v->kind != Kind::kNumber || !has_exponent(v->text)) continue;
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
  view_.reset(e);
  if (*ph == "X") {
    complete_event(e);
  } else if (*ph == "s" || *ph == "f") {
    flow_event(e, *ph == "s");
  } else if (*ph == "i" || *ph == "I") {
    instant_event(e);
  } else if (*ph == "M") {
    metadata_event(text);
  } else {
    ++out_.stats.ignored;  // counters, async and duration begin/end events, ...
  }
}

std::optional<uint32_t> TorchTraceBuilder::cpu_thread(const FieldValue& tid, bool say_so) {
  if (auto t = as_u32(tid)) return t;
  if (tid.kind != Kind::kNumber && tid.kind != Kind::kString) return std::nullopt;
  // Thread ids that are strings or wider than 32 bits get stand-ins from 2^31 up, made from
  // their text (FNV-1a), so that a trace read again, in any order, gives each the same one.
  const std::string key = (tid.kind == Kind::kString ? "s:" : "n:") + std::string(tid.text);
  const auto it = renumbered_threads_.find(key);
  if (it != renumbered_threads_.end()) return it->second;
  uint32_t hash = 2166136261u;
  for (unsigned char c : key) hash = (hash ^ c) * 16777619u;
  uint32_t id = 0x80000000u | hash;
  while (taken_stand_ins_.contains(id)) id = 0x80000000u | (id + 1);  // a collision: rare
  taken_stand_ins_.insert(id);
  renumbered_threads_.emplace(key, id);
  if (say_so) note("CPU thread ids that are not 32-bit integers were renumbered from 2147483648");
  return id;
}

void TorchTraceBuilder::cpu_place(uint32_t& pid, uint32_t& thread, bool& ok, bool interpreted) {
  const EventFields& f = view_.fields();
  ok = true;
  pid = 0;
  if (const auto p = as_canonical_u32(f.pid)) {
    pid = *p;
    view_.consume(TopKey::kPid);
  }
  // Lanes of events fusionscope does not interpret (Kineto's own "Spans", "Traces") are often
  // named by text: renumbering them is expected, not worth a warning.
  const auto t = cpu_thread(f.tid, interpreted);
  if (!t) {
    ok = false;
    return;
  }
  thread = *t;
  if (as_canonical_u32(f.tid) == thread) view_.consume(TopKey::kTid);
}

void TorchTraceBuilder::count_input_types(const FieldValue& input_type) {
  if (input_type.kind != Kind::kArray) return;
  // Counted per distinct text: operators repeat the same inputs step after step.
  if (const auto it = input_type_texts_.find(input_type.raw); it != input_type_texts_.end()) {
    ++it->second;
  } else {
    input_type_texts_.emplace(std::string(input_type.raw), 1);
  }
}

void TorchTraceBuilder::complete_event(const EventFields& f) {
  const auto cat_text = as_string(f.cat);
  const Category category = cat_text ? classify(*cat_text) : Category::kOther;
  const std::string_view what = category == Category::kOther ? "event" : category_words(category);
  const auto name = as_string(f.name);
  if (!name && category != Category::kOther) {
    skip("skipped " + std::string(what) + ": no `name` string");
    return;
  }
  int64_t ts = 0, dur = 0;
  switch (read_time(f.ts, ts)) {
    case TimeStatus::kOk:
      break;
    case TimeStatus::kMissing:
      skip("skipped " + std::string(what) + ": no `ts`");
      return;
    case TimeStatus::kNotNumber:
      skip("skipped " + std::string(what) + ": `ts` is not a number");
      return;
    case TimeStatus::kOutOfRange:
    case TimeStatus::kOverflow:
      skip("skipped " + std::string(what) + ": `ts` out of range");
      return;
  }
  switch (read_time(f.dur, dur)) {
    case TimeStatus::kOk:
      break;
    case TimeStatus::kMissing:
      skip("skipped " + std::string(what) + ": no `dur`");
      return;
    case TimeStatus::kNotNumber:
      skip("skipped " + std::string(what) + ": `dur` is not a number");
      return;
    case TimeStatus::kOutOfRange:
    case TimeStatus::kOverflow:
      skip("skipped " + std::string(what) + ": `dur` out of range");
      return;
  }
  if (dur < 0) {
    skip("skipped " + std::string(what) + ": `dur` is negative");
    return;
  }
  auto end = checked_add(ts, dur);
  if (!end) {
    skip("skipped " + std::string(what) + ": `ts` + `dur` out of range");
    return;
  }
  if (base_known_) {
    const auto start = checked_add(ts, base_ns_);
    const auto shifted_end = checked_add(*end, base_ns_);
    if (!start || !shifted_end) {
      skip("skipped " + std::string(what) + ": `ts` + baseTimeNanoseconds out of range");
      return;
    }
    ts = *start;
    end = shifted_end;
  }
  if (f.args.present() && f.args.kind != Kind::kObject) {
    note(std::string(what) + " events whose `args` is not an object (read as empty)");
  }

  // What the exporter writes back unchanged need not be kept. (The name: below, by kind.)
  view_.consume_if(TopKey::kPh, "\"X\"");
  if (const char* cat = written_category(category); cat != nullptr && cat_text == cat) {
    view_.consume(TopKey::kCat);
  }
  if (is_exact_micros(f.ts.raw)) view_.consume(TopKey::kTs);
  if (is_exact_micros(f.dur.raw)) view_.consume(TopKey::kDur);
  int64_t external_id = 0;
  if (const auto id = as_canonical_i64(view_.arg(ArgKey::kExternalId)); id && *id != 0) {
    external_id = *id;
    view_.consume(ArgKey::kExternalId);
  }
  // Plain integer args the exporter writes from a column.
  auto take_u32 = [this](ArgKey key) -> std::optional<uint32_t> {
    const FieldValue& v = view_.arg(key);
    const auto value = as_u32(v);
    if (value && is_canonical_unsigned(v.raw)) view_.consume(key);
    return value;
  };

  // Correlation ids are 32-bit in CUPTI; anything else is unusable for linking.
  uint32_t correlation = 0;
  if (view_.arg(ArgKey::kCorrelation).present()) {
    if (auto id = take_u32(ArgKey::kCorrelation)) {
      correlation = *id;
    } else {
      note(std::string(what) + " events with an unusable `args.correlation` (not a 32-bit id)");
    }
  }

  switch (category) {
    case Category::kKernel:
    case Category::kMemset:
    case Category::kMemcpy: {
      auto device = take_u32(ArgKey::kDevice);
      if (!device) device = as_u32(f.pid);
      auto stream = take_u32(ArgKey::kStream);
      if (!stream) stream = as_u32(f.tid);
      if (!device || !stream) {
        skip("skipped " + std::string(what) +
             ": no device and stream (neither in `args` nor `pid`/`tid`)");
        return;
      }
      // GPU events are written under their device and stream, as PyTorch writes them.
      if (as_canonical_u32(f.pid) == device) view_.consume(TopKey::kPid);
      if (as_canonical_u32(f.tid) == stream) view_.consume(TopKey::kTid);
      if (category == Category::kKernel) {
        storage::KernelRecord k;
        k.start_ns = ts;
        k.end_ns = *end;
        k.device = *device;
        k.stream = *stream;
        k.correlation_id = correlation;
        k.external_id = external_id;
        // Our own exports write kernel names demangled and keep the mangled one in args; the
        // name is written back demangled from it, so it need not be kept when it is that.
        const FieldValue& mangled = view_.arg(ArgKey::kMangledName);
        if (mangled.kind == Kind::kString) {
          k.name = intern(mangled.text);
          view_.consume(ArgKey::kMangledName);
          if (const std::string* plain = demangled_names_.find(mangled.text)) {
            if (*plain == *name) view_.consume(TopKey::kName);
          } else {
            std::string text = demangled(std::string(mangled.text));
            intern(text);
            if (text == *name) view_.consume(TopKey::kName);
            demangled_names_.insert(mangled.text, std::move(text));
          }
        } else {
          k.name = intern(*name);
          // A mangled name is written demangled, with the name itself in args.
          if (!name->starts_with("_Z")) view_.consume(TopKey::kName);
        }
        for (const ArgKey key : {ArgKey::kGrid, ArgKey::kBlock}) {
          const FieldValue& v = view_.arg(key);
          bool canonical = false;
          const auto dim = as_dim3(v, &canonical);
          if (v.present() && !dim) {
            note(std::string("kernels whose `args.") + (key == ArgKey::kGrid ? "grid" : "block") +
                 "` is not three non-negative integers (read as 1,1,1)");
          }
          if (dim) {
            (key == ArgKey::kGrid ? k.grid : k.block) = *dim;
            if (canonical) view_.consume(key);
          }
        }
        k.registers = take_u32(ArgKey::kRegisters).value_or(0);
        const FieldValue& shared_v = view_.arg(ArgKey::kSharedMemory);
        const auto static_smem = take_u32(ArgKey::kStaticSmem);
        const auto dynamic_smem = take_u32(ArgKey::kDynamicSmem);
        if (static_smem || dynamic_smem) {
          k.static_smem = static_smem.value_or(0);
          k.dynamic_smem = dynamic_smem.value_or(0);
          // Written back as their sum.
          if (as_canonical_u32(shared_v).has_value() &&
              as_unsigned(shared_v) == uint64_t{k.static_smem} + k.dynamic_smem) {
            view_.consume(ArgKey::kSharedMemory);
          }
        } else {
          // Kineto writes static + dynamic as one figure; kernels that need much shared memory
          // ask for it dynamically, so the sum is kept as the dynamic part.
          k.dynamic_smem = take_u32(ArgKey::kSharedMemory).value_or(0);
        }
        // The op the trace names (our own exports) is kept; linking attributes the others.
        if (const FieldValue& op = view_.arg(ArgKey::kOp); op.kind == Kind::kString) {
          k.op = intern(op.text);
          view_.consume(ArgKey::kOp);
        }
        k.extra = extra_id();
        if (!first_kernel_device_) first_kernel_device_ = k.device;
        if (!hints_.triton_kernels &&
            (mangled.kind == Kind::kString ? mangled.text : *name).starts_with("triton_")) {
          hints_.triton_kernels = true;
        }
        extend(k.start_ns, k.end_ns);
        gpu_or_call_start(k.start_ns);
        linker_.add_kernel(k);
        out_.kernels.push_back(k);
        ++records_kept_;
        ++out_.stats.kernels;
      } else {
        storage::MemopRecord m;
        m.start_ns = ts;
        m.end_ns = *end;
        m.device = *device;
        m.stream = *stream;
        m.correlation_id = correlation;
        m.external_id = external_id;
        const FieldValue& bytes = view_.arg(ArgKey::kBytes);
        if (const auto b = as_unsigned(bytes)) {
          m.bytes = *b;
          if (is_canonical_unsigned(bytes.raw)) view_.consume(ArgKey::kBytes);
        }
        if (category == Category::kMemset) {
          m.kind = MemopKind::kMemset;
          ++out_.stats.memsets;
        } else {
          m.kind = MemopKind::kMemcpy;
          m.copy_kind = copy_kind_of(*name);
          ++out_.stats.memcpys;
        }
        // The exporter names memory operations by their kind; a name that says more is kept.
        if (*name == memop_event_name(m.kind, m.copy_kind)) view_.consume(TopKey::kName);
        m.extra = extra_id();
        extend(m.start_ns, m.end_ns);
        gpu_or_call_start(m.start_ns);
        linker_.add_memop(m);
        out_.memops.push_back(m);
        ++records_kept_;
      }
      return;
    }
    case Category::kRuntime:
    case Category::kDriver: {
      storage::ApiCallRecord a;
      bool ok = false;
      cpu_place(a.pid, a.thread_id, ok, /*interpreted=*/true);
      if (!ok) {
        skip("skipped " + std::string(what) + ": no `tid`");
        return;
      }
      view_.consume(TopKey::kName);
      a.start_ns = ts;
      a.end_ns = *end;
      a.correlation_id = correlation;
      a.name = intern(*name);
      a.domain = category == Category::kRuntime ? ApiDomain::kRuntime : ApiDomain::kDriver;
      a.external_id = external_id;
      a.extra = extra_id();
      if (!hints_.graph_launches &&
          (*name == "cudaGraphLaunch" || name->starts_with("cuGraphLaunch"))) {
        hints_.graph_launches = true;
      }
      if (call_pids_.empty() || call_pids_.back() != a.pid) {
        const auto it = std::lower_bound(call_pids_.begin(), call_pids_.end(), a.pid);
        if (it == call_pids_.end() || *it != a.pid) call_pids_.insert(it, a.pid);
      }
      extend(a.start_ns, a.end_ns);
      gpu_or_call_start(a.start_ns);
      linker_.add_api_call(a);
      out_.api_calls.push_back(a);
      ++records_kept_;
      ++(category == Category::kRuntime ? out_.stats.runtime_calls : out_.stats.driver_calls);
      return;
    }
    case Category::kCpuOp:
    case Category::kUserAnnotation:
    case Category::kNvtx:
    case Category::kSync:
    case Category::kTracerOverhead:
    case Category::kGpuAnnotation:
    case Category::kOther: {
      storage::RangeRecord r;
      if (category == Category::kGpuAnnotation) {
        // On its stream; the process number it is written under (the device's, in PyTorch's
        // traces) stays in the extra object.
        auto lane = as_u32(view_.arg(ArgKey::kStream));
        if (!lane) lane = as_u32(f.tid);
        if (!lane) {
          skip("skipped " + std::string(what) + ": no `tid`");
          return;
        }
        r.thread_id = *lane;
        if (as_canonical_u32(f.tid) == r.thread_id) view_.consume(TopKey::kTid);
      } else {
        bool ok = false;
        cpu_place(r.pid, r.thread_id, ok, category != Category::kOther);
        if (!ok) {
          if (category != Category::kOther) {
            skip("skipped " + std::string(what) + ": no `tid`");
            return;
          }
          r.thread_id = 0;  // an event of another kind without a thread: kept on thread 0
        }
      }
      // NVTX ranges are written under a name and category of their own choosing (iterations as
      // ProfilerStep#N); an imported one keeps both as they were.
      if (category != Category::kNvtx && name) view_.consume(TopKey::kName);
      r.start_ns = ts;
      r.end_ns = *end;
      r.name = name ? intern(*name) : storage::kNoString;
      r.external_id = external_id;
      const FieldValue& index = view_.arg(ArgKey::kEvIdx);
      if (const auto i = as_canonical_u32(index); i && *i <= uint32_t{INT32_MAX}) {
        r.event_index = static_cast<int32_t>(*i);
        view_.consume(ArgKey::kEvIdx);
      }
      switch (category) {
        case Category::kCpuOp:
          r.kind = RangeKind::kCpuOp;
          ++out_.stats.cpu_ops;
          count_input_types(view_.arg(ArgKey::kInputType));
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
        case Category::kOther:
          r.kind = RangeKind::kOther;
          ++out_.stats.other_events;
          break;
        default:
          r.kind = RangeKind::kNvtx;
          break;
      }
      r.extra = extra_id();
      const bool step = is_profiler_step(name.value_or(""));
      if (r.kind == RangeKind::kCpuOp) {
        linker_.add_operator(r);
      } else if (r.kind == RangeKind::kUserAnnotation && !step) {
        linker_.add_annotation(r);
      }
      extend(r.start_ns, r.end_ns);
      out_.ranges.push_back(r);
      range_is_step_.push_back(step);
      ++records_kept_;
      return;
    }
  }
}

bool TorchTraceBuilder::point_time(const EventFields& f, std::string_view what, int64_t& ts) {
  if (read_time(f.ts, ts) != TimeStatus::kOk) {
    skip("skipped " + std::string(what) + ": `ts` missing or not a usable number");
    return false;
  }
  if (!base_known_) return true;
  const auto shifted = checked_add(ts, base_ns_);
  if (!shifted) {
    skip("skipped " + std::string(what) + ": `ts` + baseTimeNanoseconds out of range");
    return false;
  }
  ts = *shifted;
  return true;
}

void TorchTraceBuilder::instant_event(const EventFields& f) {
  int64_t ts = 0;
  if (!point_time(f, "instant event", ts)) return;
  storage::RangeRecord r;
  r.kind = RangeKind::kInstant;
  r.start_ns = r.end_ns = ts;
  bool ok = false;
  cpu_place(r.pid, r.thread_id, ok, /*interpreted=*/false);
  if (!ok) r.thread_id = 0;
  view_.consume_if(TopKey::kPh, "\"i\"");
  if (const auto name = as_string(f.name)) {
    r.name = intern(*name);
    view_.consume(TopKey::kName);
  }
  if (is_exact_micros(f.ts.raw)) view_.consume(TopKey::kTs);
  if (const auto id = as_canonical_i64(view_.arg(ArgKey::kExternalId)); id && *id != 0) {
    r.external_id = *id;
    view_.consume(ArgKey::kExternalId);
  }
  if (const auto i = as_canonical_u32(view_.arg(ArgKey::kEvIdx)); i && *i <= uint32_t{INT32_MAX}) {
    r.event_index = static_cast<int32_t>(*i);
    view_.consume(ArgKey::kEvIdx);
  }
  r.extra = extra_id();
  extend(r.start_ns, r.end_ns);
  out_.ranges.push_back(r);
  range_is_step_.push_back(false);
  ++records_kept_;
  ++out_.stats.instants;
}

void TorchTraceBuilder::metadata_event(std::string_view text) {
  ++out_.stats.metadata_events;
  if (metadata_bytes_ + text.size() > kMaxKeptMetadataBytes) {
    note("metadata events past " + std::to_string(kMaxKeptMetadataBytes >> 20) +
         " MiB in all were not kept");
    return;
  }
  metadata_bytes_ += text.size();
  metadata_.emplace_back(text);
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
  int64_t ts = 0;  // matched against records' starts, which carry the base already
  if (!point_time(f, "ac2g flow", ts)) return;
  FlowEnd end{*id, 0, 0, ts};
  if (is_start) {
    const auto thread = cpu_thread(f.tid, /*say_so=*/true);
    if (!thread) {
      skip("skipped ac2g flow: no `tid`");
      return;
    }
    end.lane = *thread;
    end.order = static_cast<uint32_t>(out_.stats.flow_starts);
    extend(ts, ts);
    linker_.add_flow_start(end);
    ++out_.stats.flow_starts;
  } else {
    const auto stream = as_u32(f.tid);
    if (!stream) {
      skip("skipped ac2g flow: `tid` is not a stream number");
      return;
    }
    end.lane = *stream;
    end.order = static_cast<uint32_t>(out_.stats.flow_finishes);
    extend(ts, ts);
    linker_.add_flow_finish(end);
    ++out_.stats.flow_finishes;
  }
}

void TorchTraceBuilder::refuse_if_nothing_read(std::string_view source) const {
  const auto& s = out_.stats;
  const uint64_t kept = records_kept_ + s.flow_starts + s.flow_finishes;
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

void TorchTraceBuilder::gather_range_facts() {
  for (size_t i = ranges_in_facts_; i < out_.ranges.size(); ++i) {
    const storage::RangeRecord& r = out_.ranges[i];
    range_facts_.add(r, range_is_step_[i]);
  }
  ranges_in_facts_ = out_.ranges.size();
}

void TorchTraceBuilder::release_ranges(std::vector<storage::RangeRecord>& into) {
  gather_range_facts();
  into.clear();
  // The next batch is about as large as this one: room for it at once.
  into.reserve(out_.ranges.size());
  into.swap(out_.ranges);
  range_is_step_.clear();
  ranges_in_facts_ = 0;
}

void TorchTraceBuilder::finish(std::string_view source, const std::function<void()>& checkpoint) {
  link(source, nullptr, checkpoint);
  arrange();
}

namespace {

// Linking's results applied to the records the trace holds, all of them, as read.
class LinksToTrace final : public LinkResults {
 public:
  explicit LinksToTrace(TorchTrace& trace) : trace_(trace) {}
  void kernel(const KernelLink& link) override {
    storage::KernelRecord& k = trace_.kernels.at(link.index);
    k.correlation_id = link.correlation_id;
    k.pid = link.pid;
    if (k.op == storage::kNoString) k.op = link.op;  // unless the trace names it
  }
  void memop(const MemopLink& link) override {
    storage::MemopRecord& m = trace_.memops.at(link.index);
    m.correlation_id = link.correlation_id;
    m.pid = link.pid;
  }
  void unlinked_call(const CallLink& link) override {
    trace_.api_calls.at(link.index).correlation_id = link.correlation_id;
  }

 private:
  TorchTrace& trace_;
};

}  // namespace

void TorchTraceBuilder::link(std::string_view source, LinkResults* results,
                             const std::function<void()>& checkpoint) {
  refuse_if_nothing_read(source);
  const json& header = header_;
  const NoteFn note_fn = [this](const std::string& reason, uint64_t count) { note(reason, count); };
  // (Ranges are released only once the time base is known: those left are all there are when
  // it is applied here.)
  if (!base_known_) apply_time_base(header);
  gather_range_facts();
  if (base_known_) date_from_time_base();
  LinksToTrace to_trace(out_);
  linker_.link(out_.stats, note_fn, results != nullptr ? *results : to_trace, checkpoint);
  read_header(out_, header, first_kernel_device_.value_or(0), note_fn);
  summarize_steps(out_, range_facts_);
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

  out_.variant = derive_variant(out_, hints_);
  name_processes_and_threads();
  keep_header_and_metadata();

  for (const auto& [reason, count] : skipped_) out_.stats.warnings.push_back({reason, count});
  for (const auto& [reason, count] : notes_) out_.stats.warnings.push_back({reason, count});

  range_facts_ = {};
}

void TorchTraceBuilder::arrange() {
  auto by_start = [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; };
  std::stable_sort(out_.kernels.begin(), out_.kernels.end(), by_start);
  std::stable_sort(out_.memops.begin(), out_.memops.end(), by_start);
  std::stable_sort(out_.api_calls.begin(), out_.api_calls.end(), by_start);
  // Enclosing ranges first when two start together.
  std::stable_sort(out_.ranges.begin(), out_.ranges.end(), [](const auto& a, const auto& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
  });
}

void TorchTraceBuilder::name_processes_and_threads() {
  // Names of the processes and threads that hold CPU records; GPU devices, which PyTorch writes
  // as processes too, are described by the kept metadata alone.
  std::vector<uint32_t> cpu_pids = call_pids_;
  cpu_pids.insert(cpu_pids.end(), range_facts_.cpu_pids().begin(), range_facts_.cpu_pids().end());
  std::sort(cpu_pids.begin(), cpu_pids.end());
  cpu_pids.erase(std::unique(cpu_pids.begin(), cpu_pids.end()), cpu_pids.end());
  auto is_cpu_pid = [&](uint32_t pid) {
    return pid != 0 && std::binary_search(cpu_pids.begin(), cpu_pids.end(), pid);
  };
  std::map<uint32_t, storage::StringId> processes;
  std::map<std::pair<uint32_t, uint32_t>, storage::StringId> threads;
  std::map<uint32_t, std::string> process_texts;
  EventFields fields;
  EventReader reader;
  for (const std::string& text : metadata_) {
    if (!reader.read(text, fields).empty()) continue;
    const auto what = as_string(fields.name);
    const auto pid = as_u32(fields.pid);
    if (!what || !pid || !is_cpu_pid(*pid)) continue;
    const ArgMember* name = nullptr;
    for (const auto& m : fields.arg_members)
      if (m.key == "name" && m.value.kind == Kind::kString) name = &m;
    if (name == nullptr) continue;
    if (*what == "process_name") {
      processes[*pid] = intern(name->value.text);
      process_texts[*pid] = std::string(name->value.text);
    } else if (*what == "thread_name") {
      if (const auto tid = as_u32(fields.tid)) threads[{*pid, *tid}] = intern(name->value.text);
    }
  }
  for (const auto& [pid, name] : processes) out_.processes.push_back({pid, name});
  for (auto& [pid, text] : process_texts) process_names_.emplace_back(pid, std::move(text));
  for (const auto& [key, name] : threads) out_.threads.push_back({key.first, key.second, name});
}

void TorchTraceBuilder::keep_header_and_metadata() {
  if (!header_members_.empty()) {
    std::string text = "{";
    for (const auto& [key, value] : header_members_) {
      if (text.size() > 1) text += ", ";
      append_json_string(text, key);
      text += ": ";
      text += value;
    }
    text += '}';
    out_.extras.push_back({kHeaderExtra, std::move(text)});
  }
  if (!metadata_.empty()) {
    std::string text = "[";
    for (const std::string& event : metadata_) {
      if (text.size() > 1) text += ",\n";
      text += event;
    }
    text += ']';
    out_.extras.push_back({kMetadataExtra, std::move(text)});
  }
  if (base_known_) out_.extras.push_back({kTimeBaseExtra, std::to_string(base_ns_)});
  std::sort(out_.extras.begin(), out_.extras.end(),
            [](const auto& a, const auto& b) { return a.key < b.key; });
}

void TorchTraceBuilder::date_from_time_base() {
  // Kineto's base is the wall clock (ns since 1970) when the trace was taken, to the second:
  // the trace's own date. (Its event times count on another clock, so base + ts is not one.)
  constexpr int64_t kYear2000 = 946'684'800LL * 1'000'000'000LL;
  constexpr int64_t kYear2100 = 4'102'444'800LL * 1'000'000'000LL;
  int64_t when = base_ns_;
  if (when <= kYear2000 || when >= kYear2100) {
    // Older writers: the events' own clock may be the wall clock.
    bool any = false;
    auto earliest = [&](int64_t t) {
      when = any ? std::min(when, t) : t;
      any = true;
    };
    if (any_record_) earliest(earliest_);
    if (int64_t t = 0; range_facts_.earliest_start(t)) earliest(t);
  }
  if (when > kYear2000 && when < kYear2100) {
    const std::time_t seconds = static_cast<std::time_t>(when / 1'000'000'000);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    out_.session.created_utc = text;
  }
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
  // Every record read is still here (none is handed over before the base is known); the flows
  // and the linker's facts keep the times as read, which changes nothing in how they link.
  if (!any_time_) return;
  if (!checked_add(lo_, b) || !checked_add(hi_, b)) {
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
  earliest_ += b;
  base_known_ = true;
  base_ns_ = b;
}

}  // namespace fusionscope::interchange::detail
