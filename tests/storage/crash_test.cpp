// What survives a writer that dies or runs out of disk at any moment: a child process adds a run
// to a session holding one run, and is killed before (or half-way through) each file-changing
// operation it makes, one moment per child; or the disk fills at each moment. Whatever the
// moment, the session opens, passes quick_check, the old run is intact and verified, and the new
// run is either absent, interrupted, or complete with every record: never complete and short.
// A whole-or-nothing writer (an import's) leaves no run, not a record of it, or a complete one.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fault_vfs.h"
#include "file_guards.h"
#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/session_store.h"
#include "store_fixtures.h"
#include "test_paths.h"

namespace fusionscope::storage {
namespace {

namespace fs = std::filesystem;
using testing::Fault;

constexpr size_t kBatches = 4, kPerBatch = 400;

using Visibility = RunWriter::Visibility;

// The work that is interrupted: open the session, add one run in batches, commit, close.
void append_run(const fs::path& path, Visibility visibility) {
  SessionStore store = SessionStore::open(path, OpenMode::kReadWrite);
  RunWriter run(store, testing::sample_run("appended"), visibility);
  for (size_t b = 0; b < kBatches; ++b) {
    std::vector<KernelRecord> batch(kPerBatch);
    const StringId name = store.intern("kernel of batch " + std::to_string(b));
    for (size_t i = 0; i < kPerBatch; ++i) {
      batch[i].start_ns = static_cast<int64_t>(b * kPerBatch + i) * 1000;
      batch[i].end_ns = batch[i].start_ns + 500;
      batch[i].correlation_id = static_cast<uint32_t>(b * kPerBatch + i + 1);
      batch[i].name = name;
      batch[i].pid = 77;
    }
    run.add_kernels(batch);
  }
  run.add_process(77, "python3 train.py");
  run.commit();
}

fs::path base_session(const fs::path& dir, int64_t* old_run) {
  const fs::path path = dir / "base.fsdb";
  SessionStore store = SessionStore::create(path, testing::sample_session());
  *old_run = testing::add_run(store, testing::sample_run("old"), testing::sample_records(store));
  return path;
}

// Runs `work` in a child process under `fault` at operation `at`; returns the child's status.
int run_child(Fault fault, int64_t at, const std::function<void()>& work, int64_t* operations) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return -1;
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(pipe_fds[0]);
    testing::FaultPlan plan;
    plan.fault = fault;
    plan.at = at;
    testing::install_fault_vfs(&plan);
    int code = 0;
    try {
      work();
    } catch (const std::exception&) {
      code = 3;
    }
    testing::install_fault_vfs(nullptr);
    const int64_t n = plan.count.load();
    if (::write(pipe_fds[1], &n, sizeof n) != sizeof n) code = 4;
    ::_exit(code);
  }
  ::close(pipe_fds[1]);
  int64_t n = -1;
  if (::read(pipe_fds[0], &n, sizeof n) != sizeof n) n = -1;
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (operations) *operations = n;
  return status;
}

struct Outcome {
  int absent = 0, interrupted = 0, complete = 0;
};

// The invariants after the child is gone; adds what became of the new run to `outcome`.
void check_after(const fs::path& path, int64_t old_run, const RunData& old_data, Outcome& outcome,
                 const std::string& moment) {
  SCOPED_TRACE(moment);
  {  // A read-write open recovers the log and records an interrupted run.
    SessionStore store = SessionStore::open(path, OpenMode::kReadWrite);
    EXPECT_TRUE(store.quick_check().empty());
  }
  SessionStore store = SessionStore::open(path);
  EXPECT_EQ(store.session_damage(), "");
  const RunData old = store.load_run(old_run);
  EXPECT_EQ(old.info.integrity, Integrity::kVerified);
  EXPECT_EQ(old.kernels, old_data.kernels);
  const std::vector<RunInfo> runs = store.runs();
  ASSERT_GE(runs.size(), 1u);
  ASSERT_LE(runs.size(), 2u);
  if (runs.size() == 1) {
    ++outcome.absent;
    // Nothing of it is left either: its row and records went with the read-write open.
    EXPECT_EQ(testing::raw_int(path, "SELECT count(*) FROM runs"), 1);
    EXPECT_EQ(testing::raw_int(path, "SELECT count(*) FROM kernels"),
              static_cast<int64_t>(old_data.kernels.size()));
    return;
  }
  const RunData added = store.load_run(runs[1].id);
  if (added.info.state == RunState::kComplete) {
    ++outcome.complete;
    EXPECT_EQ(added.info.integrity, Integrity::kVerified);
    EXPECT_EQ(added.kernels.size(), kBatches * kPerBatch);
    EXPECT_EQ(added.process_name(77), "python3 train.py");
  } else {
    ++outcome.interrupted;
    EXPECT_EQ(added.info.state, RunState::kInterrupted);
    EXPECT_LE(added.kernels.size(), kBatches * kPerBatch);
  }
}

