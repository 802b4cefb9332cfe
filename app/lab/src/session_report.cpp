#include "fusionscope/lab/session_report.h"

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "fusionscope/analysis/format.h"
#include "fusionscope/analysis/metrics_status.h"
#include "fusionscope/analysis/stats.h"
#include "fusionscope/storage/printable.h"

namespace fusionscope::lab {
namespace {

using storage::RunData;

// Fixed decimals per unit, so a column of times lines up: "850 ns", "45.0 us", "1.25 ms".
std::string duration(int64_t ns) {
  const double v = static_cast<double>(ns);
  return analysis::format_duration(v, ns < 1000 ? 0 : (ns < 1000000 ? 1 : 2));
}

std::string fit(std::string s, std::size_t width) {
  if (s.size() <= width) return s;
  return s.substr(0, width - 3) + "...";
}

// Columns: text left-aligned, numbers right-aligned; widths from the contents.
class Table {
 public:
  explicit Table(std::vector<std::string> header, std::vector<bool> right)
      : right_(std::move(right)) {
    rows_.push_back(std::move(header));
  }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void write(std::ostream& out, const std::string& indent) const {
    std::vector<std::size_t> w(rows_[0].size(), 0);
    for (const auto& r : rows_)
      for (std::size_t c = 0; c < r.size(); ++c) w[c] = std::max(w[c], r[c].size());
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      std::string line = indent;
      for (std::size_t c = 0; c < rows_[i].size(); ++c) {
        const std::string& cell = rows_[i][c];
        const std::string pad(w[c] - cell.size(), ' ');
        line += right_[c] ? pad + cell : cell + pad;
        if (c + 1 < rows_[i].size()) line += "  ";
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out << line << '\n';
      if (i == 0) {
        std::size_t total = 0;
        for (std::size_t c = 0; c < w.size(); ++c) total += w[c] + (c + 1 < w.size() ? 2 : 0);
        out << indent << std::string(total, '-') << '\n';
      }
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
  std::vector<bool> right_;
};

std::string trace_cell(const storage::RunInfo& info, std::size_t kernels) {
  if (info.dropped_records > 0) return std::to_string(info.dropped_records) + " dropped";
  if (info.trace_status.empty()) return "complete";
  return kernels == 0 ? "none" : "partial";
}

}  // namespace

std::string short_kernel_name(const std::string& name) {
  std::string s = name;
  int status = 0;
  if (char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status); d != nullptr) {
    if (status == 0) s = d;
    std::free(d);
  }
  // Drop anonymous namespaces (their parenthesis is not an argument list), the argument list and
  // template arguments, then a leading return type.
  for (std::size_t at; (at = s.find("(anonymous namespace)::")) != std::string::npos;)
    s.erase(at, sizeof("(anonymous namespace)::") - 1);
  std::string out;
  int depth = 0;
  for (char c : s) {
    if (c == '<') ++depth;
    if (depth == 0 && c != '>') out += c;
    if (c == '>' && depth > 0) --depth;
    if (c == '(' && depth == 0) {
      out.pop_back();
      break;
    }
  }
  if (const auto space = out.rfind(' '); space != std::string::npos) out = out.substr(space + 1);
  return out.empty() ? s : out;
}

namespace {

// A demangled name without its leading return type and its parameter list, template arguments
// kept: "vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl...>".
std::string templated_name(const std::string& name) {
  std::string s = name;
  int status = 0;
  if (char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status); d != nullptr) {
    if (status == 0) s = d;
    std::free(d);
  }
  int depth = 0;
  std::size_t begin = 0, end = s.size();
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<') ++depth;
    if (c == '>' && depth > 0) --depth;
    if (depth == 0 && c == ' ') begin = i + 1;  // past a return type ("void ")
    if (depth == 0 && c == '(' && s.compare(i, 21, "(anonymous namespace)") != 0) {
      end = i;
      break;
    }
  }
  return s.substr(begin, end - begin);
}

}  // namespace

