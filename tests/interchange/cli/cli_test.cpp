// `fusionscope import` and `fusionscope export` run as processes: exit codes, messages, and the
// files they write.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>

#include "fixture_json.h"
#include "fusionscope/interchange/torch_trace_import.h"
#include "fusionscope/storage/session_store.h"
#include "run_rows.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;
namespace t = fusionscope::testing;
using fusionscope::storage::SessionStore;

struct Result {
  int code = -1;
  std::string output;  // stdout and stderr together
};

std::string quoted(const std::string& s) {
  return "'" + s + "'";
}

Result run(const std::string& args) {
  const std::string command = quoted(FUSIONSCOPE_CLI_DRIVER) + " " + args + " 2>&1";
  Result r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) r.output.append(buffer, n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string fixture(const char* stem) {
  return quoted(t::fixture_path(stem).string());
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(InterchangeCli, ImportCreatesASessionAndReportsWhatItRead) {
  const auto session = t::scratch_dir() / "s.fsdb";
  const Result r = run("import " + fixture(t::kGegluEager) + " --out " + quoted(session));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("15 kernels, 6 memsets"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("15 of 15 kernels linked to their launch"), std::string::npos);
  EXPECT_NE(r.output.find("3 profiler steps"), std::string::npos);
  const auto store = SessionStore::open(session);
  ASSERT_EQ(store.runs().size(), 1u);
  EXPECT_EQ(store.runs()[0].variant, "torch-eager");
  EXPECT_EQ(store.session().name, "s");
  EXPECT_EQ(store.session().sm_count, 132);
}

TEST(InterchangeCli, ImportIntoAnExistingSessionNeedsAppend) {
  const auto session = t::scratch_dir() / "s.fsdb";
  ASSERT_EQ(run("import " + fixture(t::kGegluEager) + " --out " + quoted(session)).code, 0);
  const Result refused = run("import " + fixture(t::kGegluCompile) + " --out " + quoted(session));
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.output.find("--append"), std::string::npos) << refused.output;
  const Result appended = run("import " + fixture(t::kGegluCompile) + " --out " + quoted(session) +
                              " --append --name compiled");
  ASSERT_EQ(appended.code, 0) << appended.output;
  const auto store = SessionStore::open(session);
  ASSERT_EQ(store.runs().size(), 2u);
  EXPECT_EQ(store.runs()[1].name, "compiled");
  EXPECT_EQ(store.runs()[1].variant, "torch-compile");
}

TEST(InterchangeCli, BadTraceFailsWithAMessageAndLeavesNoSession) {
  const auto dir = t::scratch_dir();
  std::ofstream(dir / "bad.json") << "{\"traceEvents\": [1, 2";
  const auto session = dir / "s.fsdb";
  const Result r =
      run("import " + quoted((dir / "bad.json").string()) + " --out " + quoted(session));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("bad.json"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("not valid JSON"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(session));

  const Result missing =
      run("import " + quoted((dir / "none.json").string()) + " --out " + quoted(session));
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.output.find("cannot open"), std::string::npos) << missing.output;
}

TEST(InterchangeCli, ExportWritesChromeTraceAndCsvs) {
  const auto dir = t::scratch_dir();
  const auto session = dir / "s.fsdb";
  ASSERT_EQ(run("import " + fixture(t::kGegluCompile) + " --out " + quoted(session)).code, 0);
  const Result r =
      run("export " + quoted(session) + " --chrome " + quoted(dir / "t.json.gz") + " --csv " +
          quoted(dir / "k.csv") + " --summary-csv " + quoted(dir / "s.csv"));
  ASSERT_EQ(r.code, 0) << r.output;
  const auto again = fusionscope::interchange::read_torch_trace(dir / "t.json.gz");
  EXPECT_EQ(again.kernels.size(), 12u);
  const std::string kernels = read_text(dir / "k.csv");
  EXPECT_EQ(std::count(kernels.begin(), kernels.end(), '\n'), 13);  // header + 12 kernels
  const std::string summary = read_text(dir / "s.csv");
  EXPECT_EQ(std::count(summary.begin(), summary.end(), '\n'), 4);  // header + 3 names
  EXPECT_NE(summary.find("triton_poi_fused__unsafe_view_gelu_mul_0,3,"), std::string::npos);

  const Result to_stdout = run("export " + quoted(session) + " --run 1 --summary-csv -");
  EXPECT_EQ(to_stdout.code, 0);
  EXPECT_EQ(to_stdout.output.rfind("name,count,total_us", 0), 0u) << to_stdout.output;
}

TEST(InterchangeCli, ExportSaysWhichRunsThereAre) {
  const auto dir = t::scratch_dir();
  const auto session = dir / "s.fsdb";
  ASSERT_EQ(run("import " + fixture(t::kLinearEager) + " --out " + quoted(session)).code, 0);
  ASSERT_EQ(
      run("import " + fixture(t::kGegluEager) + " --out " + quoted(session) + " --append").code, 0);
  const Result ambiguous = run("export " + quoted(session) + " --csv " + quoted(dir / "k.csv"));
  EXPECT_EQ(ambiguous.code, 2);
  EXPECT_NE(ambiguous.output.find("--run 2"), std::string::npos) << ambiguous.output;
  const Result unknown =
      run("export " + quoted(session) + " --run 7 --csv " + quoted(dir / "k.csv"));
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.output.find("no run 7"), std::string::npos) << unknown.output;
  const Result nothing = run("export " + quoted(session) + " --run 1");
  EXPECT_EQ(nothing.code, 2);
  EXPECT_NE(nothing.output.find("nothing to write"), std::string::npos);
  const Result not_a_session =
      run("export " + quoted(dir / "missing.fsdb") + " --csv " + quoted(dir / "k.csv"));
  EXPECT_EQ(not_a_session.code, 1);
  EXPECT_NE(not_a_session.output.find("missing.fsdb"), std::string::npos) << not_a_session.output;
  const Result unwritable =
      run("export " + quoted(session) + " --run 1 --chrome /nonexistent-dir/t.json");
  EXPECT_EQ(unwritable.code, 1);
  EXPECT_NE(unwritable.output.find("/nonexistent-dir/t.json"), std::string::npos);
}

