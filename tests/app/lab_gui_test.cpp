// The real window driven with xdotool, checked through what the app says it shows
// ($FUSIONSCOPE_UI_STATE, app/ui/src/ui_probe.h) and the files it writes:
// - open a session with Ctrl+O, select two runs, switch to Comparison and export the window;
// - type an invalid size into the Lab panel: the panel refuses it with the reason and Run stays
//   disabled, and the app keeps working.
// The headless lab (`fusionscope screenshot --lab`) is refused with a reason without a GPU.
// Skips without a display or xdotool.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <stb_image.h>

#include "app_process.h"
#include "fusionscope/storage/session_store.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;
using fusionscope::testing::App;
using fusionscope::testing::DisplayInputLock;
using fusionscope::testing::Driver;
using fusionscope::testing::UiState;

std::string describe(const UiState& s) {
  std::string t;
  for (const auto& [k, v] : s.values) t += k + "=" + v + "\n";
  return t;
}

bool png_size(const fs::path& png, int* w, int* h) {
  int channels = 0;
  unsigned char* data = stbi_load(png.c_str(), w, h, &channels, 3);
  if (!data) return false;
  stbi_image_free(data);
  return true;
}

// Types a path into the file browser's name field (focused when it opens), waits for the app to
// hold it, and confirms it with Enter.
void type_path(const Driver& d, const fs::path& path) {
  ASSERT_TRUE(d.wait([](const UiState& u) { return u.get("popup") == "file browser"; }))
      << describe(d.last());
  ASSERT_TRUE(d.type(path.string()));
  ASSERT_TRUE(d.wait([&](const UiState& u) { return u.get("file_browser.name") == path.string(); }))
      << describe(d.last());
  ASSERT_TRUE(d.enter_until([](const UiState& u) { return u.get("popup") != "file browser"; }));
}

// File > Export screenshot... (or another File menu item), then the path typed into the file
// browser and confirmed with Enter.
void export_window(const Driver& d, const fs::path& png,
                   const std::string& item = "menu.file.screenshot") {
  ASSERT_TRUE(d.click("menu.file"));
  ASSERT_TRUE(d.click(item)) << describe(d.last());
  type_path(d, png);
  // The app says so once the file is written whole.
  ASSERT_TRUE(d.wait(
      [&](const UiState& u) {
        return u.get("status").rfind("Saved", 0) == 0 &&
               u.get("status").find(png.string()) != std::string::npos;
      },
      15))
      << "no screenshot at " << png << "\n"
      << describe(d.last());
}

TEST(LabGui, OpensASessionComparesTwoSelectedRunsAndExportsTheWindow) {
  REQUIRE_DISPLAY_AND_XDOTOOL();
  DisplayInputLock input;
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path session = dir / "post.fsdb";
  fs::copy_file(FUSIONSCOPE_SAMPLE, session);
  const fs::path state = dir / "state.txt";
  App app({}, dir, state);
  ASSERT_TRUE(app.started());
  Driver d(app, state);
  UiState s;
  ASSERT_TRUE(d.wait([](const UiState& u) { return u.has("session"); }, 20, &s));

  // Open it through Ctrl+O and the file browser (its name field has the focus).
  ASSERT_TRUE(d.key("ctrl+o"));
  type_path(d, session);
  ASSERT_TRUE(
      d.wait([&](const UiState& u) { return u.get("session") == session.string(); }, 15, &s))
      << describe(s);

  // Two runs of the sample: click one, Ctrl-click the other.
  const std::string a = "4", b = "7";
  ASSERT_TRUE(d.click("runs.row." + a, {}, 60));
  ASSERT_TRUE(d.click("runs.row." + b, "ctrl", 60));
  ASSERT_TRUE(d.wait(
      [&](const UiState& u) {
        return u.get("selected") == a + "," + b && u.get("comparison") == a + "," + b;
      },
      10, &s))
      << describe(s);

  ASSERT_TRUE(d.click("tab.Comparison"));
  ASSERT_TRUE(d.wait([](const UiState& u) { return u.get("view") == "comparison"; }, 10, &s))
      << describe(s);

  const fs::path png = dir / "comparison.png";
  export_window(d, png);
  int w = 0, h = 0;
  ASSERT_TRUE(png_size(png, &w, &h));
  EXPECT_GE(w, 640);
  EXPECT_GE(h, 400);
  ASSERT_TRUE(
      d.wait([](const UiState& u) { return u.get("status").rfind("Saved the window to", 0) == 0; },
             10, &s))
      << describe(s);
  EXPECT_EQ(s.get("comparison"), a + "," + b);  // still the two runs picked

  // File > Export view...: the comparison panel alone, cropped out of the window.
  const fs::path view_png = dir / "comparison-view.png";
  export_window(d, view_png, "menu.file.view");
  int vw = 0, vh = 0;
  ASSERT_TRUE(png_size(view_png, &vw, &vh));
  EXPECT_LE(vw, w);
  EXPECT_LT(vh, h);  // the runs table and menu bar are above the panel
  EXPECT_GE(vh, h / 3);
  ASSERT_TRUE(d.wait(
      [](const UiState& u) { return u.get("status").rfind("Saved the view to", 0) == 0; }, 10, &s))
      << describe(s);

  EXPECT_TRUE(app.running());
  d.key("ctrl+q");
  EXPECT_EQ(app.wait_exit(15.0), 0);
}

