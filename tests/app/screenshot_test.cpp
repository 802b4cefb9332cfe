// `fusionscope screenshot` on the sample session, one test per view: the PNG has the requested
// size and shows something (pixel variance, many distinct colours), the app's state probe says
// the view asked for was drawn (and no error popup instead), and bad input is refused with a
// message. Needs an X display (Xvfb is fine); skips without one.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <stb_image.h>

#include "app_process.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;

#define REQUIRE_DISPLAY()                                                                      \
  do {                                                                                         \
    const char* display = std::getenv("DISPLAY");                                              \
    if (!display || !*display)                                                                 \
      GTEST_SKIP() << "needs an X display: run under xvfb-run (scripts/setup.sh --test does)"; \
  } while (0)

struct Result {
  int exit_code = -1;
  std::string err;
};

// Runs `fusionscope screenshot ARGS` with the state probe writing to dir/state.txt; `shell`
// comes first on the shell's command line (a limit, say).
Result run_screenshot(const std::string& args, const fs::path& dir, const std::string& shell = "") {
  const fs::path err = dir / "stderr.txt";
  const std::string cmd = shell + "FUSIONSCOPE_UI_STATE='" + (dir / "state.txt").string() + "' '" +
                          FUSIONSCOPE_EXE + "' screenshot " + args + " 2> '" + err.string() + "'";
  const int status = std::system(cmd.c_str());
  Result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  return r;
}

std::string quoted(const fs::path& p) {
  return "'" + p.string() + "'";
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct PngFacts {
  int width = 0, height = 0;
  double luma_variance = 0;
  size_t colours = 0;  // distinct colours, quantized to 4 bits a channel
};

PngFacts inspect(const fs::path& png) {
  PngFacts f;
  int channels = 0;
  unsigned char* data = stbi_load(png.c_str(), &f.width, &f.height, &channels, 3);
  if (!data) return f;
  double sum = 0, sum2 = 0;
  std::set<int> colours;
  const size_t n = static_cast<size_t>(f.width) * static_cast<size_t>(f.height);
  for (size_t i = 0; i < n; ++i) {
    const unsigned char* p = data + 3 * i;
    const double y = 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2];
    sum += y;
    sum2 += y * y;
    colours.insert((p[0] >> 4) << 8 | (p[1] >> 4) << 4 | (p[2] >> 4));
  }
  stbi_image_free(data);
  const double mean = sum / static_cast<double>(n);
  f.luma_variance = sum2 / static_cast<double>(n) - mean * mean;
  f.colours = colours.size();
  return f;
}

class ScreenshotView : public ::testing::TestWithParam<std::string> {};

