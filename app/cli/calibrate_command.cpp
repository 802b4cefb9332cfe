// `fusionscope calibrate`: not built yet.
#include <cstdio>

#include "commands.h"

namespace fusionscope::cli {

void add_calibrate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("calibrate", "(not available in this build)");
  cmd->allow_extras();
  cmd->callback([] {
    std::fprintf(stderr, "fusionscope calibrate: not available in this build\n");
    exit_code() = 2;
  });
}

}  // namespace fusionscope::cli
