// What every fusionscope program does around its subcommands, so that they all keep the
// README's promise: exit 0 on success, 1 for bad input or a failure it explains, 2 for bad
// arguments (never CLI11's own codes), and never a success for output that was not written.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace fusionscope::cli {

// Parses argv and runs the chosen subcommand (or `without_subcommand`, when given and none was
// chosen); returns the process exit status. Bad arguments print CLI11's reason and a pointer to
// --help on stderr and return 2; --help and --version return 0. Afterwards standard output is
// flushed: a failed write (a full disk, a closed terminal) is reported and returns 1. A write over
// the file size limit fails with an error instead of killing the process (SIGXFSZ is ignored).
int run_command_line(CLI::App& app, int argc, char** argv,
                     const std::function<int()>& without_subcommand = {});

// A validator for ids and counts: plain decimal digits only (not "0x10", "1e3", "+5", "010 "),
// within [lo, hi]; its message quotes the bounds as written, never a 309-digit number.
CLI::Validator integer_in(int64_t lo, int64_t hi);

// Prints a command's message on stderr ("fusionscope NAME: MESSAGE"), its text made safe for a
// terminal (storage/printable.h): file names and errors may carry what a session holds.
void print_error(std::string_view command, std::string_view message);

}  // namespace fusionscope::cli
