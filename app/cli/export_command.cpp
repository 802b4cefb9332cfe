// `fusionscope export SESSION [--run N] [--chrome FILE] [--csv FILE] [--summary-csv FILE]`: one
// run of a session as Chrome trace JSON (Perfetto, chrome://tracing; gzipped when FILE ends in
// .gz) and its kernels as CSV, per execution or per kernel name. FILE "-" is standard output.
// Outputs are checked before anything is written (never the session, never two outputs in one
// file, an existing file only with --force) and each appears whole or not at all.
// Exit codes: 0 written, 1 the session could not be read (or the run is damaged) or a file not
// written, 2 the arguments do not name something to export (no output, no such run, several runs
// and no --run, an output that may not be written).
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "command_line.h"
#include "commands.h"
#include "fusionscope/interchange/chrome_trace_export.h"
#include "fusionscope/interchange/csv_export.h"
#include "fusionscope/interchange/interchange_error.h"
#include "fusionscope/storage/output_file.h"
#include "fusionscope/storage/printable.h"
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
  bool force = false;
};

void list_runs(const std::vector<storage::RunInfo>& runs) {
  for (const auto& r : runs) {
    std::fprintf(stderr, "  --run %lld  %s (%s%s%s)\n", static_cast<long long>(r.id),
                 storage::printable(r.name, true).c_str(), storage::printable(r.kind, true).c_str(),
                 r.variant.empty() ? "" : ", ", storage::printable(r.variant, true).c_str());
  }
}

int run_export(const ExportArgs& args) {
  if (args.chrome.empty() && args.csv.empty() && args.summary_csv.empty()) {
    std::fprintf(stderr,
                 "fusionscope export: nothing to write; give --chrome FILE, --csv FILE and/or "
                 "--summary-csv FILE\n");
    return 2;
  }
  // Every output is checked before the session is even read: a typo costs nothing.
  const std::vector<std::string> outputs = {args.chrome, args.csv, args.summary_csv};
  int to_stdout = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].empty()) continue;
    if (outputs[i] == "-") {
      if (++to_stdout > 1) {
        print_error("export", "only one output can go to standard output (-)");
        return 2;
      }
      continue;
    }
    storage::OutputRules rules;
    rules.force = args.force;
    rules.inputs = {args.session};
    for (size_t j = 0; j < i; ++j)
      if (!outputs[j].empty() && outputs[j] != "-") rules.others.emplace_back(outputs[j]);
    try {
      storage::check_output(outputs[i], rules);
    } catch (const storage::OutputError& e) {
      print_error("export", e.what());
      return e.kind() == storage::OutputError::Kind::kArguments ? 2 : 1;
    }
  }
  try {
    const auto store = storage::SessionStore::open(args.session, storage::OpenMode::kReadOnly);
    const auto runs = store.runs();
    if (runs.empty()) {
      print_error("export", args.session + " holds no runs");
      return 2;
    }
    int64_t run_id = args.run;
    if (run_id == 0) {
      if (runs.size() > 1) {
        print_error("export",
                    args.session + " holds " + std::to_string(runs.size()) + " runs; choose one:");
        list_runs(runs);
        return 2;
      }
      run_id = runs.front().id;
    } else if (!store.run(run_id)) {
      print_error("export", args.session + " has no run " + std::to_string(run_id) + "; its runs:");
      list_runs(runs);
      return 2;
    }

    const storage::RunData run = store.load_run(run_id);  // a damaged run throws: nothing written
    const storage::SessionInfo session = store.session();
    if (run.info.state != storage::RunState::kComplete)
      print_error("export", "warning: run " + std::to_string(run_id) + " is " +
                                std::string(storage::to_string(run.info.state)) +
                                ": what it holds so far is exported");
    storage::OutputRules rules;
    rules.force = args.force;
    rules.inputs = {args.session};
    if (!args.chrome.empty()) {
      if (args.chrome == "-") {
        interchange::write_chrome_trace(std::cout, run, session);
      } else {
        storage::OutputFile file(args.chrome, rules);
        try {
          interchange::export_chrome_trace(file.temp_path(), run, session);
        } catch (const interchange::InterchangeError& e) {
          throw storage::OutputError(storage::OutputError::Kind::kFileSystem,
                                     file.explain(e.what()) + "; nothing was written");
        }
        file.commit();
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
        storage::OutputFile file(args.csv, rules);
        try {
          interchange::export_kernel_csv(file.temp_path(), run);
        } catch (const interchange::InterchangeError& e) {
          throw storage::OutputError(storage::OutputError::Kind::kFileSystem,
                                     file.explain(e.what()) + "; nothing was written");
        }
        file.commit();
        std::fprintf(stderr, "wrote %s: %zu kernel rows\n", args.csv.c_str(), run.kernels.size());
      }
    }
    if (!args.summary_csv.empty()) {
      const auto summary = summarize_kernels(run);
      if (args.summary_csv == "-") {
        interchange::write_kernel_summary_csv(std::cout, summary);
      } else {
        storage::OutputFile file(args.summary_csv, rules);
        try {
          interchange::export_kernel_summary_csv(file.temp_path(), summary);
        } catch (const interchange::InterchangeError& e) {
          throw storage::OutputError(storage::OutputError::Kind::kFileSystem,
                                     file.explain(e.what()) + "; nothing was written");
        }
        file.commit();
        std::fprintf(stderr, "wrote %s: %zu kernel names\n", args.summary_csv.c_str(),
                     summary.size());
      }
    }
    return 0;  // standard output is flushed and checked by run_command_line
  } catch (const storage::StoreError& e) {
    print_error("export", e.what());
  } catch (const storage::OutputError& e) {
    print_error("export", e.what());
  } catch (const interchange::InterchangeError& e) {
    print_error("export", e.what());
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
      ->check(integer_in(1, INT64_MAX));
  cmd->add_option("--chrome", args->chrome,
                  "Chrome trace JSON to write (.json, or .json.gz to compress; - for stdout)");
  cmd->add_option("--csv", args->csv, "CSV of every kernel execution (- for stdout)");
  cmd->add_option("--summary-csv", args->summary_csv,
                  "CSV with one row per kernel name: count, total, mean, min, max, % of GPU time");
  cmd->add_flag("--force", args->force,
                "Replace output files that exist (never a session, never the input)");
  cmd->callback([args] { exit_code() = run_export(*args); });
}

}  // namespace fusionscope::cli
