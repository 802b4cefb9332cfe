// `fusionscope report SESSION`: per run, its kernels, GPU time, wall time, launches and top
// kernels, as a terminal table. Reads the session only; needs no GPU.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "fusionscope/lab/session_report.h"
#include "fusionscope/storage/session_store.h"

namespace fusionscope::cli {

void add_report_command(CLI::App& app) {
  struct Options {
    std::string session;
    std::size_t top = 5;
  };
  auto opt = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("report", "Print a session's runs and top kernels as a table");
  cmd->add_option("session", opt->session, "Session file (.fsdb)")->required();
  cmd->add_option("--top", opt->top, "Kernels listed per run (default 5)")
      ->check(CLI::Range(1, 1000));
  cmd->callback([opt] {
    try {
      const auto store = storage::SessionStore::open(opt->session, storage::OpenMode::kReadOnly);
      lab::write_report(store, std::cout, opt->top);
      exit_code() = 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fusionscope report: %s\n", e.what());
      exit_code() = 1;
    }
  });
}

}  // namespace fusionscope::cli
