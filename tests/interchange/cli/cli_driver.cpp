// The `import` and `export` subcommands on their own, from the app's GUI-free CLI library, so
// their behaviour (messages, exit codes, files written) is tested without the GUI.
#include <CLI/CLI.hpp>

#include "cli/command_line.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"fusionscope import/export"};
  app.require_subcommand(1);
  fusionscope::cli::add_import_command(app);
  fusionscope::cli::add_export_command(app);
  fusionscope::cli::add_advise_command(app);
  return fusionscope::cli::run_command_line(app, argc, argv);
}
