// A program captured into a session without a GPU (the stand-in target): the run row it leaves,
// the command line and environment the app's dialog parses, and the PyTorch variants refused with
// their reason where python3 has no PyTorch.
#include <signal.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "fusionscope/kernels/plan.h"
#include "fusionscope/lab/lab.h"
#include "fusionscope/lab/program_capture.h"
#include "fusionscope/lab/torch_variants.h"
#include "fusionscope/storage/session_store.h"
#include "test_paths.h"

namespace fusionscope::lab {
namespace {

namespace fs = std::filesystem;

storage::SessionStore new_store() {
  return storage::SessionStore::create(testing::scratch_dir() / "s.fsdb", {});
}

ProgramCaptureRequest request(std::vector<std::string> args) {
  ProgramCaptureRequest r;
  r.process.command = {FUSIONSCOPE_FAKE_TARGET};
  r.process.command.insert(r.process.command.end(), args.begin(), args.end());
  r.process.inject_library = FUSIONSCOPE_INJECT_LIBRARY;
  return r;
}

TEST(ProgramCapture, ARunRowWithItsIterationsStatusAndTrace) {
  auto store = new_store();
  ProgramCaptureRequest r = request({"--iterations", "5", "--exit", "2"});
  r.warmup = 2;
  const ProgramCaptureOutcome out = capture_program(store, r);
  ASSERT_NE(out.run_id, 0);
  EXPECT_EQ(out.exit_status(), 2);
  const storage::RunData run = store.load_run(out.run_id);
  EXPECT_EQ(run.info.name, "fake_injected_target --iterations 5 --exit 2");
  EXPECT_EQ(run.info.kind, "program");
  EXPECT_EQ(run.info.status, storage::RunStatus::kFailed);
  EXPECT_EQ(run.info.error, "the command exited with status 2");
  EXPECT_EQ(run.info.warmup, 2);
  EXPECT_EQ(run.info.iterations, 3);
  EXPECT_EQ(out.iterations, 5);
  EXPECT_EQ(run.kernels.size(), 5u);
  EXPECT_GT(run.info.wall_ns, 0);
}

TEST(ProgramCapture, CrashAndStopAreStoredAsSuch) {
  auto store = new_store();
  ProgramCaptureOutcome out = capture_program(store, request({"--crash"}));
  EXPECT_EQ(out.exit_status(), 128 + SIGSEGV);
  EXPECT_EQ(store.run(out.run_id)->error, "the command was killed by SIGSEGV");

  std::atomic<bool> stop{false};
  out = capture_program(store, request({"--hang"}), &stop, [&](const ProgramCaptureProgress& p) {
    if (p.process.processes > 0) stop = true;
  });
  EXPECT_EQ(out.exit_status(), 130);
  EXPECT_EQ(store.run(out.run_id)->status, storage::RunStatus::kCancelled);
  EXPECT_EQ(store.load_run(out.run_id).kernels.size(), 3u);
}

// The counters pass runs the command a second time; its kernels are keyed to the traced ones at
// the same launch position in the same window (the first timed iteration), also when the second
// command line differs (a script told to write its results elsewhere).
TEST(ProgramCapture, TheCountersPassIsKeyedToTheTracedKernelsOfItsWindow) {
  auto store = new_store();
  ProgramCaptureRequest r = request({"--iterations", "4", "--tag", "traced"});
  r.warmup = 2;
  r.counters = true;
  r.counters_command = r.process.command;
  r.counters_command.back() = "counters";
  const ProgramCaptureOutcome out = capture_program(store, r);
  ASSERT_EQ(out.status, storage::RunStatus::kOk) << out.error;
  EXPECT_EQ(out.kernel_counters.rfind("ok: 1 kernels of iteration 2", 0), 0u)
      << out.kernel_counters;
  const storage::RunData run = store.load_run(out.run_id);
  ASSERT_EQ(run.kernel_metrics.size(), 1u);
  // The fake target launches iteration i's kernel with correlation id 100 + i.
  EXPECT_EQ(run.kernel_metrics[0].correlation_id, 102u);
  EXPECT_EQ(run.kernel_metrics[0].value, 1002.0);
  EXPECT_EQ(store.property("counters.run." + std::to_string(out.run_id) + ".kernels"),
            out.kernel_counters);
}

TEST(ProgramCapture, NothingIsStoredWhenTheCommandCannotStart) {
  auto store = new_store();
  ProgramCaptureRequest r = request({});
  r.process.command = {"/nonexistent/program"};
  const ProgramCaptureOutcome out = capture_program(store, r);
  EXPECT_EQ(out.run_id, 0);
  EXPECT_EQ(out.exit_status(), 1);
  EXPECT_NE(out.error.find("cannot start"), std::string::npos) << out.error;
  EXPECT_TRUE(store.runs().empty());
}

TEST(ProgramCapture, CommandLinesAndEnvironmentAsTheDialogReadsThem) {
  EXPECT_EQ(split_command_line(R"(python3 "my script.py" --name='a b' x\ y "q\"uote")"),
            (std::vector<std::string>{"python3", "my script.py", "--name=a b", "x y", "q\"uote"}));
  EXPECT_TRUE(split_command_line("   ").empty());
  EXPECT_THROW(split_command_line("python3 'open"), std::invalid_argument);
  const auto env = parse_environment("A=1\n\n# comment\nB = x=y \nC=");
  ASSERT_EQ(env.size(), 3u);
  EXPECT_EQ(env[1], (std::pair<std::string, std::string>{"B ", " x=y"}));
  EXPECT_EQ(env[2].second, "");
  EXPECT_THROW(parse_environment("A=1\nnot a pair"), std::invalid_argument);
  EXPECT_EQ(command_title({"/usr/bin/python3", "/home/me/train.py", "--steps", "3"}),
            "python3 train.py --steps 3");
}

TEST(ProgramCapture, PyTorchVariantsWithoutPyTorchAreRefusedWithTheReason) {
  const std::string why = torch_unavailable_reason();
  if (why.empty()) GTEST_SKIP() << "python3 has PyTorch with CUDA here";
  auto store = new_store();
  CaptureJob job;
  job.runs = {{*kernels::find_preset("geglu-post"), kernels::Variant::kTorchCompile}};
  Lab lab(make_runner_executor(), make_no_capture("no GPU"));
  const JobResult r = lab.run(store, job);
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_EQ(r.failed, 1u);
  const auto info = store.run(r.run_ids.at(0));
  ASSERT_TRUE(info);
  EXPECT_EQ(info->variant, "torch-compile");
  EXPECT_EQ(info->error, "torch-compile: " + why);
  EXPECT_TRUE(
      kernels::make_plan(job.runs[0].config, kernels::Variant::kTorchCompile).launches.size() == 4);
}

}  // namespace
}  // namespace fusionscope::lab