std::vector<std::string> distinct_kernel_names(const std::vector<std::string>& names) {
  std::vector<std::string> out(names.size());
  std::map<std::string, std::vector<std::size_t>> by_short;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out[i] = short_kernel_name(names[i]);
    by_short[out[i]].push_back(i);
  }
  for (const auto& [short_name, group] : by_short) {
    if (group.size() < 2) continue;
    // Where the group's templated names start to differ, backed up to the start of that word:
    // "vectorized_elementwise_kernel<...GeluCUDAKernelImpl(...". Distinct names that still read
    // alike get a number.
    std::vector<std::string> full;
    for (std::size_t i : group) full.push_back(templated_name(names[i]));
    std::size_t common = full[0].size();
    for (const auto& f : full) {
      std::size_t n = 0;
      while (n < common && n < f.size() && f[n] == full[0][n]) ++n;
      common = n;
    }
    while (common > 0 && (std::isalnum(static_cast<unsigned char>(full[0][common - 1])) != 0 ||
                          full[0][common - 1] == '_')) {
      --common;
    }
    std::map<std::string, int> seen;
    for (std::size_t j = 0; j < group.size(); ++j) {
      std::string shown = short_name + "<..." + full[j].substr(std::min(common, full[j].size()));
      if (full[j].size() <= common) shown = short_name;
      const int n = ++seen[shown];
      if (n > 1) shown += " #" + std::to_string(n);
      out[group[j]] = shown;
    }
  }
  return out;
}

RunSummary summarize(const RunData& run, std::size_t top_n) {
  RunSummary s;
  s.info = run.info;
  s.kernels = run.kernels.size();
  s.api_calls = run.api_calls.size();
  // Timed iterations as the views count them (analysis::timed_kernel_mask).
  const std::vector<bool> timed = analysis::timed_kernel_mask(run);
  std::vector<uint32_t> launches;
  std::map<std::string, KernelTotal> all, in_timed;
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (std::size_t i = 0; i < run.kernels.size(); ++i) {
    const auto& k = run.kernels[i];
    const int64_t d = k.end_ns - k.start_ns;
    s.gpu_ns += d;
    first = std::min(first, k.start_ns);
    last = std::max(last, k.end_ns);
    if (k.correlation_id != 0) launches.push_back(k.correlation_id);
    // Totals per kernel (its full name); the names shown are made distinct below.
    const std::string& name = run.str(k.name);
    auto add = [&](std::map<std::string, KernelTotal>& m) {
      KernelTotal& t = m[name];
      t.name = name;
      ++t.calls;
      t.total_ns += d;
    };
    add(all);
    if (!timed.empty() && timed[i]) {
      add(in_timed);
      ++s.timed_kernels;
      s.timed_gpu_ns += d;
    }
  }
  std::sort(launches.begin(), launches.end());
  s.launches =
      static_cast<std::size_t>(std::unique(launches.begin(), launches.end()) - launches.begin());
  s.span_ns = run.kernels.empty() ? 0 : last - first;
  s.top_is_timed = !in_timed.empty();
  for (const auto& [name, t] : s.top_is_timed ? in_timed : all) s.top.push_back(t);
  // Different kernels with one short name (PyTorch's gelu and mul are both
  // vectorized_elementwise_kernel) stay separate rows with names that tell them apart.
  std::vector<std::string> full;
  for (const auto& t : s.top) full.push_back(t.name);
  const std::vector<std::string> shown = distinct_kernel_names(full);
  for (std::size_t i = 0; i < s.top.size(); ++i) s.top[i].name = shown[i];
  std::sort(s.top.begin(), s.top.end(),
            [](const KernelTotal& a, const KernelTotal& b) { return a.total_ns > b.total_ns; });
  if (s.top.size() > top_n) s.top.resize(top_n);
  return s;
}

namespace {

// What the status column says: the outcome, unless the run is not whole or not to be trusted.
std::string status_cell(const storage::RunInfo& info) {
  if (info.integrity == storage::Integrity::kDamaged) return "DAMAGED";
  if (info.state != storage::RunState::kComplete)
    return std::string(storage::to_string(info.state));
  return std::string(storage::to_string(info.status));
}

std::size_t write_report_text(const storage::SessionStore& store, std::ostream& out,
                              std::size_t top_n);

}  // namespace

std::size_t write_report(const storage::SessionStore& store, std::ostream& out, std::size_t top_n) {
  // Everything from the session (names, errors, notes) is escaped for the terminal in one pass:
  // what the report itself writes is plain text and passes unchanged.
  std::ostringstream text;
  const std::size_t damaged = write_report_text(store, text, top_n);
  out << storage::printable(text.str());
  return damaged;
}

