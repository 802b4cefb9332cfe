// The app's display-free parts: opening sessions (a synthetic one written through the store, a
// corrupt file), naming runs on the command line, default picks for the views, the file
// browser's listing, recent files.
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <gtest/gtest.h>

#include "app.h"
#include "file_browser.h"
#include "fusionscope/storage/session_store.h"
#include "recent_files.h"
#include "sample/sample_session.h"
#include "sample/session_writer.h"
#include "session.h"
#include "test_paths.h"

namespace fusionscope::ui {
namespace {

namespace fs = std::filesystem;

// The synthetic sample session (make_sample_session) in the test's scratch directory: the tests
// know its runs exactly, whatever the build ships as its sample, and ctest -j runs each test in
// its own process, so each writes its own copy.
fs::path synthetic_session(const fs::path& dir) {
  const fs::path p = dir / "synthetic.fsdb";
  sample::write_session(sample::make_sample_session(), p);
  return p;
}

TEST(Session, OpensASessionFile) {
  const auto s = open_session(synthetic_session(fusionscope::testing::scratch_dir()));
  ASSERT_EQ(s->runs.size(), 4u);
  EXPECT_EQ(s->info.gpu_name, "NVIDIA H100 80GB HBM3");
  const LoadedRun& eager = *s->runs[1];
  EXPECT_EQ(eager.data.info.name, "geglu-post / eager");
  EXPECT_TRUE(eager.error.empty());
  EXPECT_EQ(eager.summary.timed_kernels, 100u);  // 20 timed iterations x 5 kernels
  EXPECT_EQ(eager.index.gpu.size(), 1u);
  // Kernel names are demangled once, at load.
  bool found = false;
  for (const auto& k : eager.data.kernels)
    if (eager.names.short_name(k.name) == "gelu_tanh") {
      found = true;
      EXPECT_EQ(eager.names.full_name(k.name).rfind("void fusionscope::kernels::gelu_tanh<", 0),
                0u);
    }
  EXPECT_TRUE(found);
  // Metrics are found by correlation id.
  const auto metrics = eager.metrics_for(eager.data.kernels.front().correlation_id);
  EXPECT_FALSE(metrics.empty());
}

TEST(Session, CorruptFileThrowsStoreErrorNamingIt) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path bad = dir / "bad.fsdb";
  std::ofstream(bad) << "SQLite format 3 but not really";
  try {
    open_session(bad);
    FAIL() << "opened a corrupt file";
  } catch (const storage::StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.fsdb"), std::string::npos) << e.what();
  }
  EXPECT_THROW(open_session(dir / "missing.fsdb"), storage::StoreError);
}

TEST(Session, OpenFailureKeepsTheCurrentSessionAndShowsTheError) {
  AppState app;
  const fs::path dir = fusionscope::testing::scratch_dir();
  ASSERT_TRUE(open_session_file(app, synthetic_session(dir), true));
  const Session* before = app.session.get();
  EXPECT_FALSE(open_session_file(app, dir / "missing.fsdb"));
  EXPECT_EQ(app.session.get(), before);
  EXPECT_TRUE(app.error.open_requested);
  EXPECT_NE(app.error.message.find("missing.fsdb"), std::string::npos);
}

// A damaged file opens (what is intact is shown), and the check that runs behind the views says
// it is damaged; a sound one stays quiet.
TEST(Session, TheBackgroundCheckSaysWhenTheFileIsDamaged) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  AppState app;
  ASSERT_TRUE(open_session_file(app, synthetic_session(dir)));
  app.session->integrity_check.wait();
  poll_integrity(app);
  EXPECT_TRUE(app.session->damage.empty());
  EXPECT_FALSE(app.error.open_requested);

  const fs::path copy = dir / "damaged.fsdb";
  fs::copy_file(dir / "synthetic.fsdb", copy);
  {
    // The session's description changed behind the store's back: its digest disagrees.
    std::fstream f(copy, std::ios::in | std::ios::out | std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(f)), {});
    const size_t at = bytes.find("H100 80GB");
    ASSERT_NE(at, std::string::npos);
    f.seekp(static_cast<std::streamoff>(at));
    f.put('X');
  }
  ASSERT_TRUE(open_session_file(app, copy));
  app.session->integrity_check.wait();
  poll_integrity(app);
  EXPECT_FALSE(app.session->damage.empty());
  EXPECT_EQ(app.error.title, "The session file is damaged");
  EXPECT_NE(app.error.message.find("damaged.fsdb"), std::string::npos);
}

