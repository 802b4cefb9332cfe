// Capturing a command end to end without a GPU: a stand-in program (fake_injected_target) does
// what the injection library does in a real one. Exit statuses, crashes, a command that never
// uses CUDA, children, stopping, and refusals before anything runs.
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "fusionscope/profiler/process_capture.h"
#include "memory_sink.h"
#include "test_paths.h"

namespace fusionscope::profiler {
namespace {

ProcessCaptureOptions options(std::vector<std::string> args) {
  ProcessCaptureOptions o;
  o.command = {FUSIONSCOPE_FAKE_TARGET};
  o.command.insert(o.command.end(), args.begin(), args.end());
  o.inject_library = FUSIONSCOPE_INJECT_LIBRARY;
  o.stop_grace_s = 0.5;
  return o;
}

TEST(ProcessCapture, TracesACommandThatExitsCleanly) {
  testing::MemorySink sink;
  const ProcessCaptureResult r = ProcessCapture(options({"--iterations", "4"})).run(sink);
  ASSERT_TRUE(r.started) << r.start_error;
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.ending(), "");
  ASSERT_EQ(r.processes.size(), 1u);
  const CapturedProcess& p = r.processes[0];
  EXPECT_TRUE(p.ended_cleanly);
  EXPECT_EQ(p.name, "fake_injected_target");
  EXPECT_EQ(p.kernels, 4u);
  EXPECT_EQ(p.iteration_prefix, "ProfilerStep#");
  EXPECT_EQ(r.trace.kernels, 4u);
  EXPECT_TRUE(r.trace.traced);
  EXPECT_EQ(r.trace.status, "");
  EXPECT_FALSE(r.no_cuda_activity());
  ASSERT_EQ(sink.kernels.size(), 4u);
  for (const auto& k : sink.kernels) EXPECT_EQ(sink.str(k.op), "aten::mm");
  EXPECT_GT(r.wall_s, 0);
}

TEST(ProcessCapture, ANonZeroExitIsReportedAndTheTraceKept) {
  testing::MemorySink sink;
  const ProcessCaptureResult r = ProcessCapture(options({"--exit", "3"})).run(sink);
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.ending(), "exited with status 3");
  EXPECT_EQ(sink.kernels.size(), 3u);
}

TEST(ProcessCapture, ACrashIsReportedWithItsSignalAndWhatWasFlushed) {
  testing::MemorySink sink;
  const ProcessCaptureResult r = ProcessCapture(options({"--crash"})).run(sink);
  EXPECT_FALSE(r.exited);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(r.ending(), "killed by SIGSEGV");
  ASSERT_EQ(r.processes.size(), 1u);
  EXPECT_EQ(r.processes[0].crash_signal, SIGSEGV);
  EXPECT_EQ(sink.kernels.size(), 3u);
  EXPECT_NE(r.trace.status.find("died of SIGSEGV"), std::string::npos) << r.trace.status;
}

TEST(ProcessCapture, ACommandWithoutCudaHasNoActivity) {
  testing::MemorySink sink;
  const ProcessCaptureResult r = ProcessCapture(options({"--no-cuda"})).run(sink);
  EXPECT_TRUE(r.started);
  EXPECT_TRUE(r.exited);
  EXPECT_TRUE(r.processes.empty());
  EXPECT_TRUE(r.no_cuda_activity());
  EXPECT_NE(r.trace.status.find("no CUDA activity"), std::string::npos) << r.trace.status;
}

TEST(ProcessCapture, ChildrenAreFollowedEachItsOwnProcess) {
  testing::MemorySink sink;
  const ProcessCaptureResult r =
      ProcessCapture(options({"--children", "2", "--iterations", "1"})).run(sink);
  ASSERT_EQ(r.processes.size(), 3u);
  std::size_t kernels = 0;
  for (const auto& p : r.processes) {
    EXPECT_TRUE(p.ended_cleanly) << p.pid;
    kernels += p.kernels;
  }
  // The launcher's 1 iteration and its children's 2 and 3.
  EXPECT_EQ(kernels, 6u);
  EXPECT_EQ(sink.kernels.size(), 6u);
  EXPECT_NE(r.processes[0].pid, r.processes[1].pid);
}

