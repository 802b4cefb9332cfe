#include "fusionscope/interchange/chrome_trace_export.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "compressed_io.h"
#include "fusionscope/interchange/interchange_error.h"
#include "json_writer.h"

namespace fusionscope::interchange {
namespace {

using detail::append_int;
using detail::append_micros;
using detail::json_quoted;
using detail::saturating_sub;
using storage::RangeKind;
using storage::StringId;

// GPU processes are numbered by device; the CPU process sits above any device number.
constexpr uint32_t kCpuPid = 1'000'000;

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

// A mangled C++ name demangled ("_Z3fooi" -> "foo(int)"); other names come back as they are.
std::string demangled(const std::string& name) {
  if (!name.starts_with("_Z")) return name;
  int status = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && d != nullptr ? std::string(d) : name;
  std::free(d);
  return out;
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

class ChromeWriter {
 public:
  ChromeWriter(const storage::RunData& run, const storage::SessionInfo& session)
      : run_(run), session_(session), quoted_(run.strings.size()) {
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

  std::string write() {
    collect_lanes();
    out_.reserve(256 * (run_.kernels.size() + run_.api_calls.size() + run_.ranges.size()) + 4096);
    write_header();
    out_ += "\"traceEvents\": [\n";
    write_metadata();
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

  void begin_event() {
    if (!first_event_) out_ += ",\n";
    first_event_ = false;
  }

  // {"ph": "X", "cat": ..., "name": ..., "pid": ..., "tid": ..., "ts": ..., "dur": ...
  // (left open for args).
  void complete_event(const char* cat, const std::string& quoted_name, uint32_t pid, uint32_t tid,
                      int64_t start, int64_t end) {
    begin_event();
    out_ += "{\"ph\": \"X\", \"cat\": \"";
    out_ += cat;
    out_ += "\", \"name\": ";
    out_ += quoted_name;
    out_ += ", \"pid\": ";
    append_int(out_, pid);
    out_ += ", \"tid\": ";
    append_int(out_, tid);
    out_ += ", \"ts\": ";
    append_micros(out_, saturating_sub(start, origin_));
    out_ += ", \"dur\": ";
    append_micros(out_, std::max<int64_t>(saturating_sub(end, start), 0));
  }

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
        threads_.insert(r.thread_id);
      }
    }
    for (const auto& a : run_.api_calls) threads_.insert(a.thread_id);
  }

  uint32_t gpu_annotation_device(const storage::RangeRecord& r) const {
    const auto it = device_of_stream_.find(r.thread_id);
    return it == device_of_stream_.end() ? 0 : it->second;
  }

  void write_header() {
    out_ += "{\n\"schemaVersion\": 1,\n\"displayTimeUnit\": \"ms\",\n\"baseTimeNanoseconds\": ";
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

  void write_metadata() {
    if (!threads_.empty()) {
      metadata("process_name", kCpuPid, 0, "name", "\"CPU\"");
      metadata("process_labels", kCpuPid, 0, "labels", "\"CPU\"");
      metadata("process_sort_index", kCpuPid, 0, "sort_index", "0");
      for (uint32_t t : threads_) {
        metadata("thread_name", kCpuPid, t, "name", json_quoted("thread " + std::to_string(t)));
        metadata("thread_sort_index", kCpuPid, t, "sort_index", std::to_string(t));
      }
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
      const std::string d = demangled(name);
      demangled_[i] = json_quoted(d);
      if (d != name) mangled_args_[i] = ", \"mangled name\": " + json_quoted(name);
    }
    return demangled_[i];
  }

  void write_kernels() {
    for (const auto& k : run_.kernels) {
      complete_event("kernel", kernel_name(k.name), k.device, k.stream, k.start_ns, k.end_ns);
      out_ += ", \"args\": {\"device\": ";
      append_int(out_, k.device);
      out_ += ", \"stream\": ";
      append_int(out_, k.stream);
      out_ += ", \"correlation\": ";
      append_int(out_, k.correlation_id);
      out_ += ", \"grid\": [";
      append_dim3(k.grid);
      out_ += "], \"block\": [";
      append_dim3(k.block);
      out_ += "], \"registers per thread\": ";
      append_int(out_, k.registers);
      out_ += ", \"shared memory\": ";
      append_int(out_, uint64_t{k.static_smem} + k.dynamic_smem);
      out_ += ", \"static shared memory\": ";
      append_int(out_, k.static_smem);
      out_ += ", \"dynamic shared memory\": ";
      append_int(out_, k.dynamic_smem);
      // The op the session attributes the kernel to ("" for none): an import takes it as it is
      // rather than attributing the kernel again.
      out_ += ", \"op\": ";
      out_ += quoted(k.op);
      if (const auto it = mangled_args_.find(k.name); it != mangled_args_.end()) {
        out_ += it->second;
      }
      out_ += "}}";
    }
  }

  void append_dim3(const storage::Dim3& d) {
    append_int(out_, d.x);
    out_ += ", ";
    append_int(out_, d.y);
    out_ += ", ";
    append_int(out_, d.z);
  }

  static std::string memop_name(const storage::MemopRecord& m) {
    if (m.kind == storage::MemopKind::kMemset) return "\"Memset (Device)\"";
    switch (m.copy_kind) {
      case storage::CopyKind::kHtoD:
        return "\"Memcpy HtoD\"";
      case storage::CopyKind::kDtoH:
        return "\"Memcpy DtoH\"";
      case storage::CopyKind::kDtoD:
        return "\"Memcpy DtoD\"";
      case storage::CopyKind::kHtoH:
        return "\"Memcpy HtoH\"";
      case storage::CopyKind::kPeer:
        return "\"Memcpy PtoP\"";
      case storage::CopyKind::kUnknown:
        break;
    }
    return "\"Memcpy\"";
  }

  void write_memops() {
    for (const auto& m : run_.memops) {
      const bool memset = m.kind == storage::MemopKind::kMemset;
      complete_event(memset ? "gpu_memset" : "gpu_memcpy", memop_name(m), m.device, m.stream,
                     m.start_ns, m.end_ns);
      out_ += ", \"args\": {\"device\": ";
      append_int(out_, m.device);
      out_ += ", \"stream\": ";
      append_int(out_, m.stream);
      out_ += ", \"correlation\": ";
      append_int(out_, m.correlation_id);
      out_ += ", \"bytes\": ";
      append_int(out_, m.bytes);
      out_ += "}}";
    }
  }

  void write_api_calls() {
    for (const auto& a : run_.api_calls) {
      const bool runtime = a.domain == storage::ApiDomain::kRuntime;
      complete_event(runtime ? "cuda_runtime" : "cuda_driver", quoted(a.name), kCpuPid, a.thread_id,
                     a.start_ns, a.end_ns);
      out_ += ", \"args\": {\"correlation\": ";
      append_int(out_, a.correlation_id);
      out_ += "}}";
    }
  }

  void write_ranges() {
    for (const auto& r : run_.ranges) {
      switch (r.kind) {
        case RangeKind::kGpuAnnotation:
          complete_event("gpu_user_annotation", quoted(r.name), gpu_annotation_device(r),
                         r.thread_id, r.start_ns, r.end_ns);
          break;
        case RangeKind::kCpuOp:
          complete_event("cpu_op", quoted(r.name), kCpuPid, r.thread_id, r.start_ns, r.end_ns);
          break;
        case RangeKind::kUserAnnotation:
          complete_event("user_annotation", quoted(r.name), kCpuPid, r.thread_id, r.start_ns,
                         r.end_ns);
          break;
        case RangeKind::kNvtx:
          // The runner's ranges as PyTorch's profiler writes their kind: iterations are
          // ProfilerStep#N annotations, ranges that name the ops kernels belong to are
          // operators, and the rest are user annotations.
          if (const long n = iteration_number(run_.str(r.name)); n >= 0) {
            complete_event("user_annotation", json_quoted("ProfilerStep#" + std::to_string(n)),
                           kCpuPid, r.thread_id, r.start_ns, r.end_ns);
          } else if (op_names_.contains(r.name)) {
            complete_event("cpu_op", quoted(r.name), kCpuPid, r.thread_id, r.start_ns, r.end_ns);
          } else {
            complete_event("user_annotation", quoted(r.name), kCpuPid, r.thread_id, r.start_ns,
                           r.end_ns);
          }
          break;
        case RangeKind::kSync:
          complete_event("cpu_sync", quoted(r.name), kCpuPid, r.thread_id, r.start_ns, r.end_ns);
          break;
        case RangeKind::kTracerOverhead:
          complete_event("tracer_overhead", quoted(r.name), kCpuPid, r.thread_id, r.start_ns,
                         r.end_ns);
          break;
      }
      out_ += ", \"args\": {}}";
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
      flow("s", id, kCpuPid, call->thread_id, call->start_ns, false);
      flow("f", id, target.device, target.stream, target.start, true);
    }
  }

  const storage::RunData& run_;
  const storage::SessionInfo& session_;
  std::vector<std::string> quoted_;
  std::vector<std::string> demangled_;                      // quoted, by string id
  std::unordered_map<StringId, std::string> mangled_args_;  // `, "mangled name": ...` by id
  std::unordered_set<StringId> op_names_;                   // the ops kernels belong to
  int64_t origin_ = 0;
  std::string out_;
  bool first_event_ = true;
  std::set<std::pair<uint32_t, uint32_t>> streams_;  // (device, stream)
  std::set<uint32_t> threads_;
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
