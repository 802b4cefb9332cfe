#include "view_registry.h"

#include <array>

#include "app_state.h"
#include "lab_panel.h"
#include "sweep_chart.h"
#include "views.h"

namespace fusionscope::ui {

namespace {

constexpr std::array kViews = {
    ViewInfo{"timeline", "Timeline", "the selected runs' CPU and GPU rows on one time axis",
             draw_timeline_view},
    ViewInfo{"stats", "Statistics", "kernels and ops of one run: count, total, mean, spread",
             draw_stats_view},
    ViewInfo{"comparison", "Comparison", "two runs: totals, memory traffic, what each op became",
             draw_comparison_view},
    ViewInfo{"lab", "Lab", "run configurations on the GPU, the guess next to the measurement",
             draw_lab_panel},
    ViewInfo{"sweep", "Sweep", "one size varied over a range: time and speedup charts",
             draw_sweep_view},
    ViewInfo{"bandwidth", "Bandwidth", "DRAM bytes and bandwidth per kernel", draw_bandwidth_view},
    ViewInfo{"roofline", "Roofline", "kernels under the GPU's ceilings, log-log",
             draw_roofline_view},
    ViewInfo{"advice", "Advice", "what fusing kernels would buy in one run, with the numbers",
             draw_advice_view},
    ViewInfo{"runs", "Runs", "the session's runs table with its header and notes", draw_runs_view,
             false},
};

}  // namespace

std::span<const ViewInfo> views() {
  return kViews;
}

const ViewInfo* find_view(std::string_view id) {
  for (const ViewInfo& v : kViews)
    if (id == v.id) return &v;
  return nullptr;
}

std::string view_ids_text() {
  std::string text;
  for (size_t i = 0; i < kViews.size(); ++i) {
    if (i > 0) text += i + 1 == kViews.size() ? " or " : ", ";
    text += kViews[i].id;
  }
  return text;
}

void show_view(AppState& app, std::string_view id) {
  app.view = std::string(id);
  app.view_requested = true;
}

}  // namespace fusionscope::ui
