// `capture` and `calibrate` in a build without CUDA (FUSIONSCOPE_CUDA=OFF): still listed, so a
// script or a person asking for them learns why they are absent (exit status 1) rather than that
// the command does not exist.
#include <stdexcept>
#include <string>

#include "commands.h"
#include "fusionscope/build_config.h"

static_assert(!FUSIONSCOPE_HAS_CUDA, "without_cuda_commands.cpp belongs to builds without CUDA");

namespace fusionscope::cli {

namespace {

void add_absent_command(CLI::App& app, const char* name, const char* what) {
  auto* cmd = app.add_subcommand(name, std::string(what) + " (not in this build: it has no CUDA)");
  // Whatever follows (options, --help, a command after --), the answer is why the command is
  // absent: said as soon as the command is named, before its arguments are read. main() prints
  // the message and exits with status 1.
  cmd->preparse_callback([name](std::size_t) {
    throw std::runtime_error(std::string(name) + ": not available: " + kBuiltWithoutCuda +
                             ". Sessions captured elsewhere open, import, export and report here.");
  });
}

}  // namespace

void add_capture_command(CLI::App& app) {
  add_absent_command(app, "capture", "Run configurations on the GPU under capture");
}

void add_calibrate_command(CLI::App& app) {
  add_absent_command(app, "calibrate", "Measure this GPU's DRAM bandwidth and tensor rate");
}

}  // namespace fusionscope::cli
