// `cmake --install` into a scratch prefix, as the .deb lays the files out: the app, its injection
// library when the build has one, the sample session, the desktop entry and the icon; and the
// installed app opens the installed sample (asked through its state probe, app/ui/src/ui_probe.h).
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "test_paths.h"

namespace {

namespace fs = std::filesystem;

std::string quoted(const fs::path& p) {
  return "'" + p.string() + "'";
}

int run(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Installs the build into `prefix` (quietly); true when cmake says it worked.
bool install_into(const fs::path& prefix) {
  return run(std::string("'" FUSIONSCOPE_CMAKE "' --install '" FUSIONSCOPE_BUILD_DIR
                         "' --prefix ") +
             quoted(prefix) + " > /dev/null") == 0;
}

TEST(Install, PutsTheAppItsSampleDesktopEntryAndIconInPlace) {
  const fs::path prefix = fusionscope::testing::scratch_dir() / "prefix";
  ASSERT_TRUE(install_into(prefix));
  EXPECT_TRUE(fs::is_regular_file(prefix / "bin" / "fusionscope"));
  EXPECT_TRUE(fs::is_regular_file(prefix / "share" / "fusionscope" / "sample.fsdb"));
  // Program capture and the Lab's PyTorch variants come with CUDA.
  EXPECT_EQ(fs::is_regular_file(prefix / "lib" / "libfusionscope_inject.so"),
            FUSIONSCOPE_HAS_INJECT_LIBRARY != 0);
  EXPECT_EQ(fs::is_regular_file(prefix / "share" / "fusionscope" / "torch_mlp.py"),
            FUSIONSCOPE_HAS_INJECT_LIBRARY != 0);
  const fs::path icons = prefix / "share" / "icons" / "hicolor";
  EXPECT_TRUE(fs::is_regular_file(icons / "scalable" / "apps" / "fusionscope.svg"));
  EXPECT_TRUE(fs::is_regular_file(icons / "256x256" / "apps" / "fusionscope.png"));
  const std::string desktop = read_text(prefix / "share" / "applications" / "fusionscope.desktop");
  EXPECT_NE(desktop.find("[Desktop Entry]"), std::string::npos) << desktop;
  EXPECT_NE(desktop.find("\nExec=fusionscope %f\n"), std::string::npos) << desktop;
  EXPECT_NE(desktop.find("\nIcon=fusionscope\n"), std::string::npos) << desktop;
  // The installed command line works on its own files.
  EXPECT_EQ(run(quoted(prefix / "bin" / "fusionscope") + " report " +
                quoted(prefix / "share" / "fusionscope" / "sample.fsdb") + " > /dev/null"),
            0);
}

TEST(Install, TheInstalledAppOpensTheInstalledSample) {
  const char* display = std::getenv("DISPLAY");
  if (!display || !*display) GTEST_SKIP() << "needs an X display: run under xvfb-run";
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path prefix = dir / "prefix";
  ASSERT_TRUE(install_into(prefix));
  const fs::path state = dir / "state.txt";
  // No session named and no override: the app looks for its sample, first beside itself.
  ASSERT_EQ(run("env -u FUSIONSCOPE_SAMPLE_SESSION FUSIONSCOPE_UI_STATE=" + quoted(state) + " " +
                quoted(prefix / "bin" / "fusionscope") + " screenshot --out " +
                quoted(dir / "shot.png") + " > /dev/null 2>&1"),
            0);
  const std::string probe = read_text(state);
  const fs::path sample = fs::canonical(prefix / "share" / "fusionscope" / "sample.fsdb");
  EXPECT_NE(probe.find("session=" + sample.string() + "\n"), std::string::npos) << probe;
}

}  // namespace
