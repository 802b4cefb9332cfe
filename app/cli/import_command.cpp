// `fusionscope import TRACE --out SESSION [--append]`: a PyTorch profiler trace (Chrome trace JSON
// from export_chrome_trace, plain or .gz) becomes one run of a session.
// Exit codes: 0 imported (events that had to be skipped are listed), 1 the trace or the session
// could not be read or written, 2 the arguments do not fit together, 130 interrupted (Ctrl-C):
// the import stops at the next chunk or batch and leaves no run behind.
//
// While it reads and writes, a line on standard error shows how far it has come (bytes and
// events per second) when standard error is a terminal, or with --progress.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include "command_line.h"
#include "commands.h"
#include "fusionscope/analysis/format.h"
#include "fusionscope/interchange/interchange_error.h"
#include "fusionscope/interchange/torch_trace_import.h"
#include "fusionscope/storage/new_session.h"
#include "fusionscope/storage/session_store.h"

namespace fusionscope::cli {
namespace {

namespace fs = std::filesystem;
using interchange::TorchTrace;

struct ImportArgs {
  std::string trace;
  std::string out;
  bool append = false;
  std::string run_name;
  std::string variant;
  bool progress = false;
};

// Set by SIGINT; the import checks it between chunks of text and batches of records.
std::atomic<bool> g_interrupted{false};

void on_import_interrupt(int /*signal*/) {
  g_interrupted.store(true, std::memory_order_relaxed);
}

// SIGINT sets g_interrupted while this lives; the previous handler comes back after.
class InterruptGuard {
 public:
  InterruptGuard() {
    g_interrupted.store(false);
    struct sigaction sa {};
    sa.sa_handler = on_import_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &previous_);
  }
  ~InterruptGuard() { sigaction(SIGINT, &previous_, nullptr); }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct sigaction previous_ {};
};

// One line, rewritten in place on a terminal ("\r"), a line each time otherwise.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled), tty_(isatty(STDERR_FILENO) != 0) {}
  ~ProgressLine() { finish(); }

