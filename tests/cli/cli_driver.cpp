// Every subcommand of the GUI-free CLI library in one program, as `fusionscope` runs them, for
// the tests of what all commands promise alike: exit codes, messages, safe outputs.
#include <CLI/CLI.hpp>

#include "cli/command_line.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"fusionscope (without the GUI)"};
  app.require_subcommand(1);
  namespace cli = fusionscope::cli;
  cli::add_capture_command(app);
  cli::add_report_command(app);
  cli::add_import_command(app);
  cli::add_export_command(app);
  cli::add_calibrate_command(app);
  cli::add_advise_command(app);
  return cli::run_command_line(app, argc, argv);
}