Outcome kill_at_every_moment(Fault fault, const char* what,
                             Visibility visibility = Visibility::kWhileWriting) {
  Outcome outcome;
  const fs::path dir = fusionscope::testing::scratch_dir();
  int64_t old_run = 0;
  const fs::path base = base_session(dir, &old_run);
  const RunData old_data = SessionStore::open(base).load_run(old_run);
  const fs::path path = dir / "s.fsdb";

  // A dry run counts the operations.
  fs::copy_file(base, path);
  int64_t total = 0;
  const int dry = run_child(
      Fault::kNone, -1, [&] { append_run(path, visibility); }, &total);
  EXPECT_TRUE(WIFEXITED(dry) && WEXITSTATUS(dry) == 0);
  EXPECT_GT(total, 10);
  if (::testing::Test::HasFailure()) return outcome;
  fs::remove(path);

  int64_t moments = 0;
  for (int64_t at = 0; at <= total; ++at) {
    fs::remove(path);
    for (const char* s : {"-wal", "-shm"}) fs::remove(path.string() + s);
    fs::copy_file(base, path);
    const int status = run_child(
        fault, at, [&] { append_run(path, visibility); }, nullptr);
    const bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    if (at < total) {
      EXPECT_TRUE(killed) << "operation " << at << " of " << total;
    }
    if (killed) ++moments;
    check_after(path, old_run, old_data, outcome,
                std::string(what) + " at operation " + std::to_string(at));
  }
  std::printf(
      "%s: %lld operations, %lld kill moments: new run absent %d, interrupted %d, "
      "complete %d; old run intact every time\n",
      what, static_cast<long long>(total), static_cast<long long>(moments), outcome.absent,
      outcome.interrupted, outcome.complete);
  EXPECT_EQ(outcome.absent + outcome.interrupted + outcome.complete, total + 1);
  EXPECT_GE(outcome.complete, 1);
  return outcome;
}

TEST(StoreCrash, AWriterKilledBeforeAnyOperationLeavesNoHalfRun) {
  const Outcome o = kill_at_every_moment(Fault::kKill, "killed");
  EXPECT_GT(o.interrupted, 0);  // the moments between batches were reached
}

TEST(StoreCrash, AWriterKilledHalfWayThroughAnyWriteLeavesNoHalfRun) {
  const Outcome o = kill_at_every_moment(Fault::kKillTornWrite, "killed half-way through a write");
  EXPECT_GT(o.interrupted, 0);
}

// An import's writer: killed at any moment, before or half-way through any operation, it leaves
// no run or a complete one, never an interrupted one.
TEST(StoreCrash, AWholeOrNothingWriterKilledAtAnyMomentLeavesNoRunOrAWholeOne) {
  for (Fault fault : {Fault::kKill, Fault::kKillTornWrite}) {
    const Outcome o =
        kill_at_every_moment(fault,
                             fault == Fault::kKill ? "whole-or-nothing writer killed"
                                                   : "whole-or-nothing writer killed half-way "
                                                     "through a write",
                             Visibility::kWhenComplete);
    EXPECT_EQ(o.interrupted, 0);
    EXPECT_GT(o.absent, 1);  // the moments before its commit were reached
  }
}

TEST(StoreCrash, ADiskThatFillsAtAnyMomentSaysSoAndLeavesNoHalfRun) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  int64_t old_run = 0;
  const fs::path base = base_session(dir, &old_run);
  const RunData old_data = SessionStore::open(base).load_run(old_run);
  const fs::path path = dir / "s.fsdb";
  fs::copy_file(base, path);
  int64_t total = 0;
  ASSERT_EQ(run_child(
                Fault::kNone, -1, [&] { append_run(path, Visibility::kWhileWriting); }, &total),
            0);

  Outcome outcome;
  int refused = 0;
  for (int64_t at = 0; at < total; ++at) {
    fs::remove(path);
    for (const char* s : {"-wal", "-shm"}) fs::remove(path.string() + s);
    fs::copy_file(base, path);
    testing::FaultPlan plan;
    plan.fault = Fault::kDiskFull;
    plan.at = at;
    testing::install_fault_vfs(&plan);
    std::string error;
    try {
      append_run(path, Visibility::kWhileWriting);
    } catch (const StoreError& e) {
      error = e.what();
    }
    testing::install_fault_vfs(nullptr);
    SCOPED_TRACE("disk full from operation " + std::to_string(at));
    const int complete_before = outcome.complete;
    check_after(path, old_run, old_data, outcome, "disk full at " + std::to_string(at));
    if (!error.empty()) {
      EXPECT_NE(error.find("the disk is full"), std::string::npos) << error;
      ++refused;
    } else {
      // No error: the disk filled only when the store closed, after the commit. The run is
      // whole; its log is beside the file until a later checkpoint.
      EXPECT_EQ(outcome.complete, complete_before + 1);
    }
  }
  std::printf(
      "disk full: %lld moments, %d said \"the disk is full\": new run absent %d, "
      "interrupted %d, complete %d; old run intact every time\n",
      static_cast<long long>(total), refused, outcome.absent, outcome.interrupted,
      outcome.complete);
  EXPECT_GT(refused, 0);
}

TEST(StoreCrash, ANewSessionThatCannotBeCreatedLeavesNothingBehind) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path path = dir / "new.fsdb";
  for (int64_t at = 0; at < 40; ++at) {
    testing::FaultPlan plan;
    plan.fault = Fault::kDiskFull;
    plan.at = at;
    testing::install_fault_vfs(&plan);
    bool created = false;
    try {
      SessionStore::create(path, testing::sample_session());
      created = true;
    } catch (const StoreError& e) {
      EXPECT_NE(std::string(e.what()).find("the disk is full"), std::string::npos) << e.what();
    }
    testing::install_fault_vfs(nullptr);
    if (created) break;  // the creation needs fewer operations than `at`
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(dir)) left.push_back(e.path().filename());
    EXPECT_TRUE(left.empty()) << "after a failure at operation " << at << ": " << left.front();
  }
}

}  // namespace
}  // namespace fusionscope::storage
