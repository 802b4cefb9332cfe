// The interactive app under an X display: it opens a window on a session (or on a corrupt file,
// showing an error instead of failing), takes mouse and keyboard input, and quits on Ctrl+Q.
// Input comes from xdotool. Skips without a display or without xdotool.
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "app_process.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;
using fusionscope::testing::App;
using fusionscope::testing::send_input;
using fusionscope::testing::send_quit;

// One test for both cases: keyboard focus is shared by the whole display, so two apps driven at
// once could take each other's keys (tests in other processes wait on DisplayInputLock).
TEST(Interactive, TakesInputShowsErrorsAndQuitsOnCtrlQ) {
  REQUIRE_DISPLAY_AND_XDOTOOL();
  fusionscope::testing::DisplayInputLock input;
  const fs::path dir = fusionscope::testing::scratch_dir();
  {
    App app({FUSIONSCOPE_SAMPLE}, dir);
    ASSERT_TRUE(app.started());
    // Click a run, wheel-zoom and drag on the timeline, hold W, then quit.
    ASSERT_TRUE(send_input(app,
                           "mousemove --window %1 120 130 click 1 sleep 0.3 "
                           "mousemove --window %1 700 560 click 4 click 4 click 5 sleep 0.2 "
                           "mousedown 1 mousemove --window %1 500 560 mouseup 1 sleep 0.2 "
                           "keydown w sleep 0.4 keyup w sleep 0.2"));
    EXPECT_TRUE(app.running());
    send_quit(app);
    EXPECT_EQ(app.wait_exit(15.0), 0);
  }
  {
    const fs::path bad = dir / "bad.fsdb";
    std::ofstream(bad) << "not a session";
    App app({bad.string()}, dir);
    ASSERT_TRUE(app.started());
    ASSERT_TRUE(send_input(app, "sleep 1"));  // the window is up
    EXPECT_TRUE(app.running()) << "the app ended on a corrupt file";
    ASSERT_TRUE(send_input(app, "key Return sleep 0.3"));  // dismiss the error
    EXPECT_TRUE(app.running());
    send_quit(app);
    EXPECT_EQ(app.wait_exit(15.0), 0);
  }
}

}  // namespace
