// Counters over time as chart rows of the timeline, as Nsight Systems' GPU metrics rows: the
// PM-sampled DRAM bandwidth (read and write stacked, scaled to the GPU's peak) and SM / tensor
// pipe activity, drawn under a run's GPU streams on the timeline's own time axis, so they zoom
// and pan with it. Samples are drawn one by one while each is wider than a pixel column, else
// binned per column (analysis::bin_series).
#pragma once

#include <vector>

#include <imgui.h>

#include "fusionscope/analysis/series.h"
#include "theme.h"
#include "timeline_draw.h"

namespace fusionscope::ui {

enum class MetricsRow { kDramBandwidth, kActivity };

// Rows a run gets: DRAM bandwidth when it has those samples, activity when it has those.
std::vector<MetricsRow> metrics_rows(const analysis::PmSeries& series);

float metrics_row_height(MetricsRow row, const Theme& theme);
const char* metrics_row_label(MetricsRow row);

// Draws one row into `draw` within `geo` (absolute times: geo.t0_ns is the run's time at x0).
// `dram_peak` (byte/s) is the bandwidth row's full scale; 0 scales to the series' maximum.
void draw_metrics_row(ImDrawList* draw, const RowGeometry& geo, MetricsRow row,
                      const analysis::PmSeries& series, double dram_peak, const Theme& theme);

// The row's scale and the colours of its series, drawn at `at` (in the gutter, under its label).
void draw_metrics_row_legend(ImDrawList* draw, ImVec2 at, MetricsRow row,
                             const analysis::PmSeries& series, double dram_peak,
                             const Theme& theme);

// Tooltip body for the sample nearest to t_ns (the run's clock) in that row.
void metrics_row_tooltip(MetricsRow row, const analysis::PmSeries& series, double t_ns,
                         double dram_peak);

}  // namespace fusionscope::ui