TEST_P(ScreenshotView, HasTheSizeAndIsNotBlank) {
  REQUIRE_DISPLAY();
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path png = dir / "view.png";
  const std::string view = GetParam();
  std::string args = quoted(FUSIONSCOPE_SAMPLE) + " --out " + quoted(png) + " --size 1280x800";
  if (view != "window") args += " --view " + view;
  // The two GeGLU variants: the timeline shows both, the comparison compares them.
  args += " --runs 'geglu-post / eager','geglu-post / pointwise-fused'";
  const Result r = run_screenshot(args, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // What was drawn: the view asked for (or the whole window), the two runs, no popup.
  const fusionscope::testing::UiState state =
      fusionscope::testing::read_ui_state(dir / "state.txt");
  EXPECT_EQ(state.get("solo"), view == "window" ? "" : view);
  EXPECT_EQ(state.get("session"), FUSIONSCOPE_SAMPLE);
  const std::string selected = state.get("selected");
  EXPECT_EQ(std::count(selected.begin(), selected.end(), ','), 1) << selected;
  EXPECT_EQ(state.get("popup"), "");
  EXPECT_EQ(state.get("last_error"), "");
  const PngFacts f = inspect(png);
  EXPECT_EQ(f.width, 1280);
  EXPECT_EQ(f.height, 800);
  EXPECT_GT(f.luma_variance, 50.0) << "the image is nearly uniform";
  EXPECT_GE(f.colours, 24u) << "too few colours for a drawn view";
}

INSTANTIATE_TEST_SUITE_P(Views, ScreenshotView,
                         ::testing::Values("window", "timeline", "comparison", "stats", "runs",
                                           "lab", "bandwidth", "roofline", "advice"),
                         [](const auto& param_info) { return param_info.param; });

TEST(Screenshot, SizeIsHonoured) {
  REQUIRE_DISPLAY();
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path png = dir / "small.png";
  const Result r = run_screenshot(
      quoted(FUSIONSCOPE_SAMPLE) + " --out " + quoted(png) + " --size 640x400 --view timeline",
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const PngFacts f = inspect(png);
  EXPECT_EQ(f.width, 640);
  EXPECT_EQ(f.height, 400);
}

// Bad input is refused before any window opens, so these run without a display too.
TEST(Screenshot, CorruptSessionIsAnErrorWithTheReason) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path bad = dir / "garbage.fsdb";
  std::ofstream(bad) << "this is not a session file";
  const Result r = run_screenshot(quoted(bad) + " --out " + quoted(dir / "x.png"), dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("garbage.fsdb"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "x.png"));
}

TEST(Screenshot, UnknownRunIsNamed) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const Result r = run_screenshot(
      quoted(FUSIONSCOPE_SAMPLE) + " --out " + quoted(dir / "x.png") + " --runs no-such-run", dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no-such-run"), std::string::npos) << r.err;
}

TEST(Screenshot, BadSizeAndViewAreUsageErrors) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const std::string out = " --out " + quoted(dir / "x.png");
  EXPECT_EQ(run_screenshot(quoted(FUSIONSCOPE_SAMPLE) + out + " --size 12x", dir).exit_code, 2);
  EXPECT_EQ(run_screenshot(quoted(FUSIONSCOPE_SAMPLE) + out + " --size 0x0", dir).exit_code, 2);
  EXPECT_EQ(run_screenshot(quoted(FUSIONSCOPE_SAMPLE) + out + " --size 100000x10", dir).exit_code,
            2);
  EXPECT_NE(run_screenshot(quoted(FUSIONSCOPE_SAMPLE) + out + " --view nope", dir).exit_code, 0);
}

// The picture never replaces the session or another file by mistake (checked before a window
// opens, so without a display too): the session and the existing file stay byte for byte.
TEST(Screenshot, NeverWritesOverTheSessionOrAnExistingFile) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path session = dir / "s.fsdb";
  fs::copy_file(FUSIONSCOPE_SAMPLE, session);
  const std::string before = read_file(session);
  Result r = run_screenshot(quoted(session) + " --out " + quoted(session), dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("s.fsdb"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(session), before);
  // --force does not make a session a picture either.
  r = run_screenshot(quoted(session) + " --out " + quoted(session) + " --force", dir);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(read_file(session), before);

  const fs::path existing = dir / "old.png";
  std::ofstream(existing) << "keep me";
  r = run_screenshot(quoted(session) + " --out " + quoted(existing), dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(existing), "keep me");
}

// Over the file size limit the picture cannot be written: exit 1 with the reason, the old file
// kept, nothing half-written left beside it; --force replaces it once the picture fits.
TEST(Screenshot, AWriteThatFailsIsAFailureAndLeavesTheOldFile) {
  REQUIRE_DISPLAY();
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path out_dir = dir / "out";
  fs::create_directories(out_dir);
  const fs::path png = out_dir / "view.png";
  std::ofstream(png) << "old";
  const std::string args =
      quoted(FUSIONSCOPE_SAMPLE) + " --out " + quoted(png) + " --size 640x400 --force";
  // ulimit -f counts 1024-byte blocks: 4 KiB is far less than the picture.
  const Result r = run_screenshot(args, dir, "ulimit -f 4; ");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("file size limit"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("writing " + png.string() + " failed"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(".partial-"), std::string::npos) << "names the temporary file: " << r.err;
  EXPECT_EQ(read_file(png), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(out_dir), fs::directory_iterator()), 1);

  const Result ok = run_screenshot(args, dir);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(inspect(png).width, 640);
}

}  // namespace