namespace {

std::size_t write_report_text(const storage::SessionStore& store, std::ostream& out,
                              std::size_t top_n) {
  std::size_t damaged = 0;
  const storage::SessionInfo session = store.session();
  const std::vector<storage::RunInfo> runs = store.runs();
  out << "Session  " << store.path().string();
  if (!session.name.empty()) out << "  (" << session.name << ")";
  out << '\n';
  if (!session.gpu_name.empty()) {
    // Figures the session does not know (an import's bandwidth, say) are left out, not shown 0.
    std::string gpu = session.gpu_name;
    if (session.cc_major > 0) {
      gpu += ", cc " + std::to_string(session.cc_major) + "." + std::to_string(session.cc_minor);
    }
    if (session.sm_count > 0) gpu += ", " + std::to_string(session.sm_count) + " SMs";
    if (session.mem_bandwidth_gbs > 0) {
      char bandwidth[32];
      std::snprintf(bandwidth, sizeof bandwidth, ", %.0f GB/s", session.mem_bandwidth_gbs);
      gpu += bandwidth;
    }
    out << "GPU      " << gpu << '\n';
  }
  if (!session.driver_version.empty() || !session.cuda_version.empty())
    out << "Software driver " << session.driver_version << ", CUDA " << session.cuda_version
        << ", CUPTI " << session.cupti_version << '\n';
  if (!session.host.empty() || !session.created_utc.empty())
    out << "Captured " << session.created_utc << (session.host.empty() ? "" : " on " + session.host)
        << '\n';
  out << "Runs     " << runs.size() << "\n\n";
  if (runs.empty()) return damaged;

  std::vector<RunSummary> summaries;
  Table table({"id", "run", "status", "iters", "kernels", "launches", "GPU time", "GPU/iter",
               "wall/iter", "trace"},
              {true, false, false, true, true, true, true, true, true, false});
  for (const auto& listed : runs) {
    // A damaged run is named, never summarized: its figures would be wrong.
    storage::RunData run = store.load_run(listed.id, storage::DamagePolicy::kMark);
    const storage::RunInfo& info = run.info;
    const std::string name = fit(storage::printable(info.name, true), 40);
    if (info.integrity == storage::Integrity::kDamaged) {
      ++damaged;
      RunSummary s;
      s.info = info;
      table.add(
          {std::to_string(info.id), name, status_cell(info), "-", "-", "-", "-", "-", "-", "-"});
      summaries.push_back(std::move(s));
      continue;
    }
    RunSummary s = summarize(run, top_n);
    const int iters = std::max(info.iterations, 1);
    table.add({std::to_string(info.id), name, status_cell(info),
               std::to_string(info.warmup) + "+" + std::to_string(info.iterations),
               std::to_string(s.kernels), std::to_string(s.launches),
               s.kernels > 0 ? duration(s.gpu_ns) : "-",
               s.timed_kernels > 0 ? duration(s.timed_gpu_ns / iters) : "-",
               info.wall_ns > 0 ? duration(info.wall_ns / iters) : "-",
               trace_cell(info, s.kernels)});
    summaries.push_back(std::move(s));
  }
  table.write(out, "");

  for (const RunSummary& s : summaries) {
    out << "\n#" << s.info.id << " " << storage::printable(s.info.name, true) << "  ["
        << status_cell(s.info) << "]\n";
    if (s.info.integrity == storage::Integrity::kDamaged) {
      out << "  damaged: " << s.info.damage
          << "; the file changed after the run was written, so its figures are not shown\n";
      continue;
    }
    if (s.info.state == storage::RunState::kWriting)
      out << "  being written: its records so far are shown; the run is not complete yet\n";
    if (s.info.state == storage::RunState::kInterrupted)
      out << "  interrupted: its writer stopped before the run was complete; what it had "
             "written is shown\n";
    if (!s.info.error.empty()) out << "  error: " << s.info.error << '\n';
    if (s.info.kind == "imported" && !s.info.created_utc.empty()) {
      out << "  captured: " << s.info.created_utc << " (the trace's own date)\n";
    }
    if (!s.info.trace_status.empty()) out << "  trace: " << s.info.trace_status << '\n';
    // Outcomes of the counters pass and PM sampling (capture --counters, --pm-sampling).
    if (auto p = store.property(analysis::kernel_counters_property(s.info.id)))
      out << "  counters: " << *p << '\n';
    if (auto p = store.property(analysis::pm_sampling_property(s.info.id)))
      out << "  PM samples: " << *p << '\n';
    if (s.top.empty()) {
      out << "  no kernels recorded\n";
      continue;
    }
    const int64_t base = s.top_is_timed ? s.timed_gpu_ns : s.gpu_ns;
    Table top({s.top_is_timed ? "top kernels (timed iterations)" : "top kernels", "calls", "total",
               "avg", "share"},
              {false, true, true, true, true});
    for (const auto& t : s.top) {
      const double share =
          base > 0 ? static_cast<double>(t.total_ns) / static_cast<double>(base) : 0.0;
      top.add({fit(t.name, 56), std::to_string(t.calls), duration(t.total_ns),
               duration(t.total_ns / static_cast<int64_t>(t.calls)),
               analysis::format_percent(share, 1)});
    }
    top.write(out, "  ");
  }
  return damaged;
}

}  // namespace

}  // namespace fusionscope::lab
