// frame_build_bench [N...]: CPU time to build one frame of a timeline row holding N kernels
// (default 1,000,000 and 10,000,000), at several zoom levels:
//   lod   the level-of-detail pass alone (analysis::build_lod: the boxes to draw);
//   draw  the pass plus filling an ImGui draw list with those boxes and their labels, in a
//         headless ImGui context (NewFrame .. Render, no GPU), with the app's own row drawing.
// Each figure is over many frames panned across the trace: median and worst, in microseconds.
// The target is 4 ms per frame. Kernel lengths and gaps are drawn from a fixed-seed mix of MLP
// kernels (2 to 80 us, gaps 1 to 6 us), one stream, so the trace spans seconds to minutes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include <imgui.h>
#include <CLI/CLI.hpp>

#include "fusionscope/analysis/lane_index.h"
#include "fusionscope/analysis/lod.h"
#include "theme.h"
#include "timeline_draw.h"

namespace {

using fusionscope::analysis::LaneIndex;
using fusionscope::analysis::LodBox;
using fusionscope::analysis::LodView;

constexpr float kWidthPx = 1600.0f;  // the time axis of a 1920-pixel-wide window
constexpr int kFrames = 200;

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

LaneIndex make_lane(size_t n) {
  std::mt19937_64 rng(42);
  // The reference GeGLU's kernel lengths (us), plus short ones as small configurations have.
  const double lengths[] = {61.3, 34.9, 62.4, 50.1, 55.1, 2.6, 4.1, 8.0};
  LaneIndex lane;
  lane.reserve(n);
  int64_t t = 1'000'000'000;
  for (size_t i = 0; i < n; ++i) {
    const double us =
        lengths[rng() % 8] * (0.97 + 0.06 * static_cast<double>(rng() % 1000) / 1000.0);
    const int64_t len = static_cast<int64_t>(us * 1000.0);
    lane.push(t, t + len, static_cast<uint32_t>(i));
    t += len + 1000 + static_cast<int64_t>(rng() % 5000);
  }
  return lane;
}

const char* const kNames[] = {"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT",
                              "gelu_tanh",
                              "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT",
                              "multiply",
                              "nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT",
                              "bias_add",
                              "gelu_tanh_mul",
                              "triton_poi_fused_gelu_mul_0"};

struct LookContext {
  const LaneIndex* lane;
  ImU32 colors[8];
};

fusionscope::ui::ItemLook look(const void* c, uint32_t pos) {
  const auto& ctx = *static_cast<const LookContext*>(c);
  const uint32_t k = ctx.lane->item[pos] % 8;
  return {ctx.colors[k], kNames[k]};
}

struct Figures {
  double median_us = 0, worst_us = 0, boxes = 0;
};

Figures summarize(std::vector<double>& times, double boxes) {
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2] * 1e6, times.back() * 1e6, boxes};
}

// View windows of `span` ns at kFrames positions spread over the trace.
std::vector<LodView> views(const LaneIndex& lane, double span) {
  const double first = static_cast<double>(lane.start.front());
  const double last = static_cast<double>(lane.max_end.back());
  std::vector<LodView> out;
  for (int f = 0; f < kFrames; ++f) {
    const double room = std::max(last - first - span, 0.0);
    const double begin = first + room * f / (kFrames - 1);
    out.push_back({static_cast<int64_t>(begin), static_cast<int64_t>(begin + span), kWidthPx, 3.0});
  }
  return out;
}

Figures bench_lod(const LaneIndex& lane, const std::vector<LodView>& vs) {
  std::vector<LodBox> boxes;
  std::vector<double> times;
  double total_boxes = 0;
  for (const LodView& v : vs) {
    const double t0 = cpu_seconds();
    boxes.clear();
    fusionscope::analysis::build_lod(lane, v, boxes);
    times.push_back(cpu_seconds() - t0);
    total_boxes += static_cast<double>(boxes.size());
  }
  return summarize(times, total_boxes / static_cast<double>(vs.size()));
}

