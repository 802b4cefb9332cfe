// Outputs are checked before anything is written and appear whole or not at all.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>

#include <gtest/gtest.h>

#include "file_guards.h"
#include "fusionscope/storage/output_file.h"
#include "fusionscope/storage/session_store.h"
#include "test_paths.h"

namespace fusionscope::storage {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string refusal(const fs::path& target, const OutputRules& rules) {
  try {
    check_output(target, rules);
  } catch (const OutputError& e) {
    return e.what();
  }
  return "";
}

OutputRules rules(bool force, std::vector<fs::path> inputs = {},
                  std::vector<fs::path> others = {}) {
  OutputRules r;
  r.force = force;
  r.inputs = std::move(inputs);
  r.others = std::move(others);
  return r;
}

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(OutputFile, WritesAppearOnlyOnCommit) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path target = dir / "k.csv.gz";
  {
    OutputFile out(target, {});
    EXPECT_EQ(out.temp_path().parent_path(), dir);
    EXPECT_TRUE(out.temp_path().filename().string().ends_with("k.csv.gz"));  // same extension
    testing::write_bytes(out.temp_path(), "a,b\n");
    EXPECT_FALSE(fs::exists(target));
    out.commit();
  }
  EXPECT_EQ(read(target), "a,b\n");
  EXPECT_EQ(files_in(dir), std::vector<std::string>{"k.csv.gz"});
  {
    OutputFile out(dir / "never.csv", {});
    testing::write_bytes(out.temp_path(), "half");
  }  // not committed
  EXPECT_EQ(files_in(dir), std::vector<std::string>{"k.csv.gz"});
}

TEST(OutputFile, RefusesSessionsInputsTwinsFoldersAndExistingFiles) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path session = dir / "s.fsdb";
  { SessionStore::create(session, SessionInfo{}); }
  const fs::path other = dir / "other.fsdb";
  fs::copy_file(session, other);
  const fs::path existing = dir / "old.csv";
  testing::write_bytes(existing, "keep me");

  EXPECT_NE(refusal(session, rules(false, {session})).find("an input of this command"),
            std::string::npos);
  // A session is never overwritten by an export, not even with --force.
  EXPECT_NE(refusal(other, rules(true)).find("is a fusionscope session"), std::string::npos);
  EXPECT_NE(refusal(dir / "x.csv", rules(false, {}, {dir / "./x.csv"})).find("two outputs"),
            std::string::npos);
  EXPECT_NE(refusal(dir, {}).find("folder"), std::string::npos);
  EXPECT_NE(refusal(existing, {}).find("already exists; pass --force"), std::string::npos);
  EXPECT_EQ(refusal(existing, rules(true)), "");
  EXPECT_NE(refusal(dir / "missing" / "x.csv", {}).find("does not exist"), std::string::npos);
  EXPECT_EQ(read(existing), "keep me");
}

TEST(OutputFile, NeverWritesThroughASymbolicLink) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path victim = dir / "victim.txt";
  testing::write_bytes(victim, "precious");
  const fs::path link = dir / "out.csv";
  fs::create_symlink(victim, link);
  EXPECT_NE(refusal(link, {}).find("symbolic link"), std::string::npos);
  // Into the session through a link: refused as the input it is.
  const fs::path session = dir / "s.fsdb";
  { SessionStore::create(session, SessionInfo{}); }
  fs::create_symlink(session, dir / "alias.csv");
  EXPECT_NE(refusal(dir / "alias.csv", rules(true, {session})).find("input"), std::string::npos);
  // With --force the link itself is replaced; what it pointed to is untouched.
  {
    OutputFile out(link, rules(true));
    testing::write_bytes(out.temp_path(), "export");
    out.commit();
  }
  EXPECT_FALSE(fs::is_symlink(link));
  EXPECT_EQ(read(link), "export");
  EXPECT_EQ(read(victim), "precious");
}

// Over the file size limit a write fails (SIGXFSZ ignored, as the command line does): the commit
// is never reached, the temporary file goes, and the old target stays.
TEST(OutputFile, AFileSizeLimitLeavesTheOldFile) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path target = dir / "big.json";
  testing::write_bytes(target, "old");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    int code = 0;
    try {
      OutputFile out(target, rules(true));
      std::ofstream f(out.temp_path(), std::ios::binary);
      f << std::string(1 << 20, 'x');
      f.close();
      if (!f)
        code = 3;  // the write failed, as it must: the commit is never reached
      else
        out.commit();
    } catch (...) {
      code = 4;
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_EQ(read(target), "old");
  EXPECT_EQ(files_in(dir), std::vector<std::string>{"big.json"});
}

TEST(OutputFile, ReasonsForAPerson) {
  EXPECT_EQ(write_error_reason(ENOSPC), "the disk is full");
  EXPECT_EQ(write_error_reason(EFBIG), "the file size limit was reached (ulimit -f)");
}

}  // namespace
}  // namespace fusionscope::storage
