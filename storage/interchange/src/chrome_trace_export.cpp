#include "fusionscope/interchange/chrome_trace_export.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "chrome_form.h"
#include "compressed_io.h"
#include "event_extra.h"
#include "fusionscope/interchange/interchange_error.h"
#include "json_writer.h"
#include "torch_trace_builder.h"

namespace fusionscope::interchange {
namespace {

using detail::append_int;
using detail::append_micros;
using detail::json_quoted;
using detail::saturating_sub;
using storage::RangeKind;
using storage::StringId;

// "13.0" -> 13000, the integer form PyTorch writes; 0 when the text is not "major.minor".
int64_t cuda_version_number(const std::string& text) {
  const auto dot = text.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 >= text.size() || dot > 4) return 0;
  int64_t major = 0, minor = 0;
  for (size_t i = 0; i < dot; ++i) {
    if (text[i] < '0' || text[i] > '9') return 0;
    major = major * 10 + (text[i] - '0');
  }
  for (size_t i = dot + 1; i < text.size() && i < dot + 3; ++i) {
    if (text[i] < '0' || text[i] > '9') return 0;
    minor = minor * 10 + (text[i] - '0');
  }
  return major * 1000 + minor * 10;
}

// "iteration 3" (the runner's NVTX range) -> 3; -1 for any other name.
long iteration_number(std::string_view name) {
  constexpr std::string_view kPrefix = "iteration ";
  if (name.size() <= kPrefix.size() || !name.starts_with(kPrefix)) return -1;
  long n = 0;
  for (char c : name.substr(kPrefix.size())) {
    if (c < '0' || c > '9' || n > 100'000'000) return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

// A decimal int64, or nullopt.
std::optional<int64_t> parse_int64(std::string_view text) {
  if (text.empty()) return std::nullopt;
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// A record's extra object, read once per distinct text: what it overrides of the event the
// exporter would write, and its members ready to append.
struct Extra {
  std::set<std::string, std::less<>> top_keys, arg_keys;
  std::string top_text;        // `, "key": value` per top-level member
  std::string args_text;       // `"key": value` per member of args, comma-separated
  bool args_replaced = false;  // `args` itself is in top_text (it was not an object)

  bool overrides(std::string_view key) const { return top_keys.find(key) != top_keys.end(); }
  bool overrides_arg(std::string_view key) const { return arg_keys.find(key) != arg_keys.end(); }
};

Extra read_extra(const std::string& text) {
  Extra x;
  const detail::ExtraMembers m = detail::parse_extra(text);
  for (const auto& [key, raw] : m.top) {
    x.top_keys.insert(key);
    if (key == "args") x.args_replaced = true;
    x.top_text += ", ";
    detail::append_json_string(x.top_text, key);
    x.top_text += ": ";
    x.top_text += raw;
  }
  for (const auto& [key, raw] : m.args) {
    x.arg_keys.insert(key);
    if (!x.args_text.empty()) x.args_text += ", ";
    detail::append_json_string(x.args_text, key);
    x.args_text += ": ";
    x.args_text += raw;
  }
  return x;
}

class ChromeWriter {
 public:
  ChromeWriter(const storage::RunData& run, const storage::SessionInfo& session)
      : run_(run), session_(session), quoted_(run.strings.size()) {
    header_ = run.extra(detail::kHeaderExtra);
    metadata_ = run.extra(detail::kMetadataExtra);
    if (const std::string* base = run.extra(detail::kTimeBaseExtra)) {
      if (const auto b = parse_int64(*base)) {
        origin_ = *b;
        own_origin_ = true;
      }
    }
    if (!own_origin_ && header_ != nullptr) {
      // An imported trace without a usable time base: its times are its own, written as read.
      origin_ = 0;
      own_origin_ = true;
    }
    if (!own_origin_) {
      bool any = false;
      auto extend = [&](int64_t t) {
        origin_ = any ? std::min(origin_, t) : t;
        any = true;
      };
      for (const auto& k : run.kernels) extend(k.start_ns);
      for (const auto& m : run.memops) extend(m.start_ns);
      for (const auto& a : run.api_calls) extend(a.start_ns);
      for (const auto& r : run.ranges) extend(r.start_ns);
      // A clock that starts below zero (a relative import) keeps its own zero.
      if (origin_ < 0) origin_ = 0;
    }
  }

  std::string write() {
    collect_lanes();
    out_.reserve(256 * (run_.kernels.size() + run_.api_calls.size() + run_.ranges.size()) + 4096);
    out_ += "{\n";
    if (header_ != nullptr) {
      write_kept_header();
    } else {
      write_header();
    }
    write_own_member();
    out_ += "\"traceEvents\": [\n";
    if (metadata_ != nullptr) {
      write_kept_metadata();
    } else {
      write_metadata();
    }
    write_kernels();
    write_memops();
    write_api_calls();
    write_ranges();
    write_flows();
    out_ += "\n]}\n";
    return std::move(out_);
  }

 private:
  const std::string& quoted(StringId id) {
    const StringId i = id < quoted_.size() ? id : 0;
    if (quoted_.empty()) {
      static const std::string kEmpty = "\"\"";
      return kEmpty;
    }
    if (quoted_[i].empty()) quoted_[i] = json_quoted(run_.str(i));
    return quoted_[i];
  }

  // The extra object of a record, read once per distinct id; nullptr for none.
  const Extra* extra(StringId id) {
    if (id == storage::kNoString || id >= run_.strings.size()) return nullptr;
    auto [it, added] = extras_.try_emplace(id);
    if (added) it->second = std::make_unique<Extra>(read_extra(run_.str(id)));
    return it->second.get();
  }

  void begin_event() {
    if (!first_event_) out_ += ",\n";
    first_event_ = false;
  }

  // {"ph": ..., "cat": ..., "name": ..., "pid": ..., "tid": ..., "ts": ..., "dur": ... and the
  // extra object's top-level members (each in place of the writer's own of the same key), left
  // open for args. `cat` null: none; `end` empty: no dur (an instant).
  void event(const char* ph, const char* cat, const std::string& quoted_name, uint32_t pid,
             uint32_t tid, int64_t start, std::optional<int64_t> end, const Extra* x) {
    auto ours = [x](std::string_view key) { return x == nullptr || !x->overrides(key); };
    begin_event();
    out_ += '{';
    bool first = true;
    auto key = [&](const char* k) {
      if (!first) out_ += ", ";
      first = false;
      out_ += '"';
      out_ += k;
      out_ += "\": ";
    };
    if (ours("ph")) {
      key("ph");
      out_ += '"';
      out_ += ph;
      out_ += '"';
    }
    if (cat != nullptr && ours("cat")) {
      key("cat");
      out_ += '"';
      out_ += cat;
      out_ += '"';
    }
    if (ours("name")) {
      key("name");
      out_ += quoted_name;
    }
    if (ours("pid")) {
      key("pid");
      append_int(out_, pid);
    }
    if (ours("tid")) {
      key("tid");
      append_int(out_, tid);
    }
    if (ours("ts")) {
      key("ts");
      append_micros(out_, saturating_sub(start, origin_));
    }
    if (end && ours("dur")) {
      key("dur");
      append_micros(out_, std::max<int64_t>(saturating_sub(*end, start), 0));
    }
    if (x != nullptr) {
      // top_text starts with ", "; the event has at least one member before it unless the extra
      // object overrides all of them.
      out_ += first ? std::string_view(x->top_text).substr(2) : std::string_view(x->top_text);
      first = first && x->top_text.empty();
    }
    event_empty_ = first;
  }

  // `, "args": {` ... `}}`: args are written only when the extra object does not replace them.
  class Args {
   public:
    Args(ChromeWriter& w, const Extra* x) : w_(w), x_(x) {
      replaced_ = x != nullptr && x->args_replaced;
    }
    bool ours(std::string_view key) const {
      return !replaced_ && (x_ == nullptr || !x_->overrides_arg(key));
    }
    std::string& key(std::string_view k) {
      open();
      if (!first_) w_.out_ += ", ";
      first_ = false;
      w_.out_ += '"';
      w_.out_ += k;
      w_.out_ += "\": ";
      return w_.out_;
    }
    template <typename Int>
    void integer(std::string_view k, Int v) {
      if (ours(k)) append_int(key(k), v);
    }
    void text(std::string_view k, const std::string& quoted_value) {
      if (ours(k)) key(k) += quoted_value;
    }
    // The extra object's members of args, here (else close() writes them last).
    void extra_members() {
      if (extra_written_ || replaced_ || x_ == nullptr || x_->args_text.empty()) return;
      extra_written_ = true;
      open();
      if (!first_) w_.out_ += ", ";
      first_ = false;
      w_.out_ += x_->args_text;
    }
    // Closes args (written when anything went in, or when `always`) and the event.
    void close(bool always = true) {
      extra_members();
      if (!open_ && always && !replaced_) open();
      if (open_) w_.out_ += '}';
      w_.out_ += '}';
    }

   private:
    void open() {
      if (open_) return;
      open_ = true;
      w_.out_ += w_.event_empty_ ? "\"args\": {" : ", \"args\": {";
    }
    ChromeWriter& w_;
    const Extra* x_;
    bool replaced_ = false;
    bool open_ = false;
    bool first_ = true;
    bool extra_written_ = false;
  };

  // The process a CPU record is written under: its own, or the stand-in for an unknown one.
  static uint32_t cpu_pid(uint32_t pid) { return pid != 0 ? pid : detail::kUnknownCpuPid; }

  void collect_lanes() {
    for (const auto& k : run_.kernels) {
      if (k.op != storage::kNoString) op_names_.insert(k.op);
      streams_.insert({k.device, k.stream});
      device_of_stream_.emplace(k.stream, k.device);
    }
    for (const auto& m : run_.memops) {
      streams_.insert({m.device, m.stream});
      device_of_stream_.emplace(m.stream, m.device);
    }
    for (const auto& r : run_.ranges) {
      if (r.kind == RangeKind::kGpuAnnotation) {
        streams_.insert({gpu_annotation_device(r), r.thread_id});
      } else {
        threads_.insert({cpu_pid(r.pid), r.thread_id});
      }
    }
    for (const auto& a : run_.api_calls) threads_.insert({cpu_pid(a.pid), a.thread_id});
  }

  uint32_t gpu_annotation_device(const storage::RangeRecord& r) const {
    const auto it = device_of_stream_.find(r.thread_id);
    return it == device_of_stream_.end() ? 0 : it->second;
  }

  // An imported trace's own top-level members, as it wrote them.
  void write_kept_header() {
    const detail::ExtraMembers m = detail::parse_extra(*header_);
    for (const auto& [key, raw] : m.top) {
      detail::append_json_string(out_, key);
      out_ += ": ";
      out_ += raw;
      out_ += ",\n";
    }
  }

  void write_header() {
    out_ += "\"schemaVersion\": 1,\n\"displayTimeUnit\": \"ms\",\n\"baseTimeNanoseconds\": ";
    append_int(out_, origin_);
    out_ += ",\n\"traceName\": ";
    out_ += json_quoted(run_.info.name);
    out_ += ",\n";
    std::set<uint32_t> devices;
    for (const auto& [device, stream] : streams_) devices.insert(device);
    if (!devices.empty()) {
      out_ += "\"deviceProperties\": [";
      bool first = true;
      for (uint32_t d : devices) {
        out_ += first ? "\n  " : ",\n  ";
        first = false;
        out_ += "{\"id\": ";
        append_int(out_, d);
        out_ += ", \"name\": ";
        out_ += json_quoted(session_.gpu_name);
        out_ += ", \"computeMajor\": ";
        append_int(out_, session_.cc_major);
        out_ += ", \"computeMinor\": ";
        append_int(out_, session_.cc_minor);
        out_ += ", \"numSms\": ";
        append_int(out_, session_.sm_count);
        out_ += "}";
      }
      out_ += "\n],\n";
    }
    for (const auto& [key, text] : {std::pair{"cuda_driver_version", &session_.driver_version},
                                    std::pair{"cuda_runtime_version", &session_.cuda_version}}) {
      if (const int64_t n = cuda_version_number(*text); n > 0) {
        out_ += "\"";
        out_ += key;
        out_ += "\": ";
        append_int(out_, n);
        out_ += ",\n";
      }
    }
    if (!session_.cupti_version.empty()) {
      out_ += "\"cupti_version\": " + json_quoted(session_.cupti_version) + ",\n";
    }
  }

  void write_own_member() {
    out_ += "\"fusionscope\": {\"session\": " + json_quoted(session_.name) +
            ", \"run\": " + json_quoted(run_.info.name) +
            ", \"kind\": " + json_quoted(run_.info.kind) +
            ", \"variant\": " + json_quoted(run_.info.variant) +
            ", \"dtype\": " + json_quoted(run_.info.dtype) +
            ", \"warmup\": " + std::to_string(run_.info.warmup) +
            ", \"iterations\": " + std::to_string(run_.info.iterations) + "},\n";
  }

  void metadata(const char* what, uint32_t pid, uint32_t tid, const char* arg,
                const std::string& value_json) {
    begin_event();
    out_ += "{\"ph\": \"M\", \"name\": \"";
    out_ += what;
    out_ += "\", \"pid\": ";
    append_int(out_, pid);
    out_ += ", \"tid\": ";
    append_int(out_, tid);
    out_ += ", \"args\": {\"";
    out_ += arg;
    out_ += "\": ";
    out_ += value_json;
    out_ += "}}";
  }

  // An imported trace's metadata events (process and thread names, labels, sort indexes), as it
  // wrote them.
  void write_kept_metadata() {
    const std::string_view text = *metadata_;
    if (text.size() < 2 || text.front() != '[' || text.back() != ']') return;
    const std::string_view inner = text.substr(1, text.size() - 2);
    if (inner.find_first_not_of(" \n\r\t") == std::string_view::npos) return;
    begin_event();
    out_ += inner;
  }

  void write_metadata() {
    std::set<uint32_t> cpu_pids;
    for (const auto& [pid, thread] : threads_) cpu_pids.insert(pid);
    for (uint32_t pid : cpu_pids) {
      const std::string& name = run_.process_name(pid == detail::kUnknownCpuPid ? 0 : pid);
      metadata("process_name", pid, 0, "name", json_quoted(name.empty() ? "CPU" : name));
      metadata("process_labels", pid, 0, "labels", "\"CPU\"");
      metadata("process_sort_index", pid, 0, "sort_index", "0");
    }
    for (const auto& [pid, thread] : threads_) {
      const std::string& name = run_.thread_name(pid == detail::kUnknownCpuPid ? 0 : pid, thread);
      metadata("thread_name", pid, thread, "name",
               json_quoted(name.empty() ? "thread " + std::to_string(thread) : name));
      metadata("thread_sort_index", pid, thread, "sort_index", std::to_string(thread));
    }
    std::set<uint32_t> devices;
    for (const auto& [device, stream] : streams_) devices.insert(device);
    for (uint32_t d : devices) {
      std::string label = "GPU " + std::to_string(d);
      if (!session_.gpu_name.empty()) label += " (" + session_.gpu_name + ")";
      metadata("process_name", d, 0, "name", json_quoted(label));
      metadata("process_labels", d, 0, "labels", "\"GPU\"");
      metadata("process_sort_index", d, 0, "sort_index", std::to_string(d + 1));
    }
    for (const auto& [device, stream] : streams_) {
      metadata("thread_name", device, stream, "name",
               json_quoted("stream " + std::to_string(stream)));
      metadata("thread_sort_index", device, stream, "sort_index", std::to_string(stream));
    }
  }

  // Kernel names as PyTorch writes them, demangled; the mangled name (what the session holds)
  // stays in args["mangled name"] so that an import gives it back.
  const std::string& kernel_name(StringId id) {
    const StringId i = id < quoted_.size() ? id : 0;
    if (demangled_.empty()) demangled_.resize(quoted_.size());
    if (demangled_[i].empty()) {
      const std::string& name = run_.str(i);
      const std::string d = detail::demangled(name);
      demangled_[i] = json_quoted(d);
      if (d != name) mangled_args_[i] = json_quoted(name);
    }
    return demangled_[i];
  }

  void write_kernels() {
    for (const auto& k : run_.kernels) {
      const Extra* x = extra(k.extra);
      event("X", "kernel", kernel_name(k.name), k.device, k.stream, k.start_ns, k.end_ns, x);
      Args args(*this, x);
      if (k.external_id != 0) args.integer("External id", k.external_id);
      args.integer("device", k.device);
      args.integer("stream", k.stream);
      if (k.correlation_id != 0) args.integer("correlation", k.correlation_id);
      if (args.ours("grid")) append_dim3(args.key("grid"), k.grid);
      if (args.ours("block")) append_dim3(args.key("block"), k.block);
      args.integer("registers per thread", k.registers);
      // PyTorch writes static + dynamic as one figure; the split is written where there is one.
      args.integer("shared memory", uint64_t{k.static_smem} + k.dynamic_smem);
      if (k.static_smem != 0) {
        args.integer("static shared memory", k.static_smem);
        args.integer("dynamic shared memory", k.dynamic_smem);
      }
      // The op the session attributes the kernel to ("" for none): an import takes it as it is
      // rather than attributing the kernel again.
      args.text("op", quoted(k.op));
      if (x == nullptr || !x->overrides("name")) {
        if (const auto it = mangled_args_.find(k.name); it != mangled_args_.end()) {
          args.text("mangled name", it->second);
        }
      }
      args.close();
    }
  }

  static void append_dim3(std::string& out, const storage::Dim3& d) {
    out += '[';
    append_int(out, d.x);
    out += ", ";
    append_int(out, d.y);
    out += ", ";
    append_int(out, d.z);
    out += ']';
  }

  void write_memops() {
    for (const auto& m : run_.memops) {
      const Extra* x = extra(m.extra);
      const bool memset = m.kind == storage::MemopKind::kMemset;
      event("X", memset ? "gpu_memset" : "gpu_memcpy",
            json_quoted(detail::memop_event_name(m.kind, m.copy_kind)), m.device, m.stream,
            m.start_ns, m.end_ns, x);
      Args args(*this, x);
      if (m.external_id != 0) args.integer("External id", m.external_id);
      args.integer("device", m.device);
      args.integer("stream", m.stream);
      if (m.correlation_id != 0) args.integer("correlation", m.correlation_id);
      args.integer("bytes", m.bytes);
      args.close();
    }
  }

  void write_api_calls() {
    for (const auto& a : run_.api_calls) {
      const Extra* x = extra(a.extra);
      const bool runtime = a.domain == storage::ApiDomain::kRuntime;
      event("X", runtime ? "cuda_runtime" : "cuda_driver", quoted(a.name), cpu_pid(a.pid),
            a.thread_id, a.start_ns, a.end_ns, x);
      Args args(*this, x);
      if (a.external_id != 0) args.integer("External id", a.external_id);
      if (a.correlation_id != 0) args.integer("correlation", a.correlation_id);
      args.close();
    }
  }

  void write_ranges() {
    for (const auto& r : run_.ranges) {
      const Extra* x = extra(r.extra);
      const std::string& name = quoted(r.name);
      const uint32_t pid = cpu_pid(r.pid);
      switch (r.kind) {
        case RangeKind::kGpuAnnotation:
          event("X", "gpu_user_annotation", name, gpu_annotation_device(r), r.thread_id, r.start_ns,
                r.end_ns, x);
          break;
        case RangeKind::kNvtx:
          if (x != nullptr && x->overrides("cat")) {
            // An imported NVTX range: as the trace wrote it.
            event("X", nullptr, name, pid, r.thread_id, r.start_ns, r.end_ns, x);
          } else if (const long n = iteration_number(run_.str(r.name)); n >= 0) {
            // The runner's ranges as PyTorch's profiler writes their kind: iterations are
            // ProfilerStep#N annotations, ranges that name the ops kernels belong to are
            // operators, and the rest are user annotations.
            event("X", "user_annotation", json_quoted("ProfilerStep#" + std::to_string(n)), pid,
                  r.thread_id, r.start_ns, r.end_ns, x);
          } else {
            event("X", op_names_.contains(r.name) ? "cpu_op" : "user_annotation", name, pid,
                  r.thread_id, r.start_ns, r.end_ns, x);
          }
          break;
        case RangeKind::kInstant:
          event("i", nullptr, name, pid, r.thread_id, r.start_ns, std::nullopt, x);
          break;
        case RangeKind::kOther:
          event("X", nullptr, name, pid, r.thread_id, r.start_ns, r.end_ns, x);
          break;
        case RangeKind::kCpuOp:
        case RangeKind::kUserAnnotation:
        case RangeKind::kSync:
        case RangeKind::kTracerOverhead:
          event("X", detail::range_category(r.kind), name, pid, r.thread_id, r.start_ns, r.end_ns,
                x);
          break;
      }
      // Kineto's order: External id, the operator's inputs (kept in extra), Ev Idx last.
      Args args(*this, x);
      if (r.external_id != 0) args.integer("External id", r.external_id);
      args.extra_members();
      if (r.event_index >= 0) args.integer("Ev Idx", r.event_index);
      args.close(r.kind != RangeKind::kInstant);
    }
  }

  void flow(const char* ph, uint32_t id, uint32_t pid, uint32_t tid, int64_t ts, bool bind_end) {
    begin_event();
    out_ += "{\"ph\": \"";
    out_ += ph;
    out_ += "\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": ";
    append_int(out_, id);
    out_ += ", \"pid\": ";
    append_int(out_, pid);
    out_ += ", \"tid\": ";
    append_int(out_, tid);
    out_ += ", \"ts\": ";
    append_micros(out_, saturating_sub(ts, origin_));
    if (bind_end) out_ += ", \"bp\": \"e\"";
    out_ += "}";
  }

  // One flow per correlation id, from its API call to its first GPU activity (a graph launch
  // starts many kernels under one id; a flow id may finish once).
  void write_flows() {
    std::unordered_map<uint32_t, const storage::ApiCallRecord*> call_of;
    for (const auto& a : run_.api_calls) {
      if (a.correlation_id != 0) call_of.emplace(a.correlation_id, &a);
    }
    struct Target {
      uint32_t device, stream;
      int64_t start;
    };
    std::map<uint32_t, Target> first_gpu;
    auto consider = [&](uint32_t id, uint32_t device, uint32_t stream, int64_t start) {
      if (id == 0 || !call_of.contains(id)) return;
      const auto [it, added] = first_gpu.emplace(id, Target{device, stream, start});
      if (!added && start < it->second.start) it->second = Target{device, stream, start};
    };
    for (const auto& k : run_.kernels) consider(k.correlation_id, k.device, k.stream, k.start_ns);
    for (const auto& m : run_.memops) consider(m.correlation_id, m.device, m.stream, m.start_ns);
    for (const auto& [id, target] : first_gpu) {
      const auto* call = call_of.at(id);
      flow("s", id, cpu_pid(call->pid), call->thread_id, call->start_ns, false);
      flow("f", id, target.device, target.stream, target.start, true);
    }
  }

  const storage::RunData& run_;
  const storage::SessionInfo& session_;
  const std::string* header_ = nullptr;    // run extra kHeaderExtra
  const std::string* metadata_ = nullptr;  // run extra kMetadataExtra
  std::vector<std::string> quoted_;
  std::vector<std::string> demangled_;                      // quoted, by string id
  std::unordered_map<StringId, std::string> mangled_args_;  // quoted mangled names, by id
  std::unordered_map<StringId, std::unique_ptr<Extra>> extras_;
  std::unordered_set<StringId> op_names_;  // the ops kernels belong to
  int64_t origin_ = 0;
  bool own_origin_ = false;  // the origin is the trace's own time base
  std::string out_;
  bool first_event_ = true;
  bool event_empty_ = false;                         // the event being written has no member yet
  std::set<std::pair<uint32_t, uint32_t>> streams_;  // (device, stream)
  std::set<std::pair<uint32_t, uint32_t>> threads_;  // (pid as written, thread)
  std::unordered_map<uint32_t, uint32_t> device_of_stream_;
};

}  // namespace

void write_chrome_trace(std::ostream& out, const storage::RunData& run,
                        const storage::SessionInfo& session) {
  const std::string text = ChromeWriter(run, session).write();
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

void export_chrome_trace(const std::filesystem::path& file, const storage::RunData& run,
                         const storage::SessionInfo& session) {
  std::string text = ChromeWriter(run, session).write();
  if (detail::has_gz_extension(file)) text = detail::gzip(text);
  detail::write_file(file, text);
}

}  // namespace fusionscope::interchange
