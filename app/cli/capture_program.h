// `fusionscope capture [options] -- COMMAND [ARGS...]`: a user's program captured into a session
// (lab/program_capture.h). capture_command.cpp parses the options and calls run_program_capture().
#pragma once

#include <string>
#include <vector>

namespace fusionscope::cli {

struct ProgramCaptureCli {
  std::vector<std::string> command;
  std::string out;
  bool append = false;
  std::string name;
  std::string cwd;
  std::vector<std::string> env;  // KEY=VALUE
  std::string iteration_range;
  int warmup = 0;
  std::string capture_range;  // nvtx:NAME
  double delay_s = 0;
  double duration_s = 0;
  bool no_driver_api = false;
  bool counters = false;
  std::string kernel_filter;
  int kernel_limit = 0;
  bool pm_sampling = false;
  int pm_interval_us = 10;
  int device = 0;
};

// Returns the process exit status: the command's own, 128 + signal when it was killed, 130 when
// interrupted, 1 when it could not start or the session could not be written, 2 for bad options.
int run_program_capture(const ProgramCaptureCli& options);

}  // namespace fusionscope::cli
