// Reading and writing the session's tables, below SessionStore and RunWriter: what load_run(),
// the writers and the version-3 migration share.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fusionscope/storage/session_store.h"
#include "schema.h"

namespace fusionscope::storage::detail {

class Database;
class Statement;

// A run's row as stored: its description and the digests written with it.
struct RunRow {
  RunInfo info;  // state as stored (a dead writer's run still reads kWriting here)
  std::string records_digest;
  std::string info_digest;
};

std::optional<RunRow> read_run_row(Database& db, int64_t run_id);
std::vector<RunRow> read_run_rows(Database& db);
// Binds every column of `r` but id, state and the digests, starting at parameter 1 (14 values).
void bind_run_description(Statement& st, const RunInfo& r);

SessionInfo read_session_row(Database& db);
std::vector<std::pair<std::string, std::string>> read_properties(Database& db);
std::string read_session_digest(Database& db);
// Recomputes session.digest from the session row and the properties (inside a transaction).
void write_session_digest(Database& db);

// Every string of the session, index = id (gaps are empty).
std::vector<std::string> read_all_strings(Database& db);
// The largest string id at or after `first` that is not damage (see read_all_strings).
int64_t string_id_limit(Database& db, int64_t first);

// Reads every record of run `run_id` into `out` (kernels, memops, API calls, ranges, metrics,
// samples, processes, threads, extras), unsorted; string ids as stored. `version` is the layout
// of the tables (a migration step reads an older one; columns and tables added later read as
// their defaults, empty).
void read_run_records(Database& db, int64_t run_id, RunData& out,
                      int version = kCurrentSchemaVersion);

// Inserts a batch of records of run `run_id` (inside a transaction).
template <typename R>
void insert_records(Database& db, int64_t run_id, std::span<const R> records);

// Deletes run `run_id` and every record of it (inside a transaction); false if there is none.
bool delete_run_rows(Database& db, int64_t run_id);

}  // namespace fusionscope::storage::detail
