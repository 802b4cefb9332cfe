// `fusionscope screenshot`: not built yet.
#include <cstdio>

#include "commands.h"

namespace fusionscope::cli {

void add_screenshot_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("screenshot", "(not available in this build)");
  cmd->allow_extras();
  cmd->callback([] {
    std::fprintf(stderr, "fusionscope screenshot: not available in this build\n");
    exit_code() = 2;
  });
}

}  // namespace fusionscope::cli