TEST(ProcessCapture, StopInterruptsTheCommandAndKeepsTheTrace) {
  testing::MemorySink sink;
  std::atomic<bool> stop{false};
  const ProcessCaptureResult r =
      ProcessCapture(options({"--hang"})).run(sink, &stop, [&](const ProcessCaptureProgress& p) {
        if (p.processes > 0) stop = true;
      });
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.exit_code, 130);
  EXPECT_EQ(r.ending(), "stopped (exited with status 130)");
  ASSERT_EQ(r.processes.size(), 1u);
  EXPECT_TRUE(r.processes[0].ended_cleanly);
  EXPECT_EQ(sink.kernels.size(), 3u);
}

TEST(ProcessCapture, ACommandThatIgnoresTheStopIsKilled) {
  testing::MemorySink sink;
  std::atomic<bool> stop{false};
  const ProcessCaptureResult r = ProcessCapture(options({"--ignore-stop"}))
                                     .run(sink, &stop, [&](const ProcessCaptureProgress& p) {
                                       if (p.processes > 0) stop = true;
                                     });
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_EQ(sink.kernels.size(), 3u);
  ASSERT_EQ(r.processes.size(), 1u);
  EXPECT_FALSE(r.processes[0].ended_cleanly);
  EXPECT_NE(r.trace.status.find("ended without flushing its trace"), std::string::npos)
      << r.trace.status;
}

TEST(ProcessCapture, WorkingDirectoryAndEnvironmentReachTheCommand) {
  testing::MemorySink sink;
  const std::filesystem::path dir = testing::scratch_dir();
  ProcessCaptureOptions o =
      options({"--expect-cwd", dir.string(), "--expect-env", "FS_TEST_VALUE=a b=c"});
  o.working_directory = dir.string();
  o.environment = {{"FS_TEST_VALUE", "a b=c"}};
  const ProcessCaptureResult r = ProcessCapture(o).run(sink);
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 0) << "9: wrong directory, 8: wrong environment";
}

TEST(ProcessCapture, RefusalsBeforeAnythingRuns) {
  testing::MemorySink sink;
  ProcessCaptureOptions o = options({});
  o.command = {"/nonexistent/program"};
  ProcessCaptureResult r = ProcessCapture(o).run(sink);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.start_error.find("cannot start /nonexistent/program: No such file"),
            std::string::npos)
      << r.start_error;

  o = options({});
  o.working_directory = "/nonexistent/dir";
  r = ProcessCapture(o).run(sink);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.start_error.find("cannot enter the working directory"), std::string::npos)
      << r.start_error;

  o = options({});
  o.inject_library = "/nonexistent/libfusionscope_inject.so";
  r = ProcessCapture(o).run(sink);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.start_error.find("libfusionscope_inject.so was not found"), std::string::npos)
      << r.start_error;

  o = options({});
  o.environment = {{"CUDA_INJECTION64_PATH", "/opt/nsight/libToolsInjection64.so"}};
  r = ProcessCapture(o).run(sink);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.start_error.find("another CUPTI client"), std::string::npos) << r.start_error;

  o = options({});
  o.command.clear();
  r = ProcessCapture(o).run(sink);
  EXPECT_EQ(r.start_error, "no command to run");
  EXPECT_TRUE(sink.kernels.empty());
}

}  // namespace
}  // namespace fusionscope::profiler

namespace fusionscope::profiler {
namespace {

// The real library in a process that does no GPU work: it connects, says who it is, and ends its
// stream at exit (a forked child stays silent); without a GPU CUPTI may refuse, which it reports.
TEST(ProcessCapture, TheRealLibraryConnectsAndEndsItsStream) {
  testing::MemorySink sink;
  ProcessCaptureOptions o;
  o.command = {FUSIONSCOPE_LIBRARY_LOADER, FUSIONSCOPE_INJECT_LIBRARY, "--exit", "4", "--fork"};
  o.inject_library = FUSIONSCOPE_INJECT_LIBRARY;
  const ProcessCaptureResult r = ProcessCapture(o).run(sink);
  ASSERT_TRUE(r.started) << r.start_error;
  EXPECT_EQ(r.exit_code, 4);
  ASSERT_EQ(r.processes.size(), 1u) << "the forked child never speaks";
  const CapturedProcess& p = r.processes[0];
  EXPECT_EQ(p.name, "library_loader");
  EXPECT_TRUE(p.ended_cleanly) << r.trace.status;
  EXPECT_EQ(p.kernels, 0u);
  EXPECT_TRUE(r.no_cuda_activity());
  for (const auto& n : p.notes) std::printf("note: %s\n", n.c_str());
}

}  // namespace
}  // namespace fusionscope::profiler
