// The `fusionscope` subcommands. Each lives in its own file and registers itself on the CLI11 app;
// main.cpp runs the chosen one, or the GUI when none is named.
#pragma once

#include <CLI/CLI.hpp>

namespace fusionscope::cli {

// Each adds its subcommand to `app`. The subcommand's callback does the work and sets the process
// exit code through exit_code() (0 on success); errors are printed for a person, never thrown out.
void add_capture_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_import_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_screenshot_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_advise_command(CLI::App& app);

int& exit_code();

}  // namespace fusionscope::cli
