// The session file's schema: the frozen version-1 layout and the forward migrations that lead to
// the current version. docs/session-format.md describes the same thing for people.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fusionscope::storage::detail {

class Database;

// PRAGMA application_id of every session file: the ASCII bytes "FSDB".
inline constexpr int32_t kApplicationId = 0x46534442;
inline constexpr int kCurrentSchemaVersion = 4;
// New files get this page size: large pages make bulk ingest and whole-run loads cheaper.
inline constexpr int kPageSize = 16384;

// Writes the version-1 tables into an empty database and sets user_version to 1.
void create_schema_v1(Database& db);
// Applies every migration from the database's user_version up to kCurrentSchemaVersion, each in
// its own transaction (which also sets the new user_version).
void migrate_to_current(Database& db);

// What our tables and indexes look like in sqlite_master (name -> its CREATE statement) in a file
// at the current version: every file fusionscope makes went through the same statements. A file
// whose definitions differ was damaged (or changed by hand), and would be read wrongly.
// Returns, in words, each of ours that is missing or differs.
std::vector<std::string> schema_differences(Database& db);

// Run states as stored in runs.state (RunState's values).
inline constexpr int kStateWriting = 0;
inline constexpr int kStateComplete = 1;
inline constexpr int kStateInterrupted = 2;
// (v4) Being written by a writer that publishes its run whole or not at all (an import): readers
// do not list the run until it is complete, and a run left so by a writer that is gone is removed
// by the next read-write open.
inline constexpr int kStateStaged = 3;

}  // namespace fusionscope::storage::detail
