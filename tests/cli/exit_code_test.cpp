// Exit codes and messages: 2 for every bad argument (never CLI11's own codes), 1 for what the
// command could not do, and messages for people: no SQL, no library function names, no numbers
// hundreds of digits long. Standard output that cannot be written is a failure.
#include <sqlite3.h>

#include <regex>

#include <gtest/gtest.h>

#include "cli_process.h"
#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/session_store.h"
#include "test_paths.h"

namespace fusionscope::testing {
namespace {

namespace fs = std::filesystem;
using namespace fusionscope::storage;

fs::path one_run_session(const fs::path& dir) {
  const fs::path path = dir / "s.fsdb";
  SessionStore store = SessionStore::create(path, SessionInfo{});
  RunInfo info;
  info.name = "geglu-post / eager";
  info.status = RunStatus::kOk;
  RunWriter run(store, info);
  KernelRecord k;
  k.end_ns = 1000;
  k.name = store.intern("_Z9gate_gemmv");
  run.add_kernels(std::span(&k, 1));
  run.commit();
  return path;
}

// What no message for a person may contain.
void expect_readable(const std::string& message) {
  for (const char* word : {"stoll", "stoi", "SELECT", "INSERT", "no such table", "sqlite_master",
                           "CLI::", "terminate called"})
    EXPECT_EQ(message.find(word), std::string::npos) << word << " in: " << message;
  EXPECT_FALSE(std::regex_search(message, std::regex("[0-9]{25}"))) << message;
}

TEST(CliExitCodes, EveryBadArgumentIsTwo) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const std::string s = one_run_session(dir).string();
  const std::vector<std::vector<std::string>> cases = {
      {},                                                           // no subcommand
      {"frobnicate"},                                               // unknown subcommand
      {"report"},                                                   // missing positional
      {"report", s, "extra"},                                       // one positional too many
      {"report", s, "--top", "0"},                                  // out of range
      {"report", s, "--top", "1e3"},                                // not a plain number
      {"report", s, "--top", "0x10"},                               // hexadecimal
      {"report", s, "--no-such-flag"},                              // unknown option
      {"export", s, "--run", "0x10", "--csv", "-"},                 // read as 16 before
      {"export", s, "--run", "-1", "--csv", "-"},                   // negative
      {"export", s, "--run", "1.5", "--csv", "-"},                  // fraction
      {"export", s, "--run", " 1", "--csv", "-"},                   // padded
      {"export", s, "--run", std::string(400, '9'), "--csv", "-"},  // 400 digits
      {"export", s, "--run", "99999999999999999999", "--csv", "-"},
      {"export", s, "--run"},                     // missing value
      {"export", s},                              // nothing to write
      {"export", s, "--run", "7", "--csv", "-"},  // no such run
      {"import", "t.json"},                       // missing --out
      {"advise", s, "--run", "0x1"},
  };
  for (const auto& args : cases) {
    std::string line;
    for (const auto& a : args) line += a.substr(0, 30) + " ";
    SCOPED_TRACE(line);
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.signal, 0);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_FALSE(r.err.empty());
    expect_readable(r.err);
  }
}

TEST(CliExitCodes, HelpAndVersionAreZero) {
  EXPECT_EQ(run_cli({"--help"}).code, 0);
  const CliResult r = run_cli({"export", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--force"), std::string::npos);
}

TEST(CliExitCodes, WhatCannotBeDoneIsOneAndSaysWhy) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const CliResult missing = run_cli({"report", (dir / "missing.fsdb").string()});
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("no such file"), std::string::npos) << missing.err;
  // A file with our identity but none of our tables: named for what it is, no SQL.
  const fs::path hollow = dir / "hollow.fsdb";
  { SessionStore::create(hollow, SessionInfo{}); }
  {
    sqlite3* db = nullptr;
    sqlite3_open(hollow.c_str(), &db);
    sqlite3_exec(db, "DROP TABLE strings; DROP TABLE kernels", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  const CliResult r = run_cli({"report", hollow.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("tables are missing or damaged"), std::string::npos) << r.err;
  expect_readable(r.err);
}

TEST(CliExitCodes, StandardOutputThatCannotBeWrittenIsAFailure) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const fs::path dir = fusionscope::testing::scratch_dir();
  const std::string s = one_run_session(dir).string();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"report", s}, std::vector<std::string>{"export", s, "--csv", "-"},
        std::vector<std::string>{"export", s, "--chrome", "-"}}) {
    CliOptions o;
    o.stdout_path = "/dev/full";
    const CliResult r = run_cli(args, o);
    EXPECT_EQ(r.code, 1) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("the disk is full"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace fusionscope::testing
