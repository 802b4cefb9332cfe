// Makes a large PyTorch profiler trace by repeating the profiler steps of a real one: every event
// of the source's steps (CPU ops, annotations, runtime and driver calls, kernels, memsets, flows)
// is written again and again, shifted in time by the steps' span, with fresh correlation ids,
// External ids, event indexes and ProfilerStep numbers, so the result reads like one long
// profile. The header and metadata events are the source's. Output is gzipped when its name ends
// in ".gz".
//
//   trace_gen SOURCE.json.gz --kernels N --out OUT.json[.gz] [--level L]
#include <zlib.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace {

using ordered = nlohmann::ordered_json;

struct Options {
  std::string source;
  std::string out;
  uint64_t kernels = 100'000;
  int level = 6;
};

// Adds the options to `app`, filling `o`.
void add_options(CLI::App& app, Options& o) {
  app.add_option("source", o.source, "A real PyTorch trace (.json.gz) whose steps are repeated")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--kernels", o.kernels, "Kernels the generated trace holds")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--out", o.out, "The trace to write (.json, or .json.gz compressed)")->required();
  app.add_option("--level", o.level, "gzip level")->capture_default_str()->check(CLI::Range(0, 9));
}

std::string read_gz(const std::string& path) {
  gzFile in = gzopen(path.c_str(), "rb");
  if (in == nullptr) {
    std::fprintf(stderr, "cannot open %s\n", path.c_str());
    std::exit(1);
  }
  std::string text;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(in, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  gzclose(in);
  return text;
}

// Writes plain or gzipped text.
class Sink {
 public:
  Sink(const std::string& path, int level) {
    const bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
    if (gz) {
      const std::string mode = "wb" + std::to_string(level);
      gz_ = gzopen(path.c_str(), mode.c_str());
    } else {
      file_ = std::fopen(path.c_str(), "wb");
    }
    if (gz_ == nullptr && file_ == nullptr) {
      std::fprintf(stderr, "cannot create %s\n", path.c_str());
      std::exit(1);
    }
    buffer_.reserve(kFlush + 4096);
  }
  ~Sink() {
    flush();
    if (gz_ != nullptr) gzclose(gz_);
    if (file_ != nullptr) std::fclose(file_);
  }
  std::string& text() { return buffer_; }
  void maybe_flush() {
    if (buffer_.size() >= kFlush) flush();
  }
  uint64_t written() const { return written_ + buffer_.size(); }

 private:
  static constexpr size_t kFlush = size_t{4} << 20;
  void flush() {
    if (buffer_.empty()) return;
    const bool ok = gz_ != nullptr
                        ? gzwrite(gz_, buffer_.data(), static_cast<unsigned>(buffer_.size())) ==
                              static_cast<int>(buffer_.size())
                        : std::fwrite(buffer_.data(), 1, buffer_.size(), file_) == buffer_.size();
    if (!ok) {
      std::fprintf(stderr, "write failed\n");
      std::exit(1);
    }
    written_ += buffer_.size();
    buffer_.clear();
  }
  gzFile gz_ = nullptr;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  uint64_t written_ = 0;
};

// Kineto's layout: ", " between members, ": " after keys.
void write_json(std::string& out, const ordered& v) {
  switch (v.type()) {
    case ordered::value_t::object: {
      out += '{';
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out += ", ";
        first = false;
        out += ordered(it.key()).dump();
        out += ": ";
        write_json(out, it.value());
      }
      out += '}';
      return;
    }
    case ordered::value_t::array: {
      out += '[';
      for (size_t i = 0; i < v.size(); ++i) {
        if (i) out += ", ";
        write_json(out, v[i]);
      }
      out += ']';
      return;
    }
    default:
      out += v.dump();
  }
}

// Microseconds with three decimals from nanoseconds, exactly.
void append_micros(std::string& out, int64_t ns) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%" PRId64 ".%03d", ns / 1000, static_cast<int>(ns % 1000));
  out += buf;
}

