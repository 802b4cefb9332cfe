// A session being written stays readable: readers (and other writers) opening it over and over
// while a writer in another process adds runs and checkpoints are never told it is truncated or
// damaged, and see only whole runs as complete.
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/session_store.h"
#include "store_fixtures.h"
#include "test_paths.h"

namespace fusionscope::storage {
namespace {

namespace fs = std::filesystem;

TEST(StoreLiveSession, ReadersOpeningDuringCheckpointsAreNeverRefused) {
  const fs::path path = fusionscope::testing::scratch_dir() / "live.fsdb";
  { SessionStore::create(path, testing::sample_session()); }
  const pid_t writer = ::fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    // Small runs, each followed by a checkpoint that copies the log into the file.
    try {
      SessionStore store = SessionStore::open(path, OpenMode::kReadWrite);
      for (int r = 0; r < 400; ++r) {
        RunWriter run(store, testing::sample_run("live"));
        std::vector<KernelRecord> ks(300);
        const StringId name = store.intern("k" + std::to_string(r));
        for (size_t i = 0; i < ks.size(); ++i) {
          ks[i].start_ns = static_cast<int64_t>(i);
          ks[i].end_ns = ks[i].start_ns + 1;
          ks[i].name = name;
        }
        run.add_kernels(ks);
        run.commit();
        store.checkpoint();
        ::usleep(1000);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "writer: %s\n", e.what());
      ::_exit(1);
    }
    ::_exit(0);
  }
  int opens = 0, refusals = 0;
  std::string first_refusal;
  for (; opens < 400; ++opens) {
    try {
      SessionStore reader = SessionStore::open(path);
      const std::vector<RunInfo> runs = reader.runs();
      // The newest complete run of the writer: whole.
      for (auto r = runs.rbegin(); r != runs.rend(); ++r) {
        if (r->state != RunState::kComplete || r->name != "live") continue;
        EXPECT_EQ(reader.load_run(r->id).kernels.size(), 300u);
        break;
      }
    } catch (const StoreError& e) {
      if (refusals++ == 0) first_refusal = e.what();
    }
    if (opens % 50 == 49) {
      // Another writer lands a run of its own meanwhile.
      SessionStore other = SessionStore::open(path, OpenMode::kReadWrite);
      testing::add_run(other, testing::sample_run("other"), testing::sample_records(other));
    }
  }
  int status = 0;
  ::waitpid(writer, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the writer failed";
  EXPECT_EQ(refusals, 0) << first_refusal;
  SessionStore store = SessionStore::open(path);
  size_t others = 0;
  for (const RunInfo& r : store.runs()) others += r.name == "other";
  EXPECT_EQ(others, 8u);
  std::printf("%d opens while another process wrote and checkpointed: %d refused\n", opens,
              refusals);
}

}  // namespace
}  // namespace fusionscope::storage
