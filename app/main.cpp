// fusionscope: with no subcommand (optionally a session file) it opens the app; subcommands serve
// servers and scripts (capture, report, import, export, screenshot, calibrate).
#include <string>

#include <CLI/CLI.hpp>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "ui/gui_main.h"

int main(int argc, char** argv) {
  CLI::App app{"fusionscope: profile unfused and fused MLP kernels on NVIDIA GPUs"};
  app.set_version_flag("--version", "fusionscope " FUSIONSCOPE_VERSION);
  std::string session;
  app.add_option("session", session, "Session file to open (.fsdb)");
  app.require_subcommand(0, 1);
  namespace cli = fusionscope::cli;
  cli::add_capture_command(app);
  cli::add_report_command(app);
  cli::add_import_command(app);
  cli::add_export_command(app);
  cli::add_screenshot_command(app);
  cli::add_calibrate_command(app);
  cli::add_advise_command(app);
  return cli::run_command_line(app, argc, argv, [&] {
    fusionscope::ui::GuiOptions options;
    options.session_path = session;
    return fusionscope::ui::run_gui(options);
  });
}
