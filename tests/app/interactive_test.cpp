// The interactive app under an X display: it opens a window on a session (or on a corrupt file,
// showing an error instead of failing), takes mouse and keyboard input, and quits on Ctrl+Q.
// Input comes from xdotool; every step is checked through the app's state probe
// ($FUSIONSCOPE_UI_STATE): the run clicked is selected, the wheel and W zoom in, a drag pans,
// the error popup opens and Enter closes it. Skips without a display or without xdotool.
#include <array>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "app_process.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;
using fusionscope::testing::App;
using fusionscope::testing::Driver;
using fusionscope::testing::UiState;

std::string describe(const UiState& s) {
  std::string t;
  for (const auto& [k, v] : s.values) t += k + "=" + v + "\n";
  return t;
}

// The timeline's visible window on its axis, ns.
struct View {
  double begin = 0, end = 0;
  double span() const { return end - begin; }
};
View view_of(const UiState& s) {
  View v;
  std::istringstream(s.get("timeline.view")) >> v.begin >> v.end;
  return v;
}

// One test for both cases: keyboard focus is shared by the whole display, so two apps driven at
// once could take each other's keys (tests in other processes wait on DisplayInputLock).
TEST(Interactive, TakesInputShowsErrorsAndQuitsOnCtrlQ) {
  REQUIRE_DISPLAY_AND_XDOTOOL();
  fusionscope::testing::DisplayInputLock input;
  const fs::path dir = fusionscope::testing::scratch_dir();
  {
    const fs::path state = dir / "state.txt";
    App app({FUSIONSCOPE_SAMPLE}, dir, state);
    ASSERT_TRUE(app.started());
    Driver d(app, state);
    UiState s;
    ASSERT_TRUE(d.wait(
        [](const UiState& u) {
          return u.get("session") == FUSIONSCOPE_SAMPLE && u.has_item("timeline.canvas");
        },
        20, &s))
        << describe(s);

    // Click a run the timeline does not show yet: it becomes the selection.
    // (The run with the lowest id other than the selected one: the table's top rows are shown.)
    std::string other;
    for (const auto& [name, rect] : s.items) {
      if (name.rfind("runs.row.", 0) != 0 || name.substr(9) == s.get("selected")) continue;
      if (other.empty() || std::stoll(name.substr(9)) < std::stoll(other)) other = name.substr(9);
    }
    ASSERT_FALSE(other.empty()) << describe(s);
    ASSERT_TRUE(d.click("runs.row." + other, {}, 60));
    ASSERT_TRUE(d.wait([&](const UiState& u) { return u.get("selected") == other; }, 10, &s))
        << describe(s);

    // Over the canvas the wheel zooms in at the pointer.
    ASSERT_TRUE(d.wait([](const UiState& u) { return u.has_item("timeline.canvas"); }, 10, &s));
    const std::array<float, 4> c = s.items.at("timeline.canvas");
    const int cx = static_cast<int>(c[0] + c[2] * 0.5f), cy = static_cast<int>(c[1] + c[3] * 0.5f);
    ASSERT_TRUE(d.move(cx, cy));
    const View before_wheel = view_of(d.last());
    ASSERT_TRUE(d.wheel(3));
    ASSERT_TRUE(d.wait(
        [&](const UiState& u) { return view_of(u).span() < before_wheel.span() * 0.9; }, 10, &s))
        << describe(s);

    // Dragging to the left moves the view later in time, by what 200 pixels cover.
    const View before_drag = view_of(s);
    ASSERT_TRUE(d.drag(cx, cy, cx - 200, cy));
    ASSERT_TRUE(d.wait(
        [&](const UiState& u) {
          const View v = view_of(u);
          const double moved = (v.begin - before_drag.begin) / before_drag.span() * c[2];
          return moved > 150 && moved < 250;
        },
        10, &s))
        << describe(s);

    // Holding W zooms in further.
    const View before_w = view_of(s);
    ASSERT_TRUE(d.key_down("w", "W"));
    ASSERT_TRUE(
        d.wait([&](const UiState& u) { return view_of(u).span() < before_w.span() * 0.8; }, 10, &s))
        << describe(s);
    ASSERT_TRUE(d.key_up("w", "W"));
    EXPECT_TRUE(app.running());
    EXPECT_EQ(s.get("popup"), "");
    d.key("ctrl+q");
    EXPECT_EQ(app.wait_exit(15.0), 0);
  }
  {
    const fs::path bad = dir / "bad.fsdb";
    std::ofstream(bad) << "not a session";
    const fs::path state = dir / "bad-state.txt";
    App app({bad.string()}, dir, state);
    ASSERT_TRUE(app.started());
    Driver d(app, state);
    UiState s;
    ASSERT_TRUE(d.wait(
        [](const UiState& u) {
          return u.get("popup") == "error" &&
                 u.get("last_error").rfind("Cannot open session", 0) == 0;
        },
        20, &s))
        << describe(s);
    EXPECT_NE(s.get("last_error").find("bad.fsdb"), std::string::npos) << s.get("last_error");
    EXPECT_EQ(s.get("session"), "");  // nothing opened in its place
    ASSERT_TRUE(d.enter_until([](const UiState& u) { return u.get("popup").empty(); }));
    EXPECT_TRUE(app.running());
    d.key("ctrl+q");
    EXPECT_EQ(app.wait_exit(15.0), 0);
  }
}

}  // namespace
