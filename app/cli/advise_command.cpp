// `fusionscope advise SESSION [--run N] [--json] [--fail-on RULE]`: the fusion advisor's rules
// (analysis/advisor.h) on a session's runs: what fusing kernels, or launching them differently,
// would buy, with the numbers and the kernels concerned. --json writes the schema of
// docs/advice.md. Exit codes: 0 done, 1 the session could not be read, 2 bad arguments (no such
// run or rule), 3 a rule named by --fail-on fired (for CI gating).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "command_line.h"
#include "commands.h"
#include "fusionscope/analysis/advisor.h"
#include "fusionscope/analysis/demangle.h"
#include "fusionscope/analysis/format.h"
#include "fusionscope/storage/session_store.h"

namespace fusionscope::cli {
namespace {

struct AdviseArgs {
  std::string session;
  int64_t run = 0;  // 0: every run
  bool json = false;
  std::vector<std::string> fail_on;
};

void print_text(const std::vector<analysis::RunAdvice>& runs) {
  for (const auto& r : runs) {
    std::printf("#%lld %s\n", static_cast<long long>(r.info.id), r.info.name.c_str());
    if (r.advice.empty()) {
      std::printf("  no advice: no rule fired\n");
      continue;
    }
    for (const auto& a : r.advice) {
      std::printf("  [%s] %s\n", a.rule.c_str(), a.summary.c_str());
      for (const auto& k : a.kernels) {
        std::printf("      kernel %u %s (correlation %u, %s)\n", k.index,
                    analysis::short_name(k.name).c_str(), k.correlation_id,
                    analysis::format_duration(static_cast<double>(k.duration_ns)).c_str());
      }
    }
  }
}

int run_advise(const AdviseArgs& args) {
  for (const auto& rule : args.fail_on) {
    const auto& rules = analysis::advice_rules();
    if (std::find(rules.begin(), rules.end(), rule) == rules.end()) {
      std::string list;
      for (const auto& r : rules) list += (list.empty() ? "" : ", ") + r;
      std::fprintf(stderr, "fusionscope advise: no rule `%s`; the rules are %s\n", rule.c_str(),
                   list.c_str());
      return 2;
    }
  }
  try {
    const auto store = storage::SessionStore::open(args.session, storage::OpenMode::kReadOnly);
    const auto infos = store.runs();
    if (args.run != 0 && !store.run(args.run)) {
      std::fprintf(stderr, "fusionscope advise: %s has no run %lld\n", args.session.c_str(),
                   static_cast<long long>(args.run));
      return 2;
    }
    analysis::AdviceContext context;
    context.session = store.session();
    // The other runs, for rules that cite them (a gated-gemm run of the same shape).
    for (const auto& info : infos) {
      const storage::RunData run = store.load_run(info.id);
      context.peers.push_back({info, analysis::gpu_time_per_iteration(run)});
    }
    std::vector<analysis::RunAdvice> results;
    for (const auto& info : infos) {
      if (args.run != 0 && info.id != args.run) continue;
      const storage::RunData run = store.load_run(info.id);
      results.push_back({info, analysis::advise(run, context)});
    }
    if (args.json) {
      std::cout << analysis::advice_json(results);
    } else {
      print_text(results);
    }
    std::cout.flush();
    int fired = 0;
    for (const auto& r : results) {
      for (const auto& a : r.advice) {
        if (std::find(args.fail_on.begin(), args.fail_on.end(), a.rule) != args.fail_on.end()) {
          ++fired;
        }
      }
    }
    if (fired > 0) {
      std::fprintf(stderr, "fusionscope advise: %d advice of the rules given to --fail-on\n",
                   fired);
      return 3;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fusionscope advise: %s\n", e.what());
    return 1;
  }
}

}  // namespace

void add_advise_command(CLI::App& app) {
  auto args = std::make_shared<AdviseArgs>();
  auto* cmd = app.add_subcommand(
      "advise",
      "What fusing kernels, or launching them differently, would buy in a session's runs");
  cmd->add_option("session", args->session, "Session file (.fsdb)")->required();
  cmd->add_option("--run", args->run, "Only this run (default: every run)")
      ->check(integer_in(1, INT64_MAX));
  cmd->add_flag("--json", args->json, "Write JSON (schema fusionscope.advice/1, docs/advice.md)");
  cmd->add_option("--fail-on", args->fail_on,
                  "Exit 3 when this rule fires (repeatable): pointwise-chain, glu-intermediate, "
                  "short-kernels, launch-bound, below-roofline");
  cmd->callback([args] { exit_code() = run_advise(*args); });
}

}  // namespace fusionscope::cli
