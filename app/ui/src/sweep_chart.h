// The Sweep tab: a sweep's runs as two charts against the size on a log2 axis: GPU time per
// iteration of each variant (log scale, the roofline bounds dashed) and each variant's speedup
// over eager, with the sizes where fusion pays off shaded. Drawn with ImGui's draw lists.
#pragma once

#include <vector>

#include "app_state.h"
#include "fusionscope/analysis/sweep_chart.h"
#include "fusionscope/lab/sweep.h"

namespace fusionscope::ui {

void draw_sweep_view(AppState& app);

// The chart's figures for one sweep of the open session: each point's run in each variant
// (missing and failed runs are gaps) and its roofline bound from `peaks`.
analysis::SweepChart sweep_chart_of(const Session& session, const lab::SweepRecord& sweep,
                                    const analysis::PredictionPeaks& peaks);

}  // namespace fusionscope::ui
