// `fusionscope export SESSION [--run N] [--chrome FILE] [--csv FILE] [--summary-csv FILE]`: one
// run of a session as Chrome trace JSON (Perfetto, chrome://tracing; gzipped when FILE ends in
// .gz) and its kernels as CSV, per execution or per kernel name. FILE "-" is standard output.
// Exit codes: 0 written, 1 the session could not be read or a file not written, 2 the arguments
// do not name something to export (no output, no such run, several runs and no --run).
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "fusionscope/interchange/chrome_trace_export.h"
#include "fusionscope/interchange/csv_export.h"
#include "fusionscope/interchange/interchange_error.h"
#include "fusionscope/storage/session_store.h"
#include "kernel_summary.h"

namespace fusionscope::cli {
namespace {

struct ExportArgs {
  std::string session;
  int64_t run = 0;  // 0: the session's only run
  std::string chrome;
  std::string csv;
  std::string summary_csv;
};

void list_runs(const std::vector<storage::RunInfo>& runs) {
  for (const auto& r : runs) {
    std::fprintf(stderr, "  --run %lld  %s (%s%s%s)\n", static_cast<long long>(r.id),
                 r.name.c_str(), r.kind.c_str(), r.variant.empty() ? "" : ", ", r.variant.c_str());
  }
}

int run_export(const ExportArgs& args) {
  if (args.chrome.empty() && args.csv.empty() && args.summary_csv.empty()) {
    std::fprintf(stderr,
                 "fusionscope export: nothing to write; give --chrome FILE, --csv FILE and/or "
                 "--summary-csv FILE\n");
    return 2;
  }
  try {
    const auto store = storage::SessionStore::open(args.session, storage::OpenMode::kReadOnly);
    const auto runs = store.runs();
    if (runs.empty()) {
      std::fprintf(stderr, "fusionscope export: %s holds no runs\n", args.session.c_str());
      return 2;
    }
    int64_t run_id = args.run;
    if (run_id == 0) {
      if (runs.size() > 1) {
        std::fprintf(stderr, "fusionscope export: %s holds %zu runs; choose one:\n",
                     args.session.c_str(), runs.size());
        list_runs(runs);
        return 2;
      }
      run_id = runs.front().id;
    } else if (!store.run(run_id)) {
      std::fprintf(stderr, "fusionscope export: %s has no run %lld; its runs:\n",
                   args.session.c_str(), static_cast<long long>(run_id));
      list_runs(runs);
      return 2;
    }

    const storage::RunData run = store.load_run(run_id);
    const storage::SessionInfo session = store.session();
    if (!args.chrome.empty()) {
      if (args.chrome == "-") {
        interchange::write_chrome_trace(std::cout, run, session);
      } else {
        interchange::export_chrome_trace(args.chrome, run, session);
        std::fprintf(stderr,
                     "wrote %s: run %lld, %zu kernels, %zu memory operations, %zu API "
                     "calls, %zu ranges\n",
                     args.chrome.c_str(), static_cast<long long>(run_id), run.kernels.size(),
                     run.memops.size(), run.api_calls.size(), run.ranges.size());
      }
    }
    if (!args.csv.empty()) {
      if (args.csv == "-") {
        interchange::write_kernel_csv(std::cout, run);
      } else {
        interchange::export_kernel_csv(args.csv, run);
        std::fprintf(stderr, "wrote %s: %zu kernel rows\n", args.csv.c_str(), run.kernels.size());
      }
    }
    if (!args.summary_csv.empty()) {
      const auto summary = summarize_kernels(run);
      if (args.summary_csv == "-") {
        interchange::write_kernel_summary_csv(std::cout, summary);
      } else {
        interchange::export_kernel_summary_csv(args.summary_csv, summary);
        std::fprintf(stderr, "wrote %s: %zu kernel names\n", args.summary_csv.c_str(),
                     summary.size());
      }
    }
    std::cout.flush();
    if (!std::cout) {
      std::fprintf(stderr, "fusionscope export: writing to standard output failed\n");
      return 1;
    }
    return 0;
  } catch (const storage::StoreError& e) {
    std::fprintf(stderr, "fusionscope export: %s\n", e.what());
  } catch (const interchange::InterchangeError& e) {
    std::fprintf(stderr, "fusionscope export: %s\n", e.what());
  }
  return 1;
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  auto* cmd = app.add_subcommand(
      "export", "Export a run as Chrome trace JSON (Perfetto) and its kernels as CSV");
  cmd->add_option("session", args->session, "Session file (.fsdb)")->required();
  cmd->add_option("--run", args->run, "Run id (default: the session's only run)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--chrome", args->chrome,
                  "Chrome trace JSON to write (.json, or .json.gz to compress; - for stdout)");
  cmd->add_option("--csv", args->csv, "CSV of every kernel execution (- for stdout)");
  cmd->add_option("--summary-csv", args->summary_csv,
                  "CSV with one row per kernel name: count, total, mean, min, max, % of GPU time");
  cmd->callback([args] { exit_code() = run_export(*args); });
}

}  // namespace fusionscope::cli
