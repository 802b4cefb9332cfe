// `fusionscope capture` and `fusionscope report` as a person runs them: messages and exit codes.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "fusionscope/build_config.h"
#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/session_store.h"
#include "gpu_guard.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string output;  // stdout and stderr together
};

Result run(const std::string& args) {
  const std::string command = std::string(FUSIONSCOPE_CAPTURE_DRIVER) + " " + args + " 2>&1";
  Result r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Capture's own behaviour needs a build with CUDA; without it, the command says why it is absent.
#define REQUIRE_CUDA_BUILD()                                                               \
  do {                                                                                     \
    if (!FUSIONSCOPE_HAS_CUDA)                                                             \
      GTEST_SKIP() << "built without CUDA: capture is absent (CaptureCli.WithoutCuda...)"; \
  } while (0)

TEST(CaptureCli, UsageMistakesAreExplainedWithExitCode2) {
  REQUIRE_CUDA_BUILD();
  const fs::path dir = fusionscope::testing::scratch_dir();
  const std::string out = (dir / "s.fsdb").string();

  Result r = run("capture --out " + out);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("give either --config FILE or --preset NAME"), std::string::npos)
      << r.output;

  r = run("capture --preset nope --out " + out);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("no preset named \"nope\" (presets: linear-post, geglu-post"),
            std::string::npos)
      << r.output;

  r = run("capture --preset geglu-post --variants eager,fastest --out " + out);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("fastest"), std::string::npos) << r.output;

  r = run("capture --preset geglu-post --rounds 0 --out " + out);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--rounds"), std::string::npos) << r.output;

  const fs::path job = dir / "job.json";
  std::ofstream(job)
      << R"({"configurations": [{"kind": "gated", "rows": -4, "widths": [8, 16], "dtype": "bf16"}]})";
  r = run("capture --config " + job.string() + " --out " + out);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("configurations[0]"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out));

  std::ofstream(out) << "x";
  r = run("capture --preset geglu-post --out " + out);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("already exists (use --append"), std::string::npos) << r.output;
}

TEST(CaptureCli, WithoutAGpuSaysWhyAndWritesNothing) {
  REQUIRE_CUDA_BUILD();
  if (fusionscope::testing::gpu_unavailable_reason().empty())
    GTEST_SKIP() << "a GPU is present: this test covers machines without one";
  const fs::path out = fusionscope::testing::scratch_dir() / "s.fsdb";
  const Result r = run("capture --preset geglu-post --variants eager --out " + out.string());
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("no GPU to run on: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nothing was captured"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out));
}

TEST(CaptureCli, WithoutCudaCaptureAndCalibrateSayWhyAndWriteNothing) {
  if (FUSIONSCOPE_HAS_CUDA) GTEST_SKIP() << "built with CUDA: capture and calibrate are there";
  const fs::path out = fusionscope::testing::scratch_dir() / "s.fsdb";
  for (const std::string& args :
       {"capture --preset geglu-post --variants eager --out " + out.string(),
        std::string("capture"), "capture --out " + out.string() + " -- /bin/true",
        "calibrate --session " + out.string()}) {
    const Result r = run(args);
    EXPECT_EQ(r.code, 1) << args << ": " << r.output;
    EXPECT_NE(r.output.find(": not available: this fusionscope was built without CUDA"),
              std::string::npos)
        << args << ": " << r.output;
  }
  EXPECT_FALSE(fs::exists(out));
}

TEST(ReportCli, PrintsASessionAndRefusesMissingFiles) {
  const fs::path path = fusionscope::testing::scratch_dir() / "r.fsdb";
  {
    auto store = fusionscope::storage::SessionStore::create(path, {});
    fusionscope::storage::RunInfo info;
    info.name = "geglu-post / eager";
    info.status = fusionscope::storage::RunStatus::kOk;
    info.iterations = 1;
    fusionscope::storage::RunWriter run(store, info);
    fusionscope::storage::KernelRecord k;
    k.start_ns = 100;
    k.end_ns = 2100;
    k.correlation_id = 1;
    k.name = store.intern("_Z9gate_gemmv");
    run.add_kernels(std::span(&k, 1));
    run.commit();
  }
  Result r = run("report " + path.string());
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("geglu-post / eager"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("gate_gemm"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("2.0 us"), std::string::npos) << r.output;

  r = run("report " + (path.parent_path() / "missing.fsdb").string());
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("fusionscope report: "), std::string::npos) << r.output;
}

}  // namespace

#if FUSIONSCOPE_HAS_CUDA  // the stand-in target and the injection library are built with CUDA
namespace {

// `capture -- COMMAND` with the stand-in target: exit statuses and messages as a person sees them.
std::string command_capture(const std::string& out, const std::string& options,
                            const std::string& target_args) {
  return "capture --out " + out + " " + options + " -- " + FUSIONSCOPE_FAKE_TARGET + " " +
         target_args;
}

// The driver is not installed beside the library: it is told where the library is.
Result run_with_library(const std::string& args) {
  setenv("FUSIONSCOPE_INJECT_LIBRARY", FUSIONSCOPE_INJECT_LIBRARY, 1);
  return run(args);
}

TEST(CaptureCli, ACommandIsCapturedAndItsExitStatusReturned) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const std::string out = (dir / "p.fsdb").string();
  Result r = run_with_library(command_capture(out, "--warmup 1", "--iterations 3 --exit 5"));
  EXPECT_EQ(r.code, 5) << r.output;
  EXPECT_NE(r.output.find("initialised CUDA"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("wrote run 1 (failed, 1 process, 3 kernels, 3 iterations)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("the command exited with status 5"), std::string::npos) << r.output;
  auto store = fusionscope::storage::SessionStore::open(out);
  ASSERT_EQ(store.runs().size(), 1u);
  EXPECT_EQ(store.runs()[0].iterations, 2);

  r = run_with_library(command_capture(out, "--append", "--crash"));
  EXPECT_EQ(r.code, 128 + 11) << r.output;
  EXPECT_NE(r.output.find("died of SIGSEGV"), std::string::npos) << r.output;

  r = run_with_library(command_capture(out, "--append", "--no-cuda"));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("no CUDA activity"), std::string::npos) << r.output;
}

TEST(CaptureCli, CommandCaptureMistakesAreExplained) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const std::string out = (dir / "p.fsdb").string();
  Result r = run_with_library(command_capture(out, "--preset geglu-post", ""));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("does not go with a command"), std::string::npos) << r.output;
  r = run_with_library(command_capture(out, "--rounds 3", ""));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--rounds runs fusionscope's own configurations"), std::string::npos)
      << r.output;
  r = run_with_library(command_capture(out, "--capture-range step", ""));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--capture-range takes nvtx:NAME"), std::string::npos) << r.output;
  r = run_with_library(command_capture(out, "--kernel-filter gemm", ""));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("add --counters"), std::string::npos) << r.output;
  r = run_with_library(command_capture(out, "--counters --kernel-filter '(['", ""));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("not a valid regular expression"), std::string::npos) << r.output;
  r = run("capture --iteration-range x --out " + out);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("apply to a command captured after --"), std::string::npos) << r.output;
  r = run("capture --out " + out + " -- /nonexistent/program");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("nothing was captured"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out)) << "a session made for a capture that never started is removed";
}

}  // namespace
#endif  // FUSIONSCOPE_HAS_CUDA
