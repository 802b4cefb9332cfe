// File > Import PyTorch trace without a display: the import runs on its worker thread while
// frames are drawn (ImGui with no renderer), the progress popup is up meanwhile (state probe),
// and at the end the new session beside the trace is open, or the error is shown and nothing is
// left behind.
#include <chrono>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <imgui.h>

#include "app.h"
#include "test_paths.h"
#include "trace_import.h"

namespace fusionscope::ui {
namespace {

namespace fs = std::filesystem;

// An ImGui context that draws into nothing: enough to run the app's frame logic.
class Frames {
 public:
  Frames() {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(1280, 800);
    io.IniFilename = nullptr;
    unsigned char* pixels = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
  }
  ~Frames() { ImGui::DestroyContext(); }
  void frame(AppState& app) {
    ImGui::GetIO().DeltaTime = 1.0f / 60;
    ImGui::NewFrame();
    app.probe.open_popup.clear();
    draw_trace_import(app);
    poll_loading(app);  // the imported session opens on a worker
    ImGui::Render();
  }
  // Frames until the import has ended and its outcome is taken (at most 30 s).
  void until_done(AppState& app, bool& saw_popup) {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (trace_import_running() && std::chrono::steady_clock::now() < limit) {
      frame(app);
      saw_popup |= app.probe.open_popup == "trace import";
    }
    frame(app);  // takes the outcome
    while (poll_loading(app) && std::chrono::steady_clock::now() < limit) frame(app);
    frame(app);
  }
};

TEST(TraceImportUi, ImportsIntoASessionBesideTheTraceAndOpensIt) {
  const fs::path dir = testing::scratch_dir();
  const fs::path trace = dir / "geglu.json.gz";
  fs::copy_file(testing::torch_fixtures_dir() / "torch_geglu_64x128x768x3072_eager.json.gz", trace);
  std::ofstream(dir / "geglu.fsdb") << "taken";  // an existing file is not overwritten
  EXPECT_EQ(import_session_path(trace), dir / "geglu-2.fsdb");

  AppState app;
  Frames frames;
  start_trace_import(app, trace);
  bool saw_popup = false;
  frames.frame(app);
  saw_popup |= app.probe.open_popup == "trace import";
  frames.until_done(app, saw_popup);
  EXPECT_FALSE(trace_import_running());
  ASSERT_NE(app.session, nullptr) << app.error.message;
  EXPECT_EQ(app.session->path, dir / "geglu-2.fsdb");
  ASSERT_EQ(app.session->runs.size(), 1u);
  EXPECT_EQ(app.session->runs[0]->data.kernels.size(), 15u);
  EXPECT_NE(app.status.find("imported geglu.json.gz"), std::string::npos) << app.status;
  (void)saw_popup;  // a tiny trace may finish before the first frame shows the popup
}

TEST(TraceImportUi, ABadTraceShowsWhyAndLeavesNoSession) {
  const fs::path dir = testing::scratch_dir();
  const fs::path trace = dir / "bad.json";
  std::ofstream(trace) << R"({"traceEvents": [{"ph": "X", "cat": "kernel"}]})";
  AppState app;
  Frames frames;
  start_trace_import(app, trace);
  bool saw_popup = false;
  frames.until_done(app, saw_popup);
  EXPECT_EQ(app.session, nullptr);
  EXPECT_TRUE(app.error.open_requested);
  EXPECT_NE(app.error.message.find("none of its 1 events could be read"), std::string::npos)
      << app.error.message;
  EXPECT_FALSE(fs::exists(dir / "bad.fsdb"));
}

}  // namespace
}  // namespace fusionscope::ui