// A run whose records were changed behind the store's back is listed with the reason and without
// its figures; the other runs load as before.
TEST(Session, ADamagedRunIsListedWithTheReasonAndNoFigures) {
  const fs::path path = synthetic_session(fusionscope::testing::scratch_dir());
  const auto intact = open_session(path);
  ASSERT_EQ(intact->runs.size(), 4u);
  const int64_t damaged_id = intact->runs[1]->data.info.id;
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    const std::string sql =
        "UPDATE kernels SET end_ns = end_ns + 1 WHERE rowid = (SELECT "
        "min(rowid) FROM kernels WHERE run_id = " +
        std::to_string(damaged_id) + ")";
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    EXPECT_EQ(sqlite3_changes(db), 1);
    sqlite3_close(db);
  }
  AppState app;
  ASSERT_TRUE(open_session_file(app, path));
  ASSERT_EQ(app.session->runs.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const LoadedRun& run = *app.session->runs[i];
    const LoadedRun& before = *intact->runs[i];
    SCOPED_TRACE(run.data.info.name);
    ASSERT_EQ(run.data.info.id, before.data.info.id);
    if (run.data.info.id == damaged_id) {
      EXPECT_NE(run.error.find("damaged"), std::string::npos) << run.error;
      EXPECT_FALSE(before.data.kernels.empty());
      EXPECT_TRUE(run.data.kernels.empty());
    } else {
      EXPECT_EQ(run.error, before.error);
      EXPECT_EQ(run.data.kernels, before.data.kernels);
    }
  }
}

TEST(Session, DefaultsPickTheFusionPair) {
  AppState app;
  ASSERT_TRUE(open_session_file(app, synthetic_session(fusionscope::testing::scratch_dir()), true));
  const Session& s = *app.session;
  ASSERT_EQ(app.runs.selected.size(), 1u);
  EXPECT_EQ(s.find_run(app.runs.selected[0])->data.info.name, "linear-post / eager");
  EXPECT_EQ(s.find_run(app.comparison.a)->data.info.name, "geglu-post / eager");
  EXPECT_EQ(s.find_run(app.comparison.b)->data.info.name, "geglu-post / pointwise-fused");
}

TEST(Session, TheBuiltSampleOpens) {
  // Whichever sample the build ships (generated or captured) is a readable session with runs.
  const auto s = open_session(FUSIONSCOPE_SAMPLE);
  EXPECT_FALSE(s->runs.empty());
  for (const auto& run : s->runs)
    EXPECT_TRUE(run->error.empty()) << run->data.info.name << ": " << run->error;
}

TEST(ResolveRuns, ByIdNameOrUniquePart) {
  const auto s = open_session(synthetic_session(fusionscope::testing::scratch_dir()));
  const int64_t eager = s->runs[1]->data.info.id;
  EXPECT_EQ(resolve_runs(*s, {std::to_string(eager)}), std::vector<int64_t>{eager});
  EXPECT_EQ(resolve_runs(*s, {"geglu-post / eager"}), std::vector<int64_t>{eager});
  EXPECT_EQ(resolve_runs(*s, {"pointwise"}), std::vector<int64_t>{s->runs[2]->data.info.id});
  EXPECT_EQ(resolve_runs(*s, {"2", "1"}).size(), 2u);
  EXPECT_THROW(resolve_runs(*s, {"geglu"}), std::invalid_argument);  // several
  EXPECT_THROW(resolve_runs(*s, {"nothing-like-it"}), std::invalid_argument);
  EXPECT_TRUE(resolve_runs(*s, {}).empty());
}

TEST(FileBrowser, DirectoriesFirstThenMatchingFilesHiddenLeftOut) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  fs::create_directories(dir / "zeta");
  fs::create_directories(dir / "alpha");
  fs::create_directories(dir / ".hidden");
  std::ofstream(dir / "b.fsdb") << "x";
  std::ofstream(dir / "a.fsdb") << "xy";
  std::ofstream(dir / "notes.txt") << "x";
  std::ofstream(dir / ".c.fsdb") << "x";
  const auto entries = list_directory(dir, ".fsdb");
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0].name, "alpha");
  EXPECT_TRUE(entries[0].is_dir);
  EXPECT_EQ(entries[1].name, "zeta");
  EXPECT_EQ(entries[2].name, "a.fsdb");
  EXPECT_EQ(entries[2].size, 2u);
  EXPECT_EQ(entries[3].name, "b.fsdb");
  EXPECT_THROW(list_directory(dir / "missing", ".fsdb"), fs::filesystem_error);
}

TEST(RecentFiles, MostRecentFirstDedupedLimitedAndPersisted) {
  const fs::path file = fusionscope::testing::scratch_dir() / "config" / "recent";
  RecentFiles r = load_recent_files(file);
  EXPECT_TRUE(r.paths.empty());
  for (int i = 0; i < 12; ++i) remember(r, "/s/" + std::to_string(i) + ".fsdb");
  remember(r, "/s/5.fsdb");
  EXPECT_EQ(r.paths.size(), r.limit);
  EXPECT_EQ(r.paths.front(), "/s/5.fsdb");
  EXPECT_EQ(std::count(r.paths.begin(), r.paths.end(), "/s/5.fsdb"), 1);
  const RecentFiles again = load_recent_files(file);
  EXPECT_EQ(again.paths, r.paths);
  forget(r, "/s/5.fsdb");
  EXPECT_EQ(load_recent_files(file).paths.front(), "/s/11.fsdb");
  clear(r);
  EXPECT_TRUE(load_recent_files(file).paths.empty());
  RecentFiles unsaved = load_recent_files({});  // no home: kept in memory only
  remember(unsaved, "/x.fsdb");
  EXPECT_EQ(unsaved.paths.size(), 1u);
}

}  // namespace
}  // namespace fusionscope::ui
