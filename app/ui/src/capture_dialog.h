// File > Capture a program...: a user's command captured through the injection library into the
// open session (lab/program_capture.h), on a worker thread with progress, elapsed time and Stop.
// One self-contained window: its state lives here, the app calls draw_capture_dialog() each frame.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace fusionscope::ui {

struct AppState;

struct CaptureDialogState {
  bool open = false;
  bool open_requested = false;
  // The form.
  char command[1024] = "";
  char working_directory[512] = "";
  char environment[2048] = "";
  char run_name[256] = "";
  char iteration_range[128] = "";
  int warmup = 0;
  char capture_range[256] = "";
  float delay_s = 0;
  float duration_s = 0;
  bool counters = false;
  char kernel_filter[256] = "";
  int kernel_limit = 0;
  bool pm_sampling = false;
  std::string form_error;  // why the form cannot run, when Capture was pressed
  // The capture in progress, shared with its worker.
  struct Job {
    std::atomic<bool> stop{false};
    std::atomic<bool> done{false};
    std::mutex mu;
    std::string line;  // the latest progress line
    double elapsed_s = 0;
    std::size_t processes = 0;
    std::string stage = "starting";
    std::string summary;  // when done: what happened
    int64_t run_id = 0;
    std::chrono::steady_clock::time_point started;
  };
  std::shared_ptr<Job> job;
  std::thread worker;
  std::string last_summary;
  ~CaptureDialogState();
  bool running() const { return job && !job->done.load(); }
};

// Opens the window (File menu). Refuses with a message when no writable session is open.
void open_capture_dialog(AppState& app);
// The File menu item; disabled with the reason as its tooltip when it cannot run.
void draw_capture_menu_item(AppState& app);
void draw_capture_dialog(AppState& app);

// What the window's buttons and every frame do, without drawing (tests call them directly):
// starts the form's capture on the worker (false with capture_program.form_error when it cannot),
// and takes a finished capture's run into the open session.
bool start_capture_program(AppState& app);
void sync_capture_program(AppState& app);

}  // namespace fusionscope::ui
