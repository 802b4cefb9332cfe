// The GUI entry point.
#pragma once

#include <string>

namespace fusionscope::ui {

struct GuiOptions {
  std::string session_path;  // empty: the built-in sample session
};

// Opens the window and runs until it closes; returns the process exit code.
int run_gui(const GuiOptions& options);

}  // namespace fusionscope::ui
