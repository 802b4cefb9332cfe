// File > Capture a program... without drawing: the form becomes a capture on the worker thread,
// its run lands in the open session, Stop keeps what was traced, and a form that cannot run says
// why. The stand-in target does what the injection library does (tests/profiler/inject).
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "app.h"
#include "capture_dialog.h"
#include "fusionscope/build_config.h"
#include "session_edit.h"
#include "test_paths.h"

namespace fusionscope::ui {
namespace {

namespace fs = std::filesystem;

void set(char* field, size_t size, const std::string& text) {
  std::snprintf(field, size, "%s", text.c_str());
}

// Every frame's work until the capture has been taken into the session.
void wait_for(AppState& app) {
  for (int i = 0; i < 2000 && app.capture_program.job; ++i) {
    sync_capture_program(app);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

#if FUSIONSCOPE_HAS_CUDA  // the stand-in target and the injection library are built with CUDA
TEST(CaptureDialog, TheCommandsRunLandsInTheOpenSession) {
  setenv("FUSIONSCOPE_INJECT_LIBRARY", FUSIONSCOPE_INJECT_LIBRARY, 1);
  AppState app;
  ASSERT_TRUE(create_and_open_session(app, testing::scratch_dir() / "c.fsdb"));
  CaptureDialogState& d = app.capture_program;
  set(d.command, sizeof d.command, std::string(FUSIONSCOPE_FAKE_TARGET) + " --iterations 4");
  set(d.run_name, sizeof d.run_name, "from the dialog");
  d.warmup = 1;
  ASSERT_TRUE(start_capture_program(app)) << d.form_error;
  EXPECT_TRUE(d.running());
  wait_for(app);
  ASSERT_EQ(app.session->runs.size(), 1u);
  const storage::RunInfo& info = app.session->runs[0]->data.info;
  EXPECT_EQ(info.name, "from the dialog");
  EXPECT_EQ(info.status, storage::RunStatus::kOk);
  EXPECT_EQ(info.iterations, 3);
  EXPECT_EQ(app.session->runs[0]->data.kernels.size(), 4u);
  EXPECT_NE(d.last_summary.find("4 kernels"), std::string::npos) << d.last_summary;
  EXPECT_EQ(app.status.rfind("Capture: Run ", 0), 0u) << app.status;
}

TEST(CaptureDialog, StopKeepsWhatWasTraced) {
  setenv("FUSIONSCOPE_INJECT_LIBRARY", FUSIONSCOPE_INJECT_LIBRARY, 1);
  AppState app;
  ASSERT_TRUE(create_and_open_session(app, testing::scratch_dir() / "c.fsdb"));
  CaptureDialogState& d = app.capture_program;
  set(d.command, sizeof d.command, std::string(FUSIONSCOPE_FAKE_TARGET) + " --hang");
  ASSERT_TRUE(start_capture_program(app)) << d.form_error;
  for (int i = 0; i < 2000; ++i) {
    {
      std::lock_guard lock(d.job->mu);
      if (d.job->processes > 0) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  d.job->stop = true;  // the Stop button
  wait_for(app);
  ASSERT_EQ(app.session->runs.size(), 1u);
  EXPECT_EQ(app.session->runs[0]->data.info.status, storage::RunStatus::kCancelled);
  EXPECT_EQ(app.session->runs[0]->data.kernels.size(), 3u);
}

#else
TEST(CaptureDialog, WithoutCudaTheCaptureSaysWhyAndAddsNoRun) {
  AppState app;
  ASSERT_TRUE(create_and_open_session(app, testing::scratch_dir() / "c.fsdb"));
  CaptureDialogState& d = app.capture_program;
  set(d.command, sizeof d.command, "python3 train.py");
  ASSERT_TRUE(start_capture_program(app)) << d.form_error;
  wait_for(app);
  EXPECT_FALSE(d.running());
  EXPECT_NE(app.status.find("Did not start: this fusionscope was built without CUDA"),
            std::string::npos)
      << app.status;
  EXPECT_TRUE(app.session->runs.empty());
}
#endif

TEST(CaptureDialog, AFormThatCannotRunSaysWhy) {
  AppState app;
  CaptureDialogState& d = app.capture_program;
  set(d.command, sizeof d.command, "python3 train.py");
  EXPECT_FALSE(start_capture_program(app));
  EXPECT_NE(d.form_error.find("Open or create a session first"), std::string::npos);

  ASSERT_TRUE(create_and_open_session(app, testing::scratch_dir() / "c.fsdb"));
  set(d.command, sizeof d.command, "python3 'unclosed");
  EXPECT_FALSE(start_capture_program(app));
  EXPECT_NE(d.form_error.find("unclosed"), std::string::npos) << d.form_error;
  set(d.command, sizeof d.command, "python3 train.py");
  set(d.environment, sizeof d.environment, "NOT A PAIR");
  EXPECT_FALSE(start_capture_program(app));
  EXPECT_NE(d.form_error.find("KEY=VALUE"), std::string::npos) << d.form_error;
  set(d.environment, sizeof d.environment, "");
  set(d.capture_range, sizeof d.capture_range, "step");
  d.delay_s = 2;
  EXPECT_FALSE(start_capture_program(app));
  EXPECT_NE(d.form_error.find("does not go with a delay"), std::string::npos) << d.form_error;
  EXPECT_FALSE(d.running());
}

}  // namespace
}  // namespace fusionscope::ui