// The number's nanoseconds, read from the double's shortest text (Kineto writes three decimals).
int64_t ns_of(const ordered& v) {
  const std::string text = v.dump();
  const auto dot = text.find('.');
  if (dot == std::string::npos) return std::strtoll(text.c_str(), nullptr, 10) * 1000;
  std::string frac = text.substr(dot + 1, 3);
  while (frac.size() < 3) frac += '0';
  return std::strtoll(text.substr(0, dot).c_str(), nullptr, 10) * 1000 +
         std::strtoll(frac.c_str(), nullptr, 10);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"trace_gen: a large PyTorch trace made of a real one's steps, for import_bench"};
  add_options(app, o);
  CLI11_PARSE(app, argc, argv);
  const ordered trace = ordered::parse(read_gz(o.source));
  const ordered& events = trace.at("traceEvents");

  // The repeated block: every timed event but the profiler's own span and markers.
  std::vector<const ordered*> block, once;
  uint64_t block_kernels = 0;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  uint64_t corr_lo = UINT64_MAX, corr_hi = 0, ext_lo = UINT64_MAX, ext_hi = 0, ev_hi = 0;
  int step_lo = INT32_MAX, step_hi = 0;
  for (const auto& e : events) {
    const std::string ph = e.value("ph", "");
    const std::string cat = e.value("cat", "");
    if (ph == "M" || ph == "i" || cat == "Trace") {
      once.push_back(&e);
      continue;
    }
    block.push_back(&e);
    if (cat == "kernel") ++block_kernels;
    const int64_t ts = ns_of(e.at("ts"));
    lo = std::min(lo, ts);
    hi = std::max(hi, ts + (e.contains("dur") ? ns_of(e.at("dur")) : 0));
    if (e.contains("args")) {
      const auto& a = e.at("args");
      if (a.contains("correlation")) {
        corr_lo = std::min<uint64_t>(corr_lo, a.at("correlation").get<uint64_t>());
        corr_hi = std::max<uint64_t>(corr_hi, a.at("correlation").get<uint64_t>());
      }
      if (a.contains("External id")) {
        ext_lo = std::min<uint64_t>(ext_lo, a.at("External id").get<uint64_t>());
        ext_hi = std::max<uint64_t>(ext_hi, a.at("External id").get<uint64_t>());
      }
      if (a.contains("Ev Idx")) ev_hi = std::max<uint64_t>(ev_hi, a.at("Ev Idx").get<uint64_t>());
    }
    const std::string name = e.value("name", "");
    if (name.rfind("ProfilerStep#", 0) == 0) {
      const int n = std::atoi(name.c_str() + 13);
      step_lo = std::min(step_lo, n);
      step_hi = std::max(step_hi, n);
    }
  }
  if (block_kernels == 0) {
    std::fprintf(stderr, "%s has no kernels to repeat\n", o.source.c_str());
    return 1;
  }
  const uint64_t repeats = (o.kernels + block_kernels - 1) / block_kernels;
  const int64_t period = hi - lo + 20'000;  // the block's span and a 20 us gap
  const uint64_t corr_stride = corr_hi - corr_lo + 1, ext_stride = ext_hi - ext_lo + 1;
  const uint64_t ev_stride = ev_hi + 1;
  const int step_stride = step_lo <= step_hi ? step_hi - step_lo + 1 : 0;

  Sink sink(o.out, o.level);
  std::string& out = sink.text();
  out += '{';
  for (auto it = trace.begin(); it != trace.end(); ++it) {
    if (it.key() == "traceEvents") continue;
    out += ordered(it.key()).dump() + ": ";
    write_json(out, it.value());
    out += ", ";
  }
  out += "\"traceEvents\": [";
  bool first = true;
  auto begin_event = [&] {
    if (!first) out += ", ";
    first = false;
  };
  for (const ordered* e : once) {
    begin_event();
    write_json(out, *e);
  }
  uint64_t written_events = once.size();
  for (uint64_t r = 0; r < repeats; ++r) {
    for (const ordered* source : block) {
      ordered e = *source;
      const int64_t ts = ns_of(e.at("ts")) + static_cast<int64_t>(r) * period;
      if (e.contains("id") && e.at("id").is_number_unsigned()) {
        e["id"] = e.at("id").get<uint64_t>() + r * corr_stride;
      }
      if (e.contains("args")) {
        auto& a = e["args"];
        if (a.contains("correlation")) {
          a["correlation"] = a.at("correlation").get<uint64_t>() + r * corr_stride;
        }
        if (a.contains("External id")) {
          a["External id"] = a.at("External id").get<uint64_t>() + r * ext_stride;
        }
        if (a.contains("Ev Idx")) a["Ev Idx"] = a.at("Ev Idx").get<uint64_t>() + r * ev_stride;
      }
      const std::string name = e.value("name", "");
      if (name.rfind("ProfilerStep#", 0) == 0) {
        e["name"] = "ProfilerStep#" + std::to_string(std::atoi(name.c_str() + 13) +
                                                     static_cast<int>(r) * step_stride);
      }
      // ts and dur keep Kineto's three decimals.
      begin_event();
      out += '{';
      bool first_member = true;
      for (auto it = e.begin(); it != e.end(); ++it) {
        if (!first_member) out += ", ";
        first_member = false;
        out += ordered(it.key()).dump();
        out += ": ";
        if (it.key() == "ts") {
          append_micros(out, ts);
        } else if (it.key() == "dur") {
          append_micros(out, ns_of(it.value()));
        } else {
          write_json(out, it.value());
        }
      }
      out += '}';
      ++written_events;
      sink.maybe_flush();
    }
  }
  out += "]}\n";
  const uint64_t text_bytes = sink.written();
  std::printf("%s: %" PRIu64 " kernels, %" PRIu64 " events (%" PRIu64
              " steps of %s repeated %" PRIu64 " times), %.1f MB of JSON text\n",
              o.out.c_str(), repeats * block_kernels, written_events,
              repeats * static_cast<uint64_t>(step_stride), o.source.c_str(), repeats,
              static_cast<double>(text_bytes) / 1e6);
  return 0;
}
