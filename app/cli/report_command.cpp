// `fusionscope report SESSION`: per run, its kernels, GPU time, wall time, launches and top
// kernels, as a terminal table. Reads the session only; needs no GPU.
// Exit codes: 0 printed, 1 the session could not be read or is damaged (what is intact is still
// printed, damaged runs are named without figures), 2 bad arguments.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "command_line.h"
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
      ->check(integer_in(1, 1000));
  cmd->callback([opt] {
    try {
      const auto store = storage::SessionStore::open(opt->session, storage::OpenMode::kReadOnly);
      const std::size_t damaged = lab::write_report(store, std::cout, opt->top);
      // Damage the digests cannot see (the file's structure) and damage they did see: said on
      // stderr, and the exit status says not to trust the file.
      const std::vector<std::string> problems = store.quick_check();
      const std::string session_damage = store.session_damage();
      std::cout.flush();
      if (!problems.empty())
        print_error("report", opt->session + " is damaged (SQLite's quick_check: " + problems[0] +
                                  (problems.size() > 1 ? ", and more" : "") + ")");
      if (!session_damage.empty()) print_error("report", opt->session + ": " + session_damage);
      if (damaged > 0)
        print_error("report", opt->session + ": " + std::to_string(damaged) +
                                  (damaged == 1 ? " run is" : " runs are") +
                                  " damaged and shown without figures");
      exit_code() = problems.empty() && session_damage.empty() && damaged == 0 ? 0 : 1;
    } catch (const std::exception& e) {
      print_error("report", e.what());
      exit_code() = 1;
    }
  });
}

}  // namespace fusionscope::cli
