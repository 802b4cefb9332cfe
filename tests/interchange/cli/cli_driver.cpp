// The `import` and `export` subcommands on their own, from the app's GUI-free CLI library, so
// their behaviour (messages, exit codes, files written) is tested without the GUI.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"fusionscope import/export"};
  app.require_subcommand(1);
  fusionscope::cli::add_import_command(app);
  fusionscope::cli::add_export_command(app);
  fusionscope::cli::add_advise_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fusionscope: %s\n", e.what());
    return 1;
  }
  return fusionscope::cli::exit_code();
}
