// The interactive app as a child process for `gui` tests, driven with xdotool; and, when the app
// runs with $FUSIONSCOPE_UI_STATE set, what it says it shows (app/ui/src/ui_probe.h).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace fusionscope::testing {

#define REQUIRE_DISPLAY_AND_XDOTOOL()                                                          \
  do {                                                                                         \
    const char* display = std::getenv("DISPLAY");                                              \
    if (!display || !*display)                                                                 \
      GTEST_SKIP() << "needs an X display: run under xvfb-run (scripts/setup.sh --test does)"; \
    if (std::system("command -v xdotool > /dev/null 2>&1") != 0)                               \
      GTEST_SKIP() << "needs xdotool to send input";                                           \
  } while (0)

// Keyboard focus belongs to the whole display: tests that type into a window hold this lock (a
// file lock, so test processes that ctest -j starts side by side take turns).
class DisplayInputLock {
 public:
  DisplayInputLock() {
    const std::string path =
        (std::filesystem::temp_directory_path() / "fusionscope-x-input.lock").string();
    fd_ = ::open(path.c_str(), O_CREAT | O_RDWR, 0666);
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~DisplayInputLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  DisplayInputLock(const DisplayInputLock&) = delete;
  DisplayInputLock& operator=(const DisplayInputLock&) = delete;

 private:
  int fd_ = -1;
};

// The app as a child process; killed if a test leaves it running.
class App {
 public:
  // `home` becomes XDG_CONFIG_HOME (the recent-files list of the person running the tests
  // stays); `state`, when given, becomes FUSIONSCOPE_UI_STATE.
  App(const std::vector<std::string>& args, const std::filesystem::path& home,
      const std::filesystem::path& state = {}) {
    std::vector<std::string> argv_s = {FUSIONSCOPE_EXE};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    setenv("XDG_CONFIG_HOME", home.c_str(), 1);
    if (state.empty())
      unsetenv("FUSIONSCOPE_UI_STATE");
    else
      setenv("FUSIONSCOPE_UI_STATE", state.c_str(), 1);
    if (posix_spawn(&pid_, FUSIONSCOPE_EXE, nullptr, nullptr, argv.data(), environ) != 0) pid_ = -1;
    unsetenv("FUSIONSCOPE_UI_STATE");
  }
  ~App() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  App(const App&) = delete;
  App& operator=(const App&) = delete;
  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // The exit status once it ends within `seconds`, or -1.
  int wait_exit(double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    do {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } while (std::chrono::steady_clock::now() < deadline);
    return -1;
  }
  bool running() { return wait_exit(0.0) == -1 && !exited_; }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
};

// Waits for the app's window (found by its process id), focuses it and runs xdotool commands
// (%1 is the window).
inline bool send_input(const App& app, const std::string& commands) {
  const std::string cmd = "timeout 20 xdotool search --all --sync --onlyvisible --pid " +
                          std::to_string(app.pid()) + " --name fusionscope windowfocus --sync %1 " +
                          commands + " > /dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

// Ctrl+Q. The window may be gone before xdotool releases the keys, which it reports as an
// error: the exit status of the app is what tells.
inline void send_quit(const App& app) {
  send_input(app, "key ctrl+q");
}

// What the app wrote to $FUSIONSCOPE_UI_STATE: key=value lines and widget rectangles.
struct UiState {
  std::map<std::string, std::string> values;
  std::map<std::string, std::array<float, 4>> items;  // x, y, w, h in window pixels
  bool has(const std::string& key) const { return values.count(key) > 0; }
  std::string get(const std::string& key) const {
    auto it = values.find(key);
    return it == values.end() ? std::string() : it->second;
  }
  // A widget laid out on screen (a first frame may report empty rectangles).
  bool has_item(const std::string& name) const {
    auto it = items.find(name);
    return it != items.end() && it->second[2] > 0 && it->second[3] > 0;
  }
  // The centre of an item, as "X Y" for xdotool's mousemove.
  std::string centre(const std::string& name, float dx = 0) const {
    const auto& r = items.at(name);
    return std::to_string(static_cast<int>(r[0] + (dx > 0 ? dx : r[2] * 0.5f))) + " " +
           std::to_string(static_cast<int>(r[1] + r[3] * 0.5f));
  }
};

inline UiState read_ui_state(const std::filesystem::path& file) {
  UiState s;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("item ", 0) == 0) {
      std::istringstream fields(line.substr(5));
      std::string name;
      std::array<float, 4> r{};
      if (fields >> name >> r[0] >> r[1] >> r[2] >> r[3]) s.items[name] = r;
      continue;
    }
    const auto eq = line.find('=');
    if (eq != std::string::npos) s.values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return s;
}

// Polls the state file until `ok` holds (true) or `seconds` pass (false); *last gets the last
// state read.
inline bool wait_for_ui(const std::filesystem::path& file,
                        const std::function<bool(const UiState&)>& ok, double seconds,
                        UiState* last = nullptr) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  UiState s;
  do {
    s = read_ui_state(file);
    if (ok(s)) {
      if (last) *last = s;
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (std::chrono::steady_clock::now() < deadline);
  if (last) *last = s;
  return false;
}

// Drives the app's window with xdotool and paces every step on what the app says it sees (the
// probe's `input=` line: the mouse position, held modifiers, letters and buttons), so that a press
// is never released before a frame has seen it, without sleeping.
class Driver {
 public:
  Driver(const App& app, std::filesystem::path state) : app_(app), state_(std::move(state)) {}

  // The state once `ok` holds (within `seconds`), else the last state read and false.
  bool wait(const std::function<bool(const UiState&)>& ok, double seconds = 10,
            UiState* last = nullptr) const {
    return wait_for_ui(state_, ok, seconds, last ? last : &last_);
  }
  const UiState& last() const { return last_; }

  // Moves the pointer to (x, y) in the window and waits for the app to see it there.
  bool move(int x, int y) const {
    const std::string at = std::to_string(x) + " " + std::to_string(y);
    // Two moves: a pointer already resting on the target would send no motion to see.
    if (!send_input(app_, "mousemove --window %1 " + std::to_string(x + 3) + " " +
                              std::to_string(y + 2) + " mousemove --window %1 " + at))
      return false;
    return wait([&](const UiState& u) { return u.get("input").rfind(at, 0) == 0; });
  }
  // Holds `key` (an xdotool key name) until the app sees `seen` among the held keys.
  bool key_down(const std::string& key, const std::string& seen) const {
    return send_input(app_, "keydown " + key) &&
           wait([&](const UiState& u) { return held(u, seen); });
  }
  bool key_up(const std::string& key, const std::string& seen) const {
    return send_input(app_, "keyup " + key) &&
           wait([&](const UiState& u) { return !held(u, seen); });
  }
  // A button pressed and released, each seen by the app.
  bool click_here(int button = 1) const {
    const std::string b = "mouse" + std::to_string(button);
    return send_input(app_, "mousedown " + std::to_string(button)) &&
           wait([&](const UiState& u) { return held(u, b); }) &&
           send_input(app_, "mouseup " + std::to_string(button)) &&
           wait([&](const UiState& u) { return !held(u, b); });
  }
  // A click at (x, y), with `modifier` ("ctrl", "shift") held across it.
  bool click(int x, int y, const std::string& modifier = {}) const {
    if (!move(x, y)) return false;
    if (modifier.empty()) return click_here();
    return key_down(modifier, modifier) && click_here() && key_up(modifier, modifier);
  }
  // A click at the centre of a widget the app reported (or `dx` pixels into it). The pointer is
  // aimed again while the widget moves (a layout settling over the first frames).
  bool click(const std::string& item, const std::string& modifier = {}, float dx = 0) const {
    for (int attempt = 0; attempt < 5; ++attempt) {
      UiState s;
      if (!wait([&](const UiState& u) { return u.has_item(item); }, 10, &s)) return false;
      int x = 0, y = 0;
      std::istringstream(s.centre(item, dx)) >> x >> y;
      if (!move(x, y)) return false;
      if (!inside(last_, item, x, y)) continue;
      if (modifier.empty()) return click_here();
      return key_down(modifier, modifier) && click_here() && key_up(modifier, modifier);
    }
    return false;
  }
  // A drag with `button` from (x0, y0) to (x1, y1), each step seen by the app.
  bool drag(int x0, int y0, int x1, int y1, int button = 1) const {
    const std::string b = "mouse" + std::to_string(button);
    return move(x0, y0) && send_input(app_, "mousedown " + std::to_string(button)) &&
           wait([&](const UiState& u) { return held(u, b); }) &&
           move((x0 + x1) / 2, (y0 + y1) / 2) && move(x1, y1) &&
           send_input(app_, "mouseup " + std::to_string(button)) &&
           wait([&](const UiState& u) { return !held(u, b); });
  }
  // Wheel steps (button 4 up, 5 down) at the pointer.
  bool wheel(int steps) const {
    std::string cmd;
    for (int i = 0; i < std::abs(steps); ++i) cmd += steps > 0 ? "click 4 " : "click 5 ";
    return send_input(app_, cmd);
  }
  // Text typed into the text field that has the keyboard, once the app says one has it.
  bool type(const std::string& text) const {
    return wait([](const UiState& u) { return held(u, "typing"); }) &&
           send_input(app_, "type --delay 15 '" + text + "'");
  }
  // Enter held until `done` holds (a popup closed, a field confirmed), then released.
  bool enter_until(const std::function<bool(const UiState&)>& done) const {
    return send_input(app_, "keydown Return") && wait(done) && send_input(app_, "keyup Return");
  }
  // A key tapped; the app's key callback sees it (Ctrl+Q, Ctrl+O, Ctrl+F).
  bool key(const std::string& keys) const { return send_input(app_, "key " + keys); }

 private:
  static bool inside(const UiState& u, const std::string& item, int x, int y) {
    if (!u.has_item(item)) return false;
    const auto& r = u.items.at(item);
    const float fx = static_cast<float>(x), fy = static_cast<float>(y);
    return fx >= r[0] && fx < r[0] + r[2] && fy >= r[1] && fy < r[1] + r[3];
  }
  static bool held(const UiState& u, const std::string& what) {
    const std::string input = u.get("input") + " ";
    return input.find(" " + what + " ") != std::string::npos;
  }
  const App& app_;
  std::filesystem::path state_;
  mutable UiState last_;
};

}  // namespace fusionscope::testing
