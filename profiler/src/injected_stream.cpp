#include "injected_stream.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace fusionscope::profiler {

IterationRule::IterationRule(std::string prefix) {
  if (prefix.empty()) {
    prefixes_ = {"ProfilerStep#", "iteration"};
  } else {
    prefixes_ = {std::move(prefix)};
  }
}

std::optional<std::string> IterationRule::rename(std::string_view name) {
  if (chosen_.empty()) {
    for (const auto& p : prefixes_) {
      if (name.starts_with(p)) {
        chosen_ = p;
        break;
      }
    }
    if (chosen_.empty()) return std::nullopt;
  }
  if (!name.starts_with(chosen_)) return std::nullopt;
  return "iteration " + std::to_string(next_++);
}

std::string InjectedProcess::display_name() const {
  if (argv.empty()) return "process " + std::to_string(pid);
  auto base = [](const std::string& a) {
    const auto slash = a.rfind('/');
    return slash == std::string::npos ? a : a.substr(slash + 1);
  };
  std::string name = base(argv[0]);
  // An interpreter's script says more than the interpreter: "python3 train.py".
  const bool interpreter = name.starts_with("python") || name == "sh" || name == "bash" ||
                           name == "perl" || name == "ruby" || name == "node";
  for (std::size_t i = 1; interpreter && i < argv.size() && i < 3; ++i) {
    if (argv[i].starts_with("-")) continue;
    name += " " + base(argv[i]);
    break;
  }
  return name;
}

namespace {

// Tags every record with the process it came from before it reaches the run's sink.
class ProcessSink final : public TraceSink {
 public:
  ProcessSink(TraceSink& inner, uint32_t pid) : inner_(inner), pid_(pid) {}
  storage::StringId intern(std::string_view text) override { return inner_.intern(text); }
  void insert_kernels(std::span<const storage::KernelRecord> records) override {
    inner_.insert_kernels(tagged(records));
  }
  void insert_api_calls(std::span<const storage::ApiCallRecord> records) override {
    inner_.insert_api_calls(tagged(records));
  }
  void insert_ranges(std::span<const storage::RangeRecord> records) override {
    inner_.insert_ranges(tagged(records));
  }
  void insert_memops(std::span<const storage::MemopRecord> records) override {
    inner_.insert_memops(tagged(records));
  }
  void name_process(uint32_t pid, std::string_view name) override {
    inner_.name_process(pid, name);
  }

 private:
  template <class Record>
  std::span<const Record> tagged(std::span<const Record> records) {
    auto& copy = scratch<Record>();
    copy.assign(records.begin(), records.end());
    for (auto& r : copy) set_pid(r);
    return copy;
  }
  template <class Record>
  void set_pid(Record& r) {
    r.pid = pid_;
  }
  template <class Record>
  std::vector<Record>& scratch() {
    static thread_local std::vector<Record> v;
    return v;
  }

  TraceSink& inner_;
  uint32_t pid_;
};

constexpr uint32_t kCorrelationBits = 24;

uint32_t spread(uint32_t correlation, std::size_t process_index) {
  if (correlation == 0 || process_index == 0) return correlation;
  return (static_cast<uint32_t>(process_index) << kCorrelationBits) |
         (correlation & ((1u << kCorrelationBits) - 1));
}

}  // namespace

struct InjectedStreams::Stream {
  inject::FrameStream frames;
  InjectedProcess process;
  std::unique_ptr<ProcessSink> sink;
  std::unique_ptr<RunAssembler> assembler;
  std::unique_ptr<IterationRule> rule;
  std::string renamed;  // the current record's iteration name, alive during its add()
  bool open = true;
};

InjectedStreams::InjectedStreams(TraceSink& sink, Options options)
    : sink_(sink), options_(std::move(options)) {}
InjectedStreams::~InjectedStreams() = default;

std::size_t InjectedStreams::open() {
  streams_.push_back(std::make_unique<Stream>());
  return streams_.size() - 1;
}

std::size_t InjectedStreams::open_streams() const {
  return static_cast<std::size_t>(
      std::count_if(streams_.begin(), streams_.end(), [](const auto& s) { return s->open; }));
}

void InjectedStreams::feed(std::size_t stream, std::span<const uint8_t> bytes) {
  Stream& s = *streams_.at(stream);
  if (!s.process.stream_error.empty()) return;
  s.frames.feed(bytes);
  inject::FrameType type{};
  std::span<const uint8_t> payload;
  while (s.frames.next(type, payload)) {
    handle(s, type, payload);
    if (!s.process.stream_error.empty()) return;
  }
  if (s.frames.broken())
    s.process.stream_error = "the stream from the process broke (a frame claimed more than " +
                             std::to_string(inject::kMaxFrameBytes >> 20) +
                             " MiB); what came before it is kept";
}

void InjectedStreams::close(std::size_t stream) {
  Stream& s = *streams_.at(stream);
  s.open = false;
  if (s.frames.pending_bytes() > 0 && s.process.stream_error.empty() && s.process.said_hello &&
      !s.process.ended_cleanly && s.process.crash_signal == 0) {
    // A partial frame at the end: the process died in the middle of a send.
    s.process.notes.push_back("the stream ended in the middle of a frame");
  }
}

