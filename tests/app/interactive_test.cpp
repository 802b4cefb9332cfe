// The interactive app under an X display: it opens a window on a session (or on a corrupt file,
// showing an error instead of failing), takes mouse and keyboard input, and quits on Ctrl+Q.
// Input comes from xdotool. Skips without a display or without xdotool.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "test_paths.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;

#define REQUIRE_DISPLAY_AND_XDOTOOL()                                                          \
  do {                                                                                         \
    const char* display = std::getenv("DISPLAY");                                              \
    if (!display || !*display)                                                                 \
      GTEST_SKIP() << "needs an X display: run under xvfb-run (scripts/setup.sh --test does)"; \
    if (std::system("command -v xdotool > /dev/null 2>&1") != 0)                               \
      GTEST_SKIP() << "needs xdotool to send input";                                           \
  } while (0)

// The app as a child process; killed if a test leaves it running.
class App {
 public:
  explicit App(const std::vector<std::string>& args, const fs::path& home) {
    std::vector<std::string> argv_s = {FUSIONSCOPE_EXE};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    // A private config directory: the recent-files list of the person running the tests stays.
    setenv("XDG_CONFIG_HOME", home.c_str(), 1);
    if (posix_spawn(&pid_, FUSIONSCOPE_EXE, nullptr, nullptr, argv.data(), environ) != 0) pid_ = -1;
  }
  ~App() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // The exit status once it ends within `seconds`, or -1.
  int wait_exit(double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return -1;
  }
  bool running() { return wait_exit(0.0) == -1 && !exited_; }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
};

// Waits for the app's window (found by its process id), focuses it and runs xdotool commands.
bool send_input(const App& app, const std::string& commands) {
  const std::string cmd = "timeout 20 xdotool search --all --sync --onlyvisible --pid " +
                          std::to_string(app.pid()) + " --name fusionscope windowfocus --sync %1 " +
                          commands + " > /dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

// Ctrl+Q. The window may be gone before xdotool releases the keys, which it reports as an
// error: the exit status of the app is what tells.
void send_quit(const App& app) {
  send_input(app, "key ctrl+q");
}

// One test for both cases: keyboard focus is shared by the whole display, so two apps driven at
// once (ctest -j) could take each other's keys.
TEST(Interactive, TakesInputShowsErrorsAndQuitsOnCtrlQ) {
  REQUIRE_DISPLAY_AND_XDOTOOL();
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
