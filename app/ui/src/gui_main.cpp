#include "ui/gui_main.h"

#include <cstdio>

namespace fusionscope::ui {

int run_gui(const GuiOptions&) {
  std::fprintf(stderr, "fusionscope: the GUI is not built yet\n");
  return 2;
}

}  // namespace fusionscope::ui
