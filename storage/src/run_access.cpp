// SessionStore's runs: listing them as readers should see them (state, damage), changing their
// description, deleting them, and loading one with its records checked against their digest.
#include <string>

#include "fusionscope/storage/session_store.h"
#include "schema.h"
#include "session_store_impl.h"

namespace fusionscope::storage {

using detail::Database;
using detail::RunRow;
using detail::Statement;
using detail::Transaction;

namespace {

// A read transaction, so that a load sees one consistent state while a writer goes on.
class ReadTransaction {
 public:
  explicit ReadTransaction(Database& db) : db_(db) { db_.statement("BEGIN").run(); }
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;
  ~ReadTransaction() { sqlite3_exec(db_.handle(), "COMMIT", nullptr, nullptr, nullptr); }

 private:
  Database& db_;
};

constexpr const char* kDescriptionDamaged =
    "its description (name, status, times) differs from what was written";

bool description_intact(const RunRow& row) {
  return row.info_digest.empty() ||
         row.info_digest == detail::info_digest(row.info, row.records_digest);
}

std::string run_label(const RunInfo& r) {
  return "run " + std::to_string(r.id);
}

// A run written whole-or-nothing that is not committed yet (or never will be): not listed.
bool staged(const RunRow& row) {
  return static_cast<int>(row.info.state) == detail::kStateStaged;
}

}  // namespace

RunInfo detail::StoreState::present(RunRow row) const {
  const bool intact = description_intact(row);
  RunInfo info = std::move(row.info);
  if (info.state == RunState::kWriting && !file->writer_alive(info.id))
    info.state = RunState::kInterrupted;
  if (!intact) {
    info.integrity = Integrity::kDamaged;
    info.damage = kDescriptionDamaged;
  }
  return info;
}

void detail::StoreState::record_interrupted_runs() {
  std::vector<int64_t> orphans;
  {
    Statement& st = db->statement("SELECT id FROM runs WHERE state IN (?, ?)");
    st.bind(1, int64_t{kStateWriting});
    st.bind(2, int64_t{kStateStaged});
    while (st.step())
      if (!file->writer_alive(st.int64(0))) orphans.push_back(st.int64(0));
  }
  if (orphans.empty()) return;
  Transaction tx(*db);
  for (int64_t id : orphans) {
    std::optional<RunRow> row = read_run_row(*db, id);
    // Checked again inside the transaction: the writer may have committed meanwhile.
    if (!row || file->writer_alive(id)) continue;
    if (staged(*row)) {
      // A whole-or-nothing run whose writer is gone: its records are worth nothing.
      delete_run_rows(*db, id);
      continue;
    }
    if (row->info.state != RunState::kWriting) continue;
    if (!description_intact(*row)) continue;  // damaged: left as it is, for a person to see
    row->info.state = RunState::kInterrupted;
    Statement& st = db->statement("UPDATE runs SET state = ?, info_digest = ? WHERE id = ?");
    st.bind(1, int64_t{kStateInterrupted});
    st.bind(2, std::string_view(info_digest(row->info, row->records_digest)));
    st.bind(3, id);
    st.run();
  }
  tx.commit();
}

std::vector<RunInfo> SessionStore::runs() const {
  std::vector<RunInfo> out;
  for (RunRow& row : detail::read_run_rows(*impl_->db))
    if (!staged(row)) out.push_back(impl_->present(std::move(row)));
  return out;
}

std::optional<RunInfo> SessionStore::run(int64_t run_id) const {
  std::optional<RunRow> row = detail::read_run_row(*impl_->db, run_id);
  if (!row || staged(*row)) return std::nullopt;
  return impl_->present(std::move(*row));
}

void SessionStore::update_run(const RunInfo& run) {
  impl_->require_writable("update a run");
  Database& db = *impl_->db;
  Transaction tx(db);
  std::optional<RunRow> row = detail::read_run_row(db, run.id);
  if (!row || staged(*row)) impl_->no_such_run(run.id);
  if (!description_intact(*row))
    throw DamagedRunError("session '" + impl_->path.string() + "': " + run_label(row->info) +
                          " is damaged (" + kDescriptionDamaged + "), so it is not changed");
  RunInfo updated = run;
  updated.state = row->info.state;
  Statement& st = db.statement(
      "UPDATE runs SET name = ?, config_json = ?, kind = ?, variant = ?, dtype = ?, warmup = ?, "
      "iterations = ?, cuda_graph = ?, wall_ns = ?, status = ?, error = ?, trace_status = ?, "
      "dropped_records = ?, created_utc = ?, info_digest = ? WHERE id = ?");
  detail::bind_run_description(st, updated);
  st.bind(15, std::string_view(detail::info_digest(updated, row->records_digest)));
  st.bind(16, run.id);
  st.run();
  tx.commit();
}

void SessionStore::rename_run(int64_t run_id, std::string_view name) {
  impl_->require_writable("rename a run");
  std::optional<RunRow> row = detail::read_run_row(*impl_->db, run_id);
  if (!row || staged(*row)) impl_->no_such_run(run_id);
  row->info.name = std::string(name);
  update_run(row->info);
}

void SessionStore::delete_run(int64_t run_id) {
  impl_->require_writable("delete a run");
  Transaction tx(*impl_->db);
  if (!detail::delete_run_rows(*impl_->db, run_id)) impl_->no_such_run(run_id);
  tx.commit();
}

RunData SessionStore::load_run(int64_t run_id, DamagePolicy damaged) const {
  Database& db = *impl_->db;
  RunData d;
  std::string records_digest;
  {
    ReadTransaction read(db);
    d.strings = detail::read_all_strings(db);
    std::optional<RunRow> row = detail::read_run_row(db, run_id);
    if (!row || staged(*row)) impl_->no_such_run(run_id);
    records_digest = row->records_digest;
    d.info = impl_->present(std::move(*row));
    detail::read_run_records(db, run_id, d);
  }
  detail::StringHashes hashes(d.strings);
  if (d.info.integrity != Integrity::kDamaged) {
    if (records_digest.empty()) {
      d.info.integrity = Integrity::kUnprotected;
    } else if (const auto expected = detail::RecordsDigest::decode(records_digest); !expected) {
      d.info.integrity = Integrity::kDamaged;
      d.info.damage = "the digest of its records is unreadable";
    } else if (const detail::RecordsDigest found = detail::digest_records(d, hashes);
               !(found == *expected)) {
      d.info.integrity = Integrity::kDamaged;
      d.info.damage = detail::describe_difference(*expected, found);
    } else {
      d.info.integrity = Integrity::kVerified;
    }
  }
  if (d.info.integrity == Integrity::kDamaged && damaged == DamagePolicy::kRefuse)
    throw DamagedRunError("session '" + impl_->path.string() + "': " + run_label(d.info) +
                          " is damaged: " + d.info.damage +
                          ". The file changed after the run was written; its data is not used");
  arrange_run(d);
  return d;
}

}  // namespace fusionscope::storage
