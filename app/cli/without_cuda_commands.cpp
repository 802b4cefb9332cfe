// `capture` and `calibrate` in a build without CUDA (FUSIONSCOPE_CUDA=OFF): still listed, so a
// script or a person asking for them learns why they are absent (exit status 1) rather than that
// the command does not exist.
#include <cstdio>

#include "commands.h"
#include "fusionscope/build_config.h"

static_assert(!FUSIONSCOPE_HAS_CUDA, "without_cuda_commands.cpp belongs to builds without CUDA");

namespace fusionscope::cli {

namespace {

void add_absent_command(CLI::App& app, const char* name, const char* what) {
  auto* cmd = app.add_subcommand(name, std::string(what) + " (not in this build: it has no CUDA)");
  cmd->allow_extras();  // whatever was asked, the answer is why the command is absent
  cmd->callback([name] {
    std::fprintf(stderr,
                 "fusionscope %s: not available: %s. Sessions captured elsewhere open, import, "
                 "export and report here.\n",
                 name, kBuiltWithoutCuda);
    exit_code() = 1;
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