  void show(const interchange::ImportProgress& p) {
    if (!enabled_) return;
    using analysis::format_bytes;
    using analysis::format_count;
    std::string line;
    const double s = p.seconds > 0 ? p.seconds : 1e-9;
    if (p.phase == interchange::ImportProgress::Phase::kReading) {
      line = "reading: " + format_bytes(static_cast<double>(p.file_bytes));
      if (p.file_size > 0) {
        line += " of " + format_bytes(static_cast<double>(p.file_size)) + " (" +
                analysis::format_percent(static_cast<double>(p.file_bytes) /
                                         static_cast<double>(p.file_size)) +
                ")";
      }
      line += ", " + format_bytes(static_cast<double>(p.text_bytes)) + " of JSON, " +
              format_count(p.events) + " events; " +
              format_bytes(static_cast<double>(p.text_bytes) / s) + "/s, " +
              format_count(static_cast<uint64_t>(static_cast<double>(p.events) / s)) + " events/s";
    } else {
      line = "writing: " + format_count(p.records) + " of " + format_count(p.records_total) +
             " records; " +
             format_count(static_cast<uint64_t>(static_cast<double>(p.records) / s)) + " records/s";
    }
    if (tty_) {
      std::fprintf(stderr, "\r%-110s", line.c_str());
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
    shown_ = true;
  }

  void finish() {
    if (shown_ && tty_) std::fprintf(stderr, "\n");
    shown_ = false;
  }

 private:
  bool enabled_;
  bool tty_;
  bool shown_ = false;
};

void print_summary(const TorchTrace& trace, const ImportArgs& args, int64_t run_id,
                   const std::string& run_name, bool created) {
  const auto& s = trace.stats;
  std::printf("imported %s into %s%s as run %lld \"%s\" (%s%s%s)\n",
              fs::path(args.trace).filename().string().c_str(), args.out.c_str(),
              created ? " (new session)" : "", static_cast<long long>(run_id), run_name.c_str(),
              args.variant.empty() ? trace.variant.c_str() : args.variant.c_str(),
              trace.dtype.empty() ? "" : ", ", trace.dtype.c_str());
  std::printf(
      "  %llu kernels, %llu memsets, %llu memcpys\n", static_cast<unsigned long long>(s.kernels),
      static_cast<unsigned long long>(s.memsets), static_cast<unsigned long long>(s.memcpys));
  std::printf(
      "  %llu CUDA runtime and %llu driver calls, %llu cpu_ops, %llu user annotations, "
      "%llu GPU annotations\n",
      static_cast<unsigned long long>(s.runtime_calls),
      static_cast<unsigned long long>(s.driver_calls), static_cast<unsigned long long>(s.cpu_ops),
      static_cast<unsigned long long>(s.user_annotations),
      static_cast<unsigned long long>(s.gpu_annotations));
  if (s.instants + s.other_events + s.metadata_events > 0) {
    std::printf("  %llu instant events, %llu events of other categories, %llu metadata events\n",
                static_cast<unsigned long long>(s.instants),
                static_cast<unsigned long long>(s.other_events),
                static_cast<unsigned long long>(s.metadata_events));
  }
  std::printf(
      "  %llu of %llu kernels linked to their launch, %llu attributed to an operator; "
      "%llu of %llu launch flows linked\n",
      static_cast<unsigned long long>(s.kernels_launched),
      static_cast<unsigned long long>(s.kernels),
      static_cast<unsigned long long>(s.kernels_with_op),
      static_cast<unsigned long long>(s.flows_linked),
      static_cast<unsigned long long>(s.flow_finishes));
  if (trace.profiler_steps > 0) {
    std::printf("  %d profiler steps over %.3f ms\n", trace.profiler_steps,
                static_cast<double>(trace.steps_wall_ns) / 1e6);
  }
  if (!trace.session.gpu_name.empty()) {
    std::printf("  GPU: %s (compute capability %d.%d, %d SMs), CUDA %s, driver %s\n",
                trace.session.gpu_name.c_str(), trace.session.cc_major, trace.session.cc_minor,
                trace.session.sm_count,
                trace.session.cuda_version.empty() ? "?" : trace.session.cuda_version.c_str(),
                trace.session.driver_version.empty() ? "?" : trace.session.driver_version.c_str());
  }
  if (s.skipped > 0) {
    std::fprintf(stderr, "fusionscope import: %llu malformed events were skipped\n",
                 static_cast<unsigned long long>(s.skipped));
  }
  for (const auto& w : s.warnings) {
    std::fprintf(stderr, "  warning: %s (%llu)\n", w.message.c_str(),
                 static_cast<unsigned long long>(w.count));
  }
  if (s.kernels == 0) {
    std::fprintf(stderr,
                 "fusionscope import: note: the trace holds no GPU kernels (was the profiler "
                 "run with ProfilerActivity.CUDA?)\n");
  }
}

int run_import(const ImportArgs& args) {
  std::error_code ec;
  const bool exists = fs::exists(args.out, ec);
  if (exists && !args.append) {
    std::fprintf(stderr,
                 "fusionscope import: %s already exists; pass --append to add the trace to it as "
                 "a new run, or choose another --out\n",
                 args.out.c_str());
    return 2;
  }

  InterruptGuard interrupts;
  ProgressLine progress(args.progress || isatty(STDERR_FILENO) != 0);
  interchange::ImportOptions import_options;
  import_options.cancel = &g_interrupted;
  import_options.progress = [&progress](const interchange::ImportProgress& p) { progress.show(p); };
  auto cancelled = [&] {
    progress.finish();
    std::fprintf(stderr, "fusionscope import: interrupted; %s\n",
                 exists ? ("no run was added to " + args.out).c_str()
                        : (args.out + " was not created").c_str());
    return 130;
  };

  // The trace is read and written at once. A new session appears at --out only once the run is
  // in it (a failure leaves nothing); into an existing one the run goes through a RunWriter that
  // publishes it whole or not at all (a bad trace, a failure, Ctrl-C or a kill leave no run).
  // Opening an existing file checks it first: nothing is written into a damaged file, nor into a
  // file that is not a whole session.
  try {
    std::optional<storage::NewSession> fresh;
    std::optional<storage::SessionStore> existing;
    if (exists) {
      existing.emplace(storage::SessionStore::open(args.out, storage::OpenMode::kReadWrite));
    } else {
      storage::SessionInfo info;
      info.name = fs::path(args.out).stem().string();
      fresh.emplace(args.out, info);
    }
    storage::SessionStore& store = fresh ? fresh->store() : *existing;
    interchange::WriteOptions options{args.run_name, args.variant};
    const interchange::ImportResult result =
        interchange::import_torch_trace(args.trace, store, options, import_options);
    const TorchTrace& trace = result.trace;
    if (fresh) {
      // A session made for this trace describes the trace's machine and date.
      storage::SessionInfo info = trace.session;
      info.name = fs::path(args.out).stem().string();
      if (info.created_utc.empty()) info.created_utc = store.session().created_utc;
      store.update_session(info);
      fresh->publish();
    }
    progress.finish();
    print_summary(trace, args, result.run_id,
                  args.run_name.empty() ? trace.source_name : args.run_name, !exists);
    return 0;
  } catch (const interchange::ImportCancelled&) {
    return cancelled();
  } catch (const interchange::InterchangeError& e) {
    progress.finish();
    print_error("import", e.what());
  } catch (const storage::StoreError& e) {
    progress.finish();
    print_error("import", e.what());
  } catch (const std::exception& e) {
    progress.finish();
    print_error("import", "writing " + args.out + " failed: " + e.what());
  }
  return 1;
}

}  // namespace

void add_import_command(CLI::App& app) {
  auto args = std::make_shared<ImportArgs>();
  auto* cmd = app.add_subcommand(
      "import", "Import a PyTorch profiler trace (.json or .json.gz) into a session as one run");
  cmd->add_option("trace", args->trace, "Chrome trace JSON written by torch.profiler")->required();
  cmd->add_option("--out,-o", args->out, "Session file (.fsdb) to create, or to add to")
      ->required();
  cmd->add_flag("--append", args->append, "Add the trace as a new run of an existing session");
  cmd->add_flag("--progress", args->progress,
                "Print progress lines even when standard error is not a terminal");
  cmd->add_option("--name", args->run_name, "Run name (default: the trace's file name)");
  cmd->add_option("--variant", args->variant,
                  "Run variant (default: torch-eager, torch-compile or torch-cuda-graph, "
                  "from the file name or the kernels)");
  cmd->callback([args] { exit_code() = run_import(*args); });
}

}  // namespace fusionscope::cli
