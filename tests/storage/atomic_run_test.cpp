// A run appears whole or not at all: RunWriter's states, its clean-up, a writer killed in the
// middle, and writers that work side by side (in one process and in several).
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "file_guards.h"
#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/session_store.h"
#include "store_fixtures.h"
#include "test_paths.h"

namespace fusionscope::storage {
namespace {

namespace fs = std::filesystem;

std::vector<KernelRecord> kernels(SessionStore& store, size_t n, const std::string& name) {
  std::vector<KernelRecord> out(n);
  const StringId id = store.intern(name);
  for (size_t i = 0; i < n; ++i) {
    out[i].start_ns = static_cast<int64_t>(i) * 100;
    out[i].end_ns = out[i].start_ns + 50;
    out[i].correlation_id = static_cast<uint32_t>(i);
    out[i].name = id;
  }
  return out;
}

TEST(StoreAtomicRuns, ARunIsWritingUntilCommitAndCompleteAfter) {
  const auto path = fusionscope::testing::scratch_dir() / "s.fsdb";
  SessionStore store = SessionStore::create(path, SessionInfo{});
  RunWriter run(store, testing::sample_run());
  EXPECT_EQ(store.run(run.id())->state, RunState::kWriting);
  run.add_kernels(kernels(store, 10, "k"));
  EXPECT_EQ(SessionStore::open(path).run(run.id())->state, RunState::kWriting);
  RunInfo info = run.info();
  info.status = RunStatus::kFailed;
  info.error = "set while writing";
  run.set_info(info);
  run.commit();
  const RunData d = SessionStore::open(path).load_run(run.id());
  EXPECT_EQ(d.info.state, RunState::kComplete);
  EXPECT_EQ(d.info.integrity, Integrity::kVerified);
  EXPECT_EQ(d.info.error, "set while writing");
  EXPECT_EQ(d.kernels.size(), 10u);
  EXPECT_THROW(run.add_kernels(kernels(store, 1, "k")), StoreError);
  EXPECT_THROW(run.commit(), StoreError);
}

TEST(StoreAtomicRuns, AWriterThatIsNotCommittedRemovesItsRun) {
  const auto path = fusionscope::testing::scratch_dir() / "s.fsdb";
  SessionStore store = SessionStore::create(path, SessionInfo{});
  const int64_t kept = testing::add_run(store, testing::sample_run("kept"));
  int64_t dropped = 0;
  try {
    RunWriter run(store, testing::sample_run("dropped"));
    dropped = run.id();
    run.add_kernels(kernels(store, 1000, "k"));
    throw std::runtime_error("the importer failed half-way");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(store.run(dropped).has_value());
  ASSERT_EQ(store.runs().size(), 1u);
  EXPECT_EQ(store.runs()[0].id, kept);
  // The id of the removed run is never given again.
  RunWriter next(store, RunInfo{});
  EXPECT_GT(next.id(), dropped);
}

TEST(StoreAtomicRuns, RunIdsAreNeverReusedAfterADelete) {
  const auto path = fusionscope::testing::scratch_dir() / "s.fsdb";
  int64_t last = 0;
  {
    SessionStore store = SessionStore::create(path, SessionInfo{});
    testing::add_run(store, RunInfo{});
    last = testing::add_run(store, RunInfo{});
    store.delete_run(last);
  }
  SessionStore store = SessionStore::open(path, OpenMode::kReadWrite);
  EXPECT_GT(testing::add_run(store, RunInfo{}), last);
}

// A child process writes a run and is killed before it commits.
TEST(StoreAtomicRuns, AKilledWritersRunReadsInterruptedAndKeepsItsRecords) {
  const auto path = fusionscope::testing::scratch_dir() / "s.fsdb";
  { SessionStore::create(path, SessionInfo{}); }
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    SessionStore store = SessionStore::open(path, OpenMode::kReadWrite);
    RunWriter run(store, testing::sample_run("killed"));
    run.add_kernels(kernels(store, 500, "k"));
    const char byte = 1;
    if (::write(ready[1], &byte, 1) != 1) ::_exit(3);
    ::pause();  // killed here, before commit
    ::_exit(0);
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  {
    // While the child lives, its run is being written.
    SessionStore reader = SessionStore::open(path);
    ASSERT_EQ(reader.runs().size(), 1u);
    EXPECT_EQ(reader.runs()[0].state, RunState::kWriting);
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(ready[0]);
  ::close(ready[1]);
  {
    SessionStore reader = SessionStore::open(path);
    ASSERT_EQ(reader.runs().size(), 1u);
    EXPECT_EQ(reader.runs()[0].state, RunState::kInterrupted);
    const RunData d = reader.load_run(reader.runs()[0].id);
    EXPECT_EQ(d.info.state, RunState::kInterrupted);
    EXPECT_EQ(d.info.integrity, Integrity::kUnprotected);
    EXPECT_EQ(d.kernels.size(), 500u);
  }
  // A read-write open writes it down.
  { SessionStore::open(path, OpenMode::kReadWrite); }
  EXPECT_EQ(testing::raw_int(path, "SELECT state FROM runs"), 2);
}

TEST(StoreAtomicRuns, AWholeOrNothingRunIsListedOnlyOnceCommitted) {
  const auto path = fusionscope::testing::scratch_dir() / "s.fsdb";
  SessionStore store = SessionStore::create(path, SessionInfo{});
  const int64_t kept = testing::add_run(store, testing::sample_run("kept"));
  RunWriter run(store, testing::sample_run("import"), RunWriter::Visibility::kWhenComplete);
  EXPECT_GT(run.id(), kept);
  run.add_kernels(kernels(store, 100, "k"));
  RunInfo info = run.info();
  info.name = "renamed while written";
  run.set_info(info);
  SessionStore other = SessionStore::open(path);
  for (const SessionStore* s : {&store, &other}) {
    ASSERT_EQ(s->runs().size(), 1u);
    EXPECT_EQ(s->runs()[0].id, kept);
    EXPECT_FALSE(s->run(run.id()).has_value());
    EXPECT_THROW(s->load_run(run.id()), StoreError);
  }
  EXPECT_THROW(store.rename_run(run.id(), "x"), StoreError);
  run.commit();
  const RunData d = SessionStore::open(path).load_run(run.id());
  EXPECT_EQ(d.info.name, "renamed while written");
  EXPECT_EQ(d.info.state, RunState::kComplete);
  EXPECT_EQ(d.info.integrity, Integrity::kVerified);
  EXPECT_EQ(d.kernels.size(), 100u);
  EXPECT_EQ(store.runs().size(), 2u);
}

TEST(StoreAtomicRuns, AKilledWholeOrNothingWriterLeavesNoRun) {
  const auto path = fusionscope::testing::scratch_dir() / "s.fsdb";
  int64_t kept = 0;
  {
    SessionStore store = SessionStore::create(path, SessionInfo{});
    kept = testing::add_run(store, testing::sample_run("kept"), testing::sample_records(store));
  }
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    SessionStore store = SessionStore::open(path, OpenMode::kReadWrite);
    RunWriter run(store, testing::sample_run("killed"), RunWriter::Visibility::kWhenComplete);
    run.add_kernels(kernels(store, 500, "k"));
    const char byte = 1;
    if (::write(ready[1], &byte, 1) != 1) ::_exit(3);
    ::pause();  // killed here, before commit
    ::_exit(0);
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(ready[0]);
  ::close(ready[1]);
  EXPECT_EQ(testing::raw_int(path, "SELECT count(*) FROM runs"), 2);  // left in the file...
  {
    SessionStore reader = SessionStore::open(path);  // ... but never shown
    ASSERT_EQ(reader.runs().size(), 1u);
    EXPECT_EQ(reader.runs()[0].id, kept);
    EXPECT_EQ(reader.load_run(kept).info.integrity, Integrity::kVerified);
  }
  // A read-write open removes it and its records.
  { SessionStore::open(path, OpenMode::kReadWrite); }
  EXPECT_EQ(testing::raw_int(path, "SELECT count(*) FROM runs"), 1);
  EXPECT_EQ(testing::raw_int(path, "SELECT count(*) FROM kernels"), 2);
  EXPECT_EQ(SessionStore::open(path).load_run(kept).info.integrity, Integrity::kVerified);
}

TEST(StoreAtomicRuns, TwoWritersOfOneProcessInterleave) {
  const auto path = fusionscope::testing::scratch_dir() / "s.fsdb";
  SessionStore a = SessionStore::create(path, SessionInfo{});
  SessionStore b = SessionStore::open(path, OpenMode::kReadWrite);
  RunWriter ra(a, testing::sample_run("a"));
  RunWriter rb(b, testing::sample_run("b"));
  EXPECT_NE(ra.id(), rb.id());
  for (int i = 0; i < 5; ++i) {
    // New strings on both sides: each store takes ids the other has not.
    ra.add_kernels(kernels(a, 10, "a" + std::to_string(i)));
    rb.add_kernels(kernels(b, 10, "b" + std::to_string(i)));
  }
  ra.commit();
  rb.commit();
  SessionStore reader = SessionStore::open(path);
  for (int64_t id : {ra.id(), rb.id()}) {
    const RunData d = reader.load_run(id);
    EXPECT_EQ(d.kernels.size(), 50u);
    EXPECT_EQ(d.info.integrity, Integrity::kVerified);
    EXPECT_EQ(d.str(d.kernels.back().name)[0], d.info.name[0]);
  }
}

// Several processes write runs with many new strings at once: every run lands, whole.
TEST(StoreAtomicRuns, ConcurrentWriterProcessesAllLand) {
  const auto path = fusionscope::testing::scratch_dir() / "s.fsdb";
  { SessionStore::create(path, SessionInfo{}); }
  constexpr int kWriters = 4, kRunsEach = 5;
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      int code = 0;
      try {
        SessionStore store = SessionStore::open(path, OpenMode::kReadWrite);
        for (int r = 0; r < kRunsEach; ++r) {
          RunWriter run(store, testing::sample_run(("w" + std::to_string(w)).c_str()));
          for (int b = 0; b < 4; ++b)
            run.add_kernels(kernels(
                store, 50,
                "w" + std::to_string(w) + "r" + std::to_string(r) + "b" + std::to_string(b)));
          run.commit();
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "writer %d: %s\n", w, e.what());
        code = 1;
      }
      ::_exit(code);
    }
    children.push_back(child);
  }
  for (pid_t c : children) {
    int status = 0;
    ::waitpid(c, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer failed";
  }
  SessionStore reader = SessionStore::open(path);
  const std::vector<RunInfo> runs = reader.runs();
  ASSERT_EQ(runs.size(), size_t{kWriters * kRunsEach});
  for (const RunInfo& r : runs) {
    const RunData d = reader.load_run(r.id);
    EXPECT_EQ(d.info.state, RunState::kComplete);
    EXPECT_EQ(d.info.integrity, Integrity::kVerified);
    EXPECT_EQ(d.kernels.size(), 200u);
    EXPECT_EQ(d.str(d.kernels.front().name).substr(0, 2), r.name);
  }
}

}  // namespace
}  // namespace fusionscope::storage
