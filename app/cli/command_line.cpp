#include "command_line.h"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>

#include "commands.h"
#include "fusionscope/storage/output_file.h"
#include "fusionscope/storage/printable.h"

namespace fusionscope::cli {

namespace {

bool is_digits(std::string_view s) {
  if (s.empty() || s.size() > 19) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// Flushes standard output (both C and C++ streams); returns errno of a failure, or 0.
int flush_stdout() {
  std::cout.flush();
  errno = 0;
  if (std::fflush(stdout) == 0 && !std::ferror(stdout) && std::cout) return 0;
  if (errno != 0) return errno;
  // The write failed earlier, and its errno is long gone. The output is incomplete already: one
  // more byte, written directly, says why (the disk is full, ...).
  if (::write(STDOUT_FILENO, "\n", 1) < 0) return errno;
  return EIO;
}

}  // namespace

CLI::Validator integer_in(int64_t lo, int64_t hi) {
  const std::string range = std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        if (!is_digits(text))
          return "expected a whole number from " + range + ", got \"" +
                 storage::printable(text.substr(0, 20), true) + (text.size() > 20 ? "..." : "") +
                 "\"";
        const unsigned long long v = std::stoull(text);  // 19 digits at most: fits
        if (v < static_cast<unsigned long long>(lo) || v > static_cast<unsigned long long>(hi))
          return "expected a whole number from " + range + ", got " + text;
        return {};
      },
      "INT in " + range);
}

void print_error(std::string_view command, std::string_view message) {
  std::fprintf(stderr, "fusionscope%s%s: %s\n", command.empty() ? "" : " ",
               std::string(command).c_str(), storage::printable(message).c_str());
}

int run_command_line(CLI::App& app, int argc, char** argv,
                     const std::function<int()>& without_subcommand) {
  // Over `ulimit -f` a write fails with EFBIG, which every writer reports, instead of the signal
  // killing the process half-way.
  std::signal(SIGXFSZ, SIG_IGN);
  int code = 0;
  try {
    app.parse(argc, argv);
    code = app.get_subcommands().empty() && without_subcommand ? without_subcommand() : exit_code();
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      app.exit(e);  // --help, --version: printed on standard output
      code = 0;
    } else {
      std::fprintf(stderr, "fusionscope: %s\nRun with --help for the arguments it takes.\n",
                   storage::printable(e.what(), true).c_str());
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fusionscope: %s\n", storage::printable(e.what()).c_str());
    code = 1;
  }
  if (const int error = flush_stdout(); error != 0) {
    std::fprintf(stderr, "fusionscope: writing to standard output failed: %s\n",
                 storage::write_error_reason(error).c_str());
    return 1;
  }
  return code;
}

}  // namespace fusionscope::cli
