// The viewer driven as a person would, checked through the app's state probe against figures the
// test computes from the session file itself:
// - the app opens on the timed iterations of the run it shows (not the setup before them), and
//   0 / I fit everything / the iterations again;
// - Find (Ctrl+F) counts the kernels whose names match, with their total time;
// - an area selection dragged across a GPU stream's row lists the kernels that lie in it, with
//   the count and total time of exactly those kernels;
// - Statistics shows the run picked in the runs table, and follows when another is picked.
// Skips without a display or without xdotool.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "app_process.h"
#include "fusionscope/storage/session_store.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;
using fusionscope::testing::App;
using fusionscope::testing::DisplayInputLock;
using fusionscope::testing::Driver;
using fusionscope::testing::UiState;
namespace storage = fusionscope::storage;

std::string describe(const UiState& s) {
  std::string t;
  for (const auto& [k, v] : s.values) t += k + "=" + v + "\n";
  return t;
}

// Two numbers of a probe line ("123 456").
std::pair<double, double> pair_of(const std::string& text) {
  std::pair<double, double> p{0, 0};
  std::istringstream(text) >> p.first >> p.second;
  return p;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The app on the sample session, its probe ready and the timeline laid out.
struct Viewer {
  fs::path dir = fusionscope::testing::scratch_dir();
  fs::path state = dir / "state.txt";
  App app{{FUSIONSCOPE_SAMPLE}, dir, state};
  Driver d{app, state};
  UiState s;
  bool ready() {
    return app.started() && d.wait(
                                [](const UiState& u) {
                                  return u.get("session") == FUSIONSCOPE_SAMPLE &&
                                         u.has_item("timeline.canvas") &&
                                         !u.get("timeline.iterations").empty();
                                },
                                20, &s);
  }
  // Picks the run with this name in the runs table, scrolling the table to it; on failure
  // `why` says which step did not happen.
  std::string why;
  std::string pick_run(const std::string& name) {
    const auto store = storage::SessionStore::open(FUSIONSCOPE_SAMPLE);
    std::string id;
    for (const storage::RunInfo& r : store.runs())
      if (r.name == name) id = std::to_string(r.id);
    auto fail = [&](const std::string& step) {
      why = "picking run " + name + " (#" + id + "): " + step;
      return std::string();
    };
    if (id.empty()) return fail("no such run in the session");
    const std::string row = "runs.row." + id;
    // The table shows a few rows: scroll it a notch at a time towards the run, each notch
    // seen by the app (its topmost row changes) before the next.
    auto topmost = [](const UiState& u) {
      std::string top;
      for (const auto& [item, rect] : u.items)
        if (item.rfind("runs.row.", 0) == 0 && (top.empty() || rect[1] < u.items.at(top)[1]))
          top = item;
      return top;
    };
    for (int notches = 0; notches < 40; ++notches) {
      if (!d.wait([&](const UiState& u) { return !topmost(u).empty(); }, 10, &s))
        return fail("the runs table shows no row");
      if (s.has_item(row)) break;
      const std::string top = topmost(s);
      int x = 0, y = 0;
      std::istringstream(s.centre(top, 60)) >> x >> y;
      const bool down = std::stoll(id) > std::stoll(top.substr(9));
      if (!d.move(x, y)) return fail("the pointer did not reach the table");
      if (!d.wheel(down ? -1 : 1)) return fail("the wheel could not be turned");
      if (!d.wait([&](const UiState& u) { return topmost(u) != top || u.has_item(row); }, 10, &s))
        return fail("the table did not scroll from " + top);
    }
    if (!d.click(row, {}, 60)) return fail("the row could not be clicked");
    if (!d.wait([&](const UiState& u) { return u.get("selected") == id; }, 10, &s))
      return fail("the click did not select it");
    return id;
  }
  ~Viewer() {
    d.key("ctrl+q");
    app.wait_exit(15.0);
  }
};

TEST(ViewerGui, OpensOnTheTimedIterationsAndFitsAllOrThemAgain) {
  REQUIRE_DISPLAY_AND_XDOTOOL();
  DisplayInputLock input;
  Viewer v;
  ASSERT_TRUE(v.ready()) << describe(v.s);
  ASSERT_FALSE(v.pick_run("geglu-post / eager").empty()) << v.why << "\n" << describe(v.s);
  ASSERT_TRUE(
      v.d.wait([](const UiState& u) { return !u.get("timeline.iterations").empty(); }, 10, &v.s));
  const auto iterations = pair_of(v.s.get("timeline.iterations"));
  const auto view = pair_of(v.s.get("timeline.view"));
  const double span = iterations.second - iterations.first;
  ASSERT_GT(span, 0);
  // The view is the timed iterations with a small margin, not the setup before them.
  EXPECT_LE(view.first, iterations.first);
  EXPECT_GE(view.second, iterations.second);
  EXPECT_LT(view.second - view.first, span * 1.1) << describe(v.s);
  // The ruler counts from the first timed iteration.
  EXPECT_NEAR(std::stod(v.s.get("timeline.zero")), iterations.first, 1.0);

  // 0 shows everything (the setup is far longer than the work), I the iterations again.
  const auto& c = v.s.items.at("timeline.canvas");
  ASSERT_TRUE(v.d.move(static_cast<int>(c[0] + c[2] / 2), static_cast<int>(c[1] + c[3] / 2)));
  ASSERT_TRUE(v.d.key_down("0", "0"));
  ASSERT_TRUE(v.d.wait(
      [&](const UiState& u) {
        const auto w = pair_of(u.get("timeline.view"));
        return w.second - w.first > span * 10;
      },
      10, &v.s))
      << describe(v.s);
  ASSERT_TRUE(v.d.key_up("0", "0"));
  ASSERT_TRUE(v.d.key_down("i", "I"));
  ASSERT_TRUE(v.d.wait(
      [&](const UiState& u) {
        const auto w = pair_of(u.get("timeline.view"));
        return w.second - w.first < span * 1.1 && w.first <= iterations.first;
      },
      10, &v.s))
      << describe(v.s);
  ASSERT_TRUE(v.d.key_up("i", "I"));
}

TEST(ViewerGui, FindCountsTheKernelsWhoseNamesMatch) {
  REQUIRE_DISPLAY_AND_XDOTOOL();
  DisplayInputLock input;
  Viewer v;
  ASSERT_TRUE(v.ready()) << describe(v.s);
  const std::string id = v.pick_run("geglu-post / eager");
  ASSERT_FALSE(id.empty()) << v.why << "\n" << describe(v.s);

  // What the session file says: kernels of that run named like "multiply" (or of such an op).
  const auto store = storage::SessionStore::open(FUSIONSCOPE_SAMPLE);
  const storage::RunData run = store.load_run(std::stoll(id));
  uint64_t count = 0;
  int64_t total = 0;
  for (const storage::KernelRecord& k : run.kernels)
    if (lower(run.str(k.name)).find("multiply") != std::string::npos ||
        lower(run.str(k.op)).find("multiply") != std::string::npos) {
      ++count;
      total += k.end_ns - k.start_ns;
    }
  ASSERT_GT(count, 0u);

  ASSERT_TRUE(v.d.key("ctrl+f"));
  ASSERT_TRUE(v.d.wait([](const UiState& u) { return u.has_item("find.text"); }, 10, &v.s));
  ASSERT_TRUE(v.d.type("Multiply"));
  ASSERT_TRUE(
      v.d.wait([](const UiState& u) { return u.get("find.query") == "Multiply"; }, 10, &v.s))
      << describe(v.s);
  EXPECT_EQ(v.s.get("find.kernel"), std::to_string(count) + " " + std::to_string(total));
  EXPECT_EQ(v.s.get("find.error"), "");

  // Enter steps to a match: it becomes the selection.
  ASSERT_TRUE(v.d.enter_until([](const UiState& u) { return !u.get("find.current").empty(); }));
  ASSERT_TRUE(v.d.wait(
      [&](const UiState& u) { return u.get("timeline.selected").rfind(id + " kernel ", 0) == 0; },
      10, &v.s))
      << describe(v.s);
  const uint32_t selected =
      static_cast<uint32_t>(std::stoul(v.s.get("timeline.selected").substr(id.size() + 8)));
  ASSERT_LT(selected, run.kernels.size());
  EXPECT_NE(lower(run.str(run.kernels[selected].name)).find("multiply"), std::string::npos);
}

TEST(ViewerGui, AnAreaSelectionsTotalsAreThoseOfTheKernelsInIt) {
  REQUIRE_DISPLAY_AND_XDOTOOL();
  DisplayInputLock input;
  Viewer v;
  ASSERT_TRUE(v.ready()) << describe(v.s);
  const std::string id = v.pick_run("geglu-post / eager");
  ASSERT_FALSE(id.empty()) << v.why << "\n" << describe(v.s);
  const auto store = storage::SessionStore::open(FUSIONSCOPE_SAMPLE);
  const storage::RunData run = store.load_run(std::stoll(id));
  // The stream with the most kernels, and its row on screen.
  std::map<uint32_t, size_t> per_stream;
  for (const storage::KernelRecord& k : run.kernels) ++per_stream[k.stream];
  ASSERT_FALSE(per_stream.empty());
  uint32_t stream = per_stream.begin()->first;
  for (const auto& [st, n] : per_stream)
    if (n > per_stream[stream]) stream = st;
  int row = -1;
  ASSERT_TRUE(v.d.wait([](const UiState& u) { return !u.get("timeline.rows").empty(); }, 10, &v.s));
  {
    std::istringstream labels(v.s.get("timeline.rows"));
    std::string label;
    for (int i = 0; std::getline(labels, label, '|'); ++i)
      if (label.find("stream " + std::to_string(stream)) != std::string::npos) row = i;
  }
  ASSERT_GE(row, 0) << describe(v.s);
  const auto r = v.s.items.at("timeline.row." + std::to_string(row));
  const int y = static_cast<int>(r[1] + r[3] / 2);
  const int x0 = static_cast<int>(r[0] + r[2] * 0.2f), x1 = static_cast<int>(r[0] + r[2] * 0.6f);
  // A right-drag along the row: one row, from 20% to 60% of the axis.
  ASSERT_TRUE(v.d.drag(x0, y, x1, y, 3));
  ASSERT_TRUE(v.d.wait([](const UiState& u) { return u.get("area.rows") == "1"; }, 10, &v.s))
      << describe(v.s);
  const auto range = pair_of(v.s.get("area.range"));
  const int64_t origin = std::stoll(v.s.get("timeline.origins"));
  const double a = range.first + static_cast<double>(origin);
  const double b = range.second + static_cast<double>(origin);
  // The statistics of the kernels of that stream that overlap the range.
  uint64_t count = 0;
  int64_t total = 0;
  for (const storage::KernelRecord& k : run.kernels)
    if (k.stream == stream && static_cast<double>(k.end_ns) > std::floor(a) &&
        static_cast<double>(k.start_ns) < std::ceil(b)) {
      ++count;
      total += k.end_ns - k.start_ns;
    }
  ASSERT_GT(count, 1u);
  EXPECT_EQ(v.s.get("area.kernels"), std::to_string(count) + " " + std::to_string(total));
}

TEST(ViewerGui, StatisticsFollowsTheRunsTableSelection) {
  REQUIRE_DISPLAY_AND_XDOTOOL();
  DisplayInputLock input;
  Viewer v;
  ASSERT_TRUE(v.ready()) << describe(v.s);
  const std::string first = v.pick_run("geglu-post / eager");
  ASSERT_FALSE(first.empty()) << v.why << "\n" << describe(v.s);
  ASSERT_TRUE(v.d.click("tab.Statistics"));
  ASSERT_TRUE(v.d.wait(
      [&](const UiState& u) { return u.get("view") == "stats" && u.get("stats.run") == first; }, 10,
      &v.s))
      << describe(v.s);
  const std::string second = v.pick_run("geglu-post / gated-gemm");
  ASSERT_FALSE(second.empty()) << v.why << "\n" << describe(v.s);
  ASSERT_TRUE(v.d.wait([&](const UiState& u) { return u.get("stats.run") == second; }, 10, &v.s))
      << describe(v.s);
}

}  // namespace
