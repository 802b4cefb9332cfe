// The `capture`, `report` and `calibrate` subcommands on their own, from the app's GUI-free CLI
// library, so the CLI tests run them as processes (on machines with or without a GPU),
// and a GPU server without the GUI's libraries can run them.
#include <CLI/CLI.hpp>

#include "cli/command_line.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"fusionscope capture/report/calibrate"};
  app.require_subcommand(1);
  fusionscope::cli::add_capture_command(app);
  fusionscope::cli::add_report_command(app);
  fusionscope::cli::add_calibrate_command(app);
  return fusionscope::cli::run_command_line(app, argc, argv);
}