// Starts `import FIFO --out SESSION ARGS --progress`, feeds the FIFO an endless trace, presses
// Ctrl-C (SIGINT) once the import reports progress, and returns its exit code and output.
Result interrupt_import(const fs::path& fifo, const fs::path& session, const std::string& args) {
  Result r;
  if (mkfifo(fifo.c_str(), 0600) != 0) return r;
  std::signal(SIGPIPE, SIG_IGN);
  int out[2];
  if (pipe(out) != 0) return r;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(out[1], STDERR_FILENO);
    close(out[0]);
    const std::string command = quoted(FUSIONSCOPE_CLI_DRIVER) + " import " +
                                quoted(fifo.string()) + " --out " + quoted(session.string()) +
                                " --progress " + args;
    execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  std::thread writer([&] {
    const int fd = open(fifo.c_str(), O_WRONLY);
    if (fd < 0) return;
    const std::string head = R"({"traceEvents": [)";
    std::string events;
    for (int i = 0; i < 1000; ++i) {
      events += R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": )" +
                std::to_string(i) + R"(, "dur": 1}, )";
    }
    bool ok = write(fd, head.data(), head.size()) > 0;
    while (ok) ok = write(fd, events.data(), events.size()) > 0;  // until the reader is gone
    close(fd);
  });
  char buffer[4096];
  bool interrupted = false;
  ssize_t n = 0;
  while ((n = read(out[0], buffer, sizeof buffer)) > 0) {
    r.output.append(buffer, static_cast<size_t>(n));
    if (!interrupted && r.output.find("reading:") != std::string::npos) {
      kill(pid, SIGINT);
      interrupted = true;
    }
  }
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  writer.join();
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(InterchangeCli, CtrlCStopsAnImportAndLeavesNoRun) {
  const auto dir = t::scratch_dir();
  const auto session = dir / "s.fsdb";
  ASSERT_EQ(run("import " + fixture(t::kLinearEager) + " --out " + quoted(session)).code, 0);

  const Result appended = interrupt_import(dir / "endless.json", session, "--append");
  EXPECT_EQ(appended.code, 130) << appended.output;
  EXPECT_NE(appended.output.find("interrupted; no run was added"), std::string::npos)
      << appended.output;
  EXPECT_EQ(SessionStore::open(session).runs().size(), 1u);

  const auto fresh = dir / "new.fsdb";
  const Result created = interrupt_import(dir / "endless2.json", fresh, "");
  EXPECT_EQ(created.code, 130) << created.output;
  EXPECT_FALSE(fs::exists(fresh));
  EXPECT_FALSE(fs::exists(fresh.string() + "-wal"));
}

TEST(InterchangeCli, EveryEventMalformedFailsAndLeavesNoSession) {
  const auto dir = t::scratch_dir();
  std::ofstream(dir / "bad.json")
      << R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k"}, {"ph": 3}]})";
  const auto session = dir / "s.fsdb";
  const Result r =
      run("import " + quoted((dir / "bad.json").string()) + " --out " + quoted(session));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("none of its 2 events could be read"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(session));
}

// The commands as a user runs them: `import` (streamed, the session written while the trace is
// read), `export --chrome`, `import` of that export. Both sessions hold the same rows, args,
// process and thread names and kept texts as the import in memory of the same trace, and
// exporting the re-imported run writes the same file again.
class CliRoundTrip : public ::testing::TestWithParam<const char*> {};

// The first line where two texts differ, for a failure message.
std::string first_different_line(const std::string& a, const std::string& b) {
  std::istringstream in_a(a), in_b(b);
  std::string line_a, line_b;
  for (int n = 1;; ++n) {
    const bool more_a = static_cast<bool>(std::getline(in_a, line_a));
    const bool more_b = static_cast<bool>(std::getline(in_b, line_b));
    if (!more_a && !more_b) return "";
    if (!more_a || !more_b || line_a != line_b) {
      return "line " + std::to_string(n) + ":\n  " + line_a.substr(0, 300) + "\n  " +
             line_b.substr(0, 300);
    }
  }
}

TEST_P(CliRoundTrip, ImportExportImportGivesIdenticalRowsAndArgs) {
  const auto dir = t::scratch_dir();
  fs::create_directories(dir / "first");
  fs::create_directories(dir / "second");
  // Sessions of one name holding runs of one name, so that the exports may be the same bytes.
  const auto a = dir / "first" / "s.fsdb", b = dir / "second" / "s.fsdb";
  const auto a_trace = dir / "a.json.gz", b_trace = dir / "b.json.gz";
  Result r = run("import " + fixture(GetParam()) + " --out " + quoted(a));
  ASSERT_EQ(r.code, 0) << r.output;
  r = run("export " + quoted(a) + " --run 1 --chrome " + quoted(a_trace));
  ASSERT_EQ(r.code, 0) << r.output;
  r = run("import " + quoted(a_trace) + " --out " + quoted(b) + " --name " + GetParam());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find("skipped"), std::string::npos) << r.output;
  r = run("export " + quoted(b) + " --run 1 --chrome " + quoted(b_trace));
  ASSERT_EQ(r.code, 0) << r.output;

  const auto store_a = SessionStore::open(a);
  const auto store_b = SessionStore::open(b);
  const t::RunRows rows_a = t::rows_of(store_a.load_run(1));
  const t::RunRows rows_b = t::rows_of(store_b.load_run(1));
  EXPECT_TRUE(rows_a == rows_b) << t::first_difference(rows_a, rows_b);
  EXPECT_FALSE(rows_a.kernels.empty());
  EXPECT_FALSE(rows_a.threads.empty());
  EXPECT_FALSE(rows_a.extras.empty());

  // The streamed import stores what the import in memory does.
  auto memory = SessionStore::create(dir / "memory.fsdb", {});
  const auto trace = fusionscope::interchange::read_torch_trace(t::fixture_path(GetParam()));
  const t::RunRows rows_memory =
      t::rows_of(memory.load_run(fusionscope::interchange::write_torch_trace(memory, trace)));
  EXPECT_TRUE(rows_a == rows_memory) << t::first_difference(rows_a, rows_memory);

  const std::string text_a = t::gunzip_file(a_trace), text_b = t::gunzip_file(b_trace);
  EXPECT_TRUE(text_a == text_b) << first_different_line(text_a, text_b);
}

INSTANTIATE_TEST_SUITE_P(TorchFixtures, CliRoundTrip,
                         ::testing::Values(t::kLinearEager, t::kGegluEager, t::kGegluCompile));

}  // namespace