Figures bench_draw(const LaneIndex& lane, const std::vector<LodView>& vs,
                   const fusionscope::ui::Theme& theme) {
  LookContext ctx{&lane, {}};
  for (int i = 0; i < 8; ++i) ctx.colors[i] = fusionscope::ui::color_for_name(kNames[i]);
  std::vector<LodBox> boxes;
  std::vector<double> times;
  double vertices = 0;
  ImGuiIO& io = ImGui::GetIO();
  for (const LodView& v : vs) {
    const double t0 = cpu_seconds();
    io.DeltaTime = 1.0f / 60.0f;
    ImGui::NewFrame();
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(io.DisplaySize);
    ImGui::Begin("timeline", nullptr, ImGuiWindowFlags_NoDecoration);
    boxes.clear();
    fusionscope::analysis::build_lod(lane, v, boxes);
    fusionscope::ui::RowGeometry row;
    row.x0 = 200;
    row.x1 = 200 + kWidthPx;
    row.y0 = 100;
    row.y1 = 100 + theme.row_height;
    row.t0_ns = static_cast<double>(v.begin_ns);
    row.px_per_ns = kWidthPx / static_cast<double>(v.end_ns - v.begin_ns);
    fusionscope::ui::draw_row_boxes(ImGui::GetWindowDrawList(), row, lane, boxes,
                                    fusionscope::ui::ItemLookFn{&ctx, look}, theme, ImVec2(-1, -1));
    ImGui::End();
    ImGui::Render();
    times.push_back(cpu_seconds() - t0);
    vertices += ImGui::GetDrawData()->TotalVtxCount;
  }
  Figures f = summarize(times, vertices / static_cast<double>(vs.size()));
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"frame_build_bench: CPU time to build one timeline frame over N kernels"};
  std::vector<size_t> sizes;
  app.add_option("kernels", sizes, "Kernels in the row, one figure each (default 1M and 10M)")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  if (sizes.empty()) sizes = {1'000'000, 10'000'000};

  // A headless ImGui context: the default font, a 1920x1080 display, nothing rendered on a GPU.
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  io.DisplaySize = ImVec2(1920, 1080);
  io.Fonts->AddFontDefault();
  unsigned char* pixels = nullptr;
  int w = 0, h = 0;
  io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
  const fusionscope::ui::Theme theme = fusionscope::ui::make_theme(1.0f);

  std::printf(
      "frame_build_bench: one timeline row of N kernels, %.0f px wide, %d frames per figure\n",
      static_cast<double>(kWidthPx), kFrames);
  std::printf("times are CPU time per frame in us (median / worst); target 4000 us\n\n");
  std::printf("%12s  %-22s %22s %22s %10s %10s\n", "kernels", "view", "lod pass",
              "lod + ImGui draw list", "boxes", "vertices");
  for (size_t n : sizes) {
    const double t0 = cpu_seconds();
    const LaneIndex lane = make_lane(n);
    const double build_s = cpu_seconds() - t0;
    const double trace_ns = static_cast<double>(lane.max_end.back() - lane.start.front());
    struct Zoom {
      std::string name;
      double span_ns;
    };
    const Zoom zooms[] = {
        {"full zoom-out", trace_ns},
        // The most boxes a view can hold: kernels a few pixels wide, each drawn on its own.
        {"kernels ~4 px wide", trace_ns / static_cast<double>(n) * kWidthPx / 4.0},
        {"1 ms window", 1e6},
        {"1 us per pixel", 1e3 * kWidthPx},
        {"1 us window", 1e3},
    };
    for (const Zoom& z : zooms) {
      const auto vs = views(lane, z.span_ns);
      const Figures lod = bench_lod(lane, vs);
      const Figures draw = bench_draw(lane, vs, theme);
      char a[64], b[64];
      std::snprintf(a, sizeof a, "%.1f / %.1f", lod.median_us, lod.worst_us);
      std::snprintf(b, sizeof b, "%.1f / %.1f", draw.median_us, draw.worst_us);
      std::printf("%12zu  %-22s %22s %22s %10.0f %10.0f\n", n, z.name.c_str(), a, b, lod.boxes,
                  draw.boxes);
    }
    std::printf("%12zu  (trace spans %.1f s; indexing the lane once took %.0f ms)\n\n", n,
                trace_ns * 1e-9, build_s * 1e3);
  }
  ImGui::DestroyContext();
  return 0;
}
