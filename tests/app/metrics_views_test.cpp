// `fusionscope screenshot` of the memory-bandwidth views on a session with hardware counters
// (metrics_fixture.h): the bandwidth bars, the roofline's points and the PM chart rows under the
// timeline are drawn in their colours; a run without counters draws no bars. Needs an X display
// (Xvfb is fine); skips without one.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <stb_image.h>

#include "metrics_fixture.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;

#define REQUIRE_DISPLAY()                                                                      \
  do {                                                                                         \
    const char* display = std::getenv("DISPLAY");                                              \
    if (!display || !*display)                                                                 \
      GTEST_SKIP() << "needs an X display: run under xvfb-run (scripts/setup.sh --test does)"; \
  } while (0)

struct Rgb {
  int r, g, b;
};

// Pixels within `tolerance` of each colour, per colour.
struct Image {
  int width = 0, height = 0;
  std::vector<unsigned char> rgb;
  size_t count(Rgb c, int tolerance = 6) const {
    size_t n = 0;
    for (size_t i = 0; i + 2 < rgb.size(); i += 3)
      if (std::abs(rgb[i] - c.r) <= tolerance && std::abs(rgb[i + 1] - c.g) <= tolerance &&
          std::abs(rgb[i + 2] - c.b) <= tolerance)
        ++n;
    return n;
  }
};

fs::path session() {
  static const fs::path p = [] {
    const fs::path path = fusionscope::testing::scratch_dir() / "metrics.fsdb";
    fusionscope::testing::write_metrics_session(path);
    return path;
  }();
  return p;
}

// Renders a view; returns the image, or fails the test with the command's stderr.
Image shot(const std::string& view, const std::string& runs, const std::string& extra = "") {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path png = dir / (view + ".png"), err = dir / "stderr.txt";
  const std::string cmd = std::string("'") + FUSIONSCOPE_EXE + "' screenshot '" +
                          session().string() + "' --out '" + png.string() +
                          "' --size 1280x800 --view " + view + " --runs " + runs + " " + extra +
                          " 2> '" + err.string() + "'";
  const int status = std::system(cmd.c_str());
  Image image;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream in(err);
    std::stringstream ss;
    ss << in.rdbuf();
    ADD_FAILURE() << cmd << "\n" << ss.str();
    return image;
  }
  int channels = 0;
  unsigned char* data = stbi_load(png.c_str(), &image.width, &image.height, &channels, 3);
  if (!data) {
    ADD_FAILURE() << "cannot read " << png;
    return image;
  }
  image.rgb.assign(data, data + static_cast<size_t>(image.width) * image.height * 3);
  stbi_image_free(data);
  return image;
}

constexpr Rgb kRead{86, 156, 230}, kWrite{235, 150, 70}, kBandwidth{120, 200, 140};

TEST(MetricsViews, BandwidthBarsOfEachKernel) {
  REQUIRE_DISPLAY();
  const Image img = shot("bandwidth", "'geglu-post / eager','geglu-post / gated-gemm'");
  EXPECT_EQ(img.width, 1280);
  EXPECT_EQ(img.height, 800);
  // Seven kernels: each a read, a write and a bandwidth bar of many pixels.
  EXPECT_GT(img.count(kRead), 7u * 100);
  EXPECT_GT(img.count(kWrite), 7u * 100);
  EXPECT_GT(img.count(kBandwidth), 5u * 100);
}

TEST(MetricsViews, ARunWithoutCountersDrawsNoBars) {
  REQUIRE_DISPLAY();
  const Image img = shot("bandwidth", "'geglu-post / pointwise-fused'");
  ASSERT_EQ(img.width, 1280);
  // Only the legend's small keys: no bars.
  EXPECT_LT(img.count(kRead), 100u);
  EXPECT_LT(img.count(kWrite), 100u);
}

TEST(MetricsViews, RooflinePointsOfTheVariants) {
  REQUIRE_DISPLAY();
  // One run selected: it and the other variants of its configuration.
  const Image img = shot("roofline", "'geglu-post / eager'");
  ASSERT_EQ(img.width, 1280);
  EXPECT_GT(img.count({240, 120, 90}, 4), 5u * 30);  // eager's five kernels
  EXPECT_GT(img.count({90, 170, 240}, 4), 2u * 30);  // the gated GEMM's two
}

TEST(MetricsViews, SampledBandwidthUnderTheTimeline) {
  REQUIRE_DISPLAY();
  const Image img = shot("timeline", "'geglu-post / eager'", "--select activation");
  ASSERT_EQ(img.width, 1280);
  // The chart's read and write areas, blended over the row's background.
  EXPECT_GT(img.count(kRead, 24), 1000u);
  EXPECT_GT(img.count(kWrite, 24), 1000u);
}

}  // namespace