void InjectedStreams::handle(Stream& s, inject::FrameType type, std::span<const uint8_t> payload) {
  using inject::FrameType;
  bool ok = true;
  if (!s.process.said_hello && type != FrameType::kHello) {
    s.process.stream_error = "the process sent data before saying who it is";
    return;
  }
  switch (type) {
    case FrameType::kHello: {
      if (s.process.said_hello) break;
      const inject::Hello h = inject::decode_hello(payload, &ok);
      if (!ok) {
        s.process.stream_error = "the injected library speaks another version of the stream (" +
                                 std::to_string(h.version) + ", expected " +
                                 std::to_string(inject::kWireVersion) + ")";
        return;
      }
      s.process.pid = h.pid;
      s.process.ppid = h.ppid;
      s.process.argv = h.argv;
      s.process.said_hello = true;
      s.process.index = hellos_++;
      s.sink = std::make_unique<ProcessSink>(sink_, h.pid);
      s.sink->name_process(h.pid, s.process.display_name());
      // The default NVTX domain is the program's own: its innermost range names a kernel's op.
      s.assembler = std::make_unique<RunAssembler>(
          *s.sink,
          RunAssembler::Options{"", "iteration ", options_.batch_records, options_.iteration_ops});
      s.rule = std::make_unique<IterationRule>(options_.iteration_range);
      break;
    }
    case FrameType::kRecords:
      if (!inject::decode_activity_records(payload,
                                           [&](const CUpti_Activity& r) { on_record(s, r); }))
        s.process.notes.push_back("a malformed activity buffer was cut short");
      break;
    case FrameType::kGraphNodes: {
      const auto nodes = inject::decode_graph_nodes(payload, &ok);
      std::vector<GraphNodeEvent> events;
      for (const auto& n : nodes) {
        GraphNodeEvent e;
        e.kind = n.cloned ? GraphNodeEvent::Kind::kCloned : GraphNodeEvent::Kind::kCreated;
        e.node_id = n.node_id;
        e.original_id = n.original_id;
        e.thread_id = n.thread_id;
        e.t_ns = n.t_ns;
        events.push_back(e);
      }
      s.assembler->add_graph_nodes(events);
      break;
    }
    case FrameType::kStatus: {
      inject::PayloadReader r(payload);
      const auto level = static_cast<inject::StatusLevel>(r.u32());
      std::string text = r.str();
      ok = r.ok();
      if (ok) {
        if (level == inject::StatusLevel::kNoTrace) s.process.no_trace = true;
        s.process.notes.push_back(std::move(text));
      }
      break;
    }
    case FrameType::kDropped: {
      inject::PayloadReader r(payload);
      s.process.dropped_records += r.u64();
      ok = r.ok();
      break;
    }
    case FrameType::kCounters:
      s.process.counters = inject::decode_counters(payload, &ok);
      break;
    case FrameType::kCrash: {
      inject::PayloadReader r(payload);
      s.process.crash_signal = static_cast<int>(r.u32());
      ok = r.ok();
      break;
    }
    case FrameType::kEnd:
      s.process.ended_cleanly = true;
      break;
    default:
      break;  // a newer library's frame this build does not know: skipped
  }
  if (!ok) s.process.stream_error = "a malformed frame from the process";
}

void InjectedStreams::on_record(Stream& s, const CUpti_Activity& record) {
  const std::size_t size = inject::record_size(record.kind);
  if (size == 0) {
    s.assembler->add(record);
    return;
  }
  // A copy, patched: correlation ids spread per process, iteration ranges renamed.
  inject::AnyActivity r;
  std::memcpy(&r, &record, size);
  const std::size_t k = s.process.index;
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      r.kernel.correlationId = spread(r.kernel.correlationId, k);
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      r.memcpy.correlationId = spread(r.memcpy.correlationId, k);
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      r.memset.correlationId = spread(r.memset.correlationId, k);
      break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
      r.api.correlationId = spread(r.api.correlationId, k);
      break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      r.sync.correlationId = spread(r.sync.correlationId, k);
      break;
    case CUPTI_ACTIVITY_KIND_MARKER: {
      const uint32_t flags = static_cast<uint32_t>(r.marker.flags);
      if ((flags & CUPTI_ACTIVITY_FLAG_MARKER_START) && r.marker.name != nullptr) {
        if (auto renamed = s.rule->rename(r.marker.name)) {
          s.renamed = std::move(*renamed);
          r.marker.name = s.renamed.c_str();
          r.marker.domain = nullptr;
        }
      }
      break;
    }
    default:
      break;
  }
  s.assembler->add(r.base);
}

void InjectedStreams::finish() {
  if (finished_) return;
  finished_ = true;
  for (auto& s : streams_) {
    if (!s->assembler) continue;
    s->process.stats = s->assembler->finish();
    s->process.iteration_prefix = s->rule->chosen();
  }
}

std::vector<const InjectedProcess*> InjectedStreams::processes() const {
  std::vector<const InjectedProcess*> out;
  for (const auto& s : streams_)
    if (s->process.said_hello) out.push_back(&s->process);
  std::sort(out.begin(), out.end(),
            [](const InjectedProcess* a, const InjectedProcess* b) { return a->index < b->index; });
  return out;
}

}  // namespace fusionscope::profiler