TEST(LabGui, AnInvalidSizeIsRefusedWithTheReasonAndRunStaysDisabled) {
  REQUIRE_DISPLAY_AND_XDOTOOL();
  DisplayInputLock input;
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path session = dir / "lab.fsdb";
  fusionscope::storage::SessionStore::create(session, {});
  const fs::path state = dir / "state.txt";
  App app({session.string()}, dir, state);
  ASSERT_TRUE(app.started());
  Driver d(app, state);
  UiState s;
  ASSERT_TRUE(d.click("tab.Lab"));
  ASSERT_TRUE(d.wait(
      [](const UiState& u) { return u.get("view") == "lab" && u.has_item("lab.rows"); }, 10, &s))
      << describe(s);
  // The post's GeGLU is valid: nothing but (here) the missing GPU stands in the way.
  EXPECT_EQ(s.get("lab.refusal_codes").find("invalid-config"), std::string::npos);

  // Click the rows box (its text is selected on activation) and type 0.
  ASSERT_TRUE(d.click("lab.rows"));
  ASSERT_TRUE(d.type("0"));
  ASSERT_TRUE(d.wait(
      [](const UiState& u) {
        return u.get("lab.refusal_codes").find("invalid-config") != std::string::npos;
      },
      10, &s))
      << describe(s);
  EXPECT_EQ(s.get("lab.run_enabled"), "0");
  EXPECT_NE(s.get("lab.refusals").find("rows must be positive (got 0)"), std::string::npos);

  // The picture of the refusal, through the app's own export.
  const fs::path png = dir / "refused.png";
  export_window(d, png);

  // Back to a valid size: the refusal goes away.
  ASSERT_TRUE(d.click("lab.rows"));
  ASSERT_TRUE(d.type("4096"));
  ASSERT_TRUE(d.wait(
      [](const UiState& u) {
        return u.has("lab.refusal_codes") &&
               u.get("lab.refusal_codes").find("invalid-config") == std::string::npos;
      },
      10, &s))
      << describe(s);
  EXPECT_TRUE(app.running());
  d.key("ctrl+q");
  EXPECT_EQ(app.wait_exit(15.0), 0);
}

// The headless lab refuses to run without a session to write, into the sample, and (without a
// GPU) at all, each with its reason; a session it created for nothing is removed again.
TEST(LabHeadless, WithoutAGpuTheRunIsRefusedWithTheReason) {
  const char* display = std::getenv("DISPLAY");
  if (!display || !*display) GTEST_SKIP() << "needs an X display: run under xvfb-run";
  const fs::path dir = fusionscope::testing::scratch_dir();
  auto run = [&](const std::string& args) {
    const fs::path err = dir / "stderr.txt";
    const int status = std::system(
        ("'" + std::string(FUSIONSCOPE_EXE) + "' screenshot " + args + " 2> '" + err.string() + "'")
            .c_str());
    std::ifstream in(err);
    std::stringstream text;
    text << in.rdbuf();
    return std::make_pair(WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str());
  };
  const auto [no_session, e1] = run("--lab geglu-post --out '" + (dir / "x.png").string() + "'");
  EXPECT_EQ(no_session, 2) << e1;
  const auto [sample, e2] = run("'" + std::string(FUSIONSCOPE_SAMPLE) +
                                "' --lab geglu-post --out '" + (dir / "x.png").string() + "'");
  EXPECT_EQ(sample, 1);
  EXPECT_NE(e2.find("read-only"), std::string::npos) << e2;

  if (std::system("nvidia-smi -L > /dev/null 2>&1") == 0) GTEST_SKIP() << "a GPU is present";
  const fs::path png = dir / "lab.png";
  const auto [code, err] =
      run("'" + (dir / "new.fsdb").string() + "' --lab geglu-post --out '" + png.string() + "'");
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("no CUDA device: viewing only"), std::string::npos) << err;
  int w = 0, h = 0;
  EXPECT_TRUE(png_size(png, &w, &h));  // the panel with its refusal
  // The session --lab created holds no run: it is not left behind, nor its journals.
  for (const char* suffix : {"", "-wal", "-shm"})
    EXPECT_FALSE(fs::exists(dir / (std::string("new.fsdb") + suffix))) << suffix;
}

// Without any X display, screenshots render through EGL (Mesa's software renderer here, the
// GPU's driver on a GPU server).
TEST(LabHeadless, ScreenshotsRenderWithoutADisplayThroughEgl) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path png = dir / "egl.png";
  const fs::path err = dir / "stderr.txt";
  const std::string cmd = "env -u DISPLAY FUSIONSCOPE_RENDER=egl '" + std::string(FUSIONSCOPE_EXE) +
                          "' screenshot '" + std::string(FUSIONSCOPE_SAMPLE) +
                          "' --view lab --size 1280x800 --out '" + png.string() + "' 2> '" +
                          err.string() + "'";
  const int status = std::system(cmd.c_str());
  std::ifstream in(err);
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().find("cannot render without a display") != std::string::npos)
    GTEST_SKIP() << "no EGL here: " << text.str();
  ASSERT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0) << text.str();
  int w = 0, h = 0;
  ASSERT_TRUE(png_size(png, &w, &h));
  EXPECT_EQ(w, 1280);
  EXPECT_EQ(h, 800);
}

}  // namespace
