// Runs the CLI driver as a child process: its exit status, what it printed on each stream, and
// how it ended (a signal is a failure of its own).
#pragma once

#include <sys/resource.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fusionscope::testing {

struct CliResult {
  int code = -1;    // exit status; -1 when killed by a signal
  int signal = 0;   // the signal that ended it, or 0
  std::string out;  // standard output (empty when it went to `stdout_path`)
  std::string err;  // standard error
};

struct CliOptions {
  std::string stdout_path;                // instead of a pipe: e.g. "/dev/full"
  std::optional<rlim_t> file_size_limit;  // RLIMIT_FSIZE for the child (bytes)
  double kill_after_s = -1;               // SIGKILL after this long (when still running)
};

CliResult run_cli(const std::vector<std::string>& args, const CliOptions& options = {});

// A PyTorch trace (Chrome JSON) with `kernels` kernels and their launches, written to `path`.
void write_trace(const std::filesystem::path& path, int kernels, const std::string& kernel_name);

}  // namespace fusionscope::testing
