// `fusionscope screenshot [SESSION] --out FILE.png [--size WxH] [--view V] [--runs A,B]`: renders
// the app offscreen (under Xvfb on a server) and writes a PNG: the whole window, or one view
// filling the image.
#include <cstdio>
#include <string>
#include <vector>

#include "command_line.h"
#include "commands.h"
#include "ui/gui_main.h"

namespace fusionscope::cli {

namespace {

// WIDTHxHEIGHT in plain digits ("1600x1000"); the range is checked by run_screenshot.
bool parse_size(const std::string& text, int& w, int& h) {
  const size_t x = text.find('x');
  if (x == std::string::npos || x == 0 || x + 1 == text.size() || x > 5 || text.size() - x > 6)
    return false;
  for (size_t i = 0; i < text.size(); ++i)
    if (i != x && (text[i] < '0' || text[i] > '9')) return false;
  w = std::stoi(text.substr(0, x));
  h = std::stoi(text.substr(x + 1));
  return true;
}

}  // namespace

void add_screenshot_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("screenshot",
                                 "Render a view of a session to a PNG (needs an X display; "
                                 "use xvfb-run on a server)");
  struct Args {
    ui::ScreenshotOptions options;
    std::string size = "1600x1000";
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("session", args->options.session_path,
                  "Session file (.fsdb); the sample session if omitted");
  cmd->add_option("--out,-o", args->options.out_path, "PNG file to write")->required();
  cmd->add_flag("--force", args->options.force,
                "Replace PNG files that exist (never a session, never the input)");
  cmd->add_option("--size", args->size, "Image size WxH (default 1600x1000)");
  cmd->add_option("--view", args->options.view, ui::screenshot_views_help())
      ->check(CLI::IsMember(ui::screenshot_views()));
  cmd->add_option("--tab", args->options.tab,
                  "The view in front when the whole window is drawn (its id, as for --view)")
      ->check(CLI::IsMember(ui::screenshot_views()));
  cmd->add_option("--runs", args->options.runs,
                  "Runs by id or name, comma separated: the timeline's runs, or comparison's A,B")
      ->delimiter(',');
  cmd->add_option("--select", args->options.select,
                  "Select the first timed kernel whose name contains this (timeline views)");
  cmd->add_option("--find", args->options.find,
                  "Open the timeline's Find bar with this query (substring of a kernel, op, API "
                  "call or range name)");
  cmd->add_option("--area", args->options.area,
                  "Select an area of the timeline across every row: FROM:TO in microseconds "
                  "from the ruler's 0 (the first timed iteration), e.g. 0:250");
  cmd->add_flag("--light", args->options.light, "The light theme (default dark)");
  cmd->add_option("--scale", args->options.scale, "UI scale, 1 to 3 (default 1)")
      ->check(CLI::Range(1.0f, 3.0f));
  // The live lab, headless (docs/lab.md): needs a CUDA GPU; SESSION receives the runs.
  cmd->add_option("--lab", args->options.lab_preset,
                  "Run this preset in the Lab panel into SESSION (created when missing) and "
                  "capture the window after the job");
  cmd->add_option("--lab-variants", args->options.lab_variants,
                  "Variants for --lab, comma separated, or all (default)");
  cmd->add_option("--lab-sweep", args->options.lab_sweep,
                  "Sweep one size for --lab: SIZE:FROM:TO[:POINTS], e.g. hidden:256:8192 "
                  "(doubling without POINTS)");
  cmd->add_option("--lab-iters", args->options.lab_iterations, "Timed iterations per run (20)")
      ->check(integer_in(1, 1000000));
  cmd->add_option("--lab-warmup", args->options.lab_warmup, "Warm-up iterations per run (5)")
      ->check(integer_in(0, 100000));
  cmd->add_flag("!--lab-no-check", args->options.lab_verify,
                "Do not compare outputs with the fp32 reference");
  cmd->add_option("--lab-during", args->options.lab_during,
                  "Also capture the window half-way through the lab's job (PNG)");
  cmd->callback([args] {
    ui::ScreenshotOptions o = args->options;
    if (!parse_size(args->size, o.width, o.height)) {
      print_error("screenshot", "--size must be WIDTHxHEIGHT, e.g. 1600x1000 (got \"" +
                                    args->size.substr(0, 40) + "\")");
      exit_code() = 2;
      return;
    }
    exit_code() = ui::run_screenshot(o);
  });
}

}  // namespace fusionscope::cli
