// A typo never destroys a session or a file: outputs are checked before anything is written,
// never follow a link onto its target, appear whole or not at all, and CSV cells are never
// formulas.
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "cli_process.h"
#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/session_store.h"
#include "test_paths.h"

namespace fusionscope::testing {
namespace {

namespace fs = std::filesystem;
using namespace fusionscope::storage;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

fs::path session_with_kernels(const fs::path& dir, const std::string& kernel_name, int n = 3) {
  const fs::path path = dir / "s.fsdb";
  SessionStore store = SessionStore::create(path, SessionInfo{});
  RunWriter run(store, RunInfo{});
  std::vector<KernelRecord> ks(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    ks[static_cast<size_t>(i)].start_ns = i * 100;
    ks[static_cast<size_t>(i)].end_ns = i * 100 + 50;
    ks[static_cast<size_t>(i)].name = store.intern(kernel_name);
  }
  run.add_kernels(ks);
  run.commit();
  return path;
}

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(CliOutputs, ASessionIsNeverOverwrittenByAnExport) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path s = session_with_kernels(dir, "k");
  const std::string before = read(s);
  for (const char* flag : {"--csv", "--chrome", "--summary-csv"}) {
    const CliResult r = run_cli({"export", s.string(), "--run", "1", flag, s.string()});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("an input of this command"), std::string::npos) << r.err;
    const CliResult forced =
        run_cli({"export", s.string(), "--run", "1", flag, s.string(), "--force"});
    EXPECT_EQ(forced.code, 2) << forced.err;
  }
  // Another session is not an export's to replace either.
  const fs::path other = dir / "other.fsdb";
  fs::copy_file(s, other);
  const CliResult r = run_cli({"export", s.string(), "--csv", other.string(), "--force"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("is a fusionscope session"), std::string::npos) << r.err;
  EXPECT_EQ(read(s), before);
  EXPECT_EQ(read(other), before);
}

TEST(CliOutputs, TwoOutputsInOneFileAreRefused) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path s = session_with_kernels(dir, "k");
  const fs::path x = dir / "x.json";
  const CliResult r = run_cli(
      {"export", s.string(), "--chrome", x.string(), "--csv", (dir / "." / "x.json").string()});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("two outputs"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(x));
  EXPECT_EQ(run_cli({"export", s.string(), "--csv", "-", "--chrome", "-"}).code, 2);
}

TEST(CliOutputs, AnExistingFileNeedsForce) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path s = session_with_kernels(dir, "k");
  const fs::path csv = dir / "k.csv";
  std::ofstream(csv) << "my notes";
  const CliResult r = run_cli({"export", s.string(), "--csv", csv.string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("pass --force"), std::string::npos) << r.err;
  EXPECT_EQ(read(csv), "my notes");
  EXPECT_EQ(run_cli({"export", s.string(), "--csv", csv.string(), "--force"}).code, 0);
  EXPECT_NE(read(csv).find("name,op,"), std::string::npos);
  EXPECT_EQ(files_in(dir), (std::vector<std::string>{"k.csv", "s.fsdb"}));
}

TEST(CliOutputs, ALinkIsReplacedNeverWrittenThrough) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path s = session_with_kernels(dir, "k");
  const fs::path victim = dir / "victim.txt";
  std::ofstream(victim) << "precious";
  const fs::path link = dir / "out.csv";
  fs::create_symlink(victim, link);
  EXPECT_EQ(run_cli({"export", s.string(), "--csv", link.string()}).code, 2);
  EXPECT_EQ(run_cli({"export", s.string(), "--csv", link.string(), "--force"}).code, 0);
  EXPECT_EQ(read(victim), "precious");
  EXPECT_FALSE(fs::is_symlink(link));
  // A link to the session is the session.
  fs::create_symlink(s, dir / "alias.json");
  EXPECT_EQ(
      run_cli({"export", s.string(), "--chrome", (dir / "alias.json").string(), "--force"}).code,
      2);
}

TEST(CliOutputs, AFileSizeLimitFailsCleanlyInsteadOfKilling) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path s = session_with_kernels(dir, "a_kernel_with_a_long_name_to_fill_the_trace", 2000);
  const fs::path json = dir / "t.json";
  std::ofstream(json) << "old";
  CliOptions o;
  o.file_size_limit = 64 * 1024;  // the session is read, the trace does not fit
  const CliResult r = run_cli({"export", s.string(), "--chrome", json.string(), "--force"}, o);
  EXPECT_EQ(r.signal, 0) << "killed instead of failing";
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("file size limit"), std::string::npos) << r.err;
  EXPECT_EQ(read(json), "old");  // the old file stays, no half file beside it
  EXPECT_EQ(files_in(dir), (std::vector<std::string>{"s.fsdb", "t.json"}));
}

TEST(CliOutputs, CsvCellsAreNeverFormulas) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path s = session_with_kernels(dir, "=HYPERLINK(\"http://evil\",\"x\")", 1);
  const CliResult r = run_cli({"export", s.string(), "--csv", "-"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"'=HYPERLINK(\"\"http://evil\"\",\"\"x\"\")\""), std::string::npos)
      << r.out;
  for (const char* lead : {"+cmd", "-2+3", "@SUM"}) {
    const fs::path d2 = dir / (std::string("d") + lead);
    fs::create_directories(d2);
    const fs::path s2 = session_with_kernels(d2, lead, 1);
    const CliResult r2 = run_cli({"export", s2.string(), "--summary-csv", "-"});
    EXPECT_NE(r2.out.find(std::string("\n'") + lead), std::string::npos) << r2.out;
  }
}

}  // namespace
}  // namespace fusionscope::testing
