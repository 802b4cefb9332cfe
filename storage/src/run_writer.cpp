#include "fusionscope/storage/run_writer.h"

#include <algorithm>
#include <type_traits>
#include <vector>

#include "fusionscope/storage/utc_time.h"
#include "schema.h"
#include "session_store_impl.h"

namespace fusionscope::storage {

using detail::Database;
using detail::Statement;
using detail::Transaction;

namespace {

// String ids a record refers to must exist in the session.
template <typename R>
void check_strings(detail::StoreState& s, const R& r) {
  auto check = [&](StringId id) { s.require_string(id); };
  if constexpr (std::is_same_v<R, KernelRecord>) {
    check(r.name);
    check(r.op);
    check(r.extra);
  } else if constexpr (std::is_same_v<R, KernelMetricRecord>) {
    check(r.name);
    check(r.unit);
  } else if constexpr (std::is_same_v<R, SampleRecord>) {
    check(r.metric);
  } else if constexpr (std::is_same_v<R, MemopRecord>) {
    check(r.extra);
  } else if constexpr (std::is_same_v<R, ThreadRecord>) {
    check(r.name);
  } else {
    check(r.name);
    check(r.extra);
  }
}

}  // namespace

RunWriter::RunWriter(SessionStore& store, const RunInfo& info, Visibility visibility)
    : store_(store),
      info_(info),
      writing_state_(visibility == Visibility::kWhenComplete ? detail::kStateStaged
                                                             : detail::kStateWriting) {
  detail::StoreState& s = *store_.impl_;
  s.require_writable("add a run");
  Database& db = *s.db;
  if (info_.created_utc.empty()) info_.created_utc = utc_now();
  info_.state = RunState::kWriting;
  info_.integrity = Integrity::kUnprotected;
  info_.damage.clear();
  Transaction tx(db);
  {
    // A new id is above every run there is and every run there was (session.last_run_id), so
    // that properties naming a deleted run never name this one.
    Statement& st = db.statement(
        "SELECT max(coalesce((SELECT max(id) FROM runs), 0), "
        "coalesce((SELECT last_run_id FROM session WHERE id = 1), 0)) + 1");
    id_ = st.step() ? st.int64(0) : 1;
    st.reset();
  }
  info_.id = id_;
  // The writer's mark is taken before the run is visible: no reader can find the run kWriting
  // with nobody writing it.
  s.file->mark_writer(id_);
  try {
    Statement& st = db.statement(
        "INSERT INTO runs (name, config_json, kind, variant, dtype, warmup, iterations, "
        "cuda_graph, wall_ns, status, error, trace_status, dropped_records, created_utc, id, "
        "state, records_digest, info_digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?, '', ?)");
    detail::bind_run_description(st, info_);
    st.bind(15, id_);
    st.bind(16, int64_t{writing_state_});
    st.bind(17, std::string_view(detail::info_digest(as_stored(info_), "")));
    st.run();
    Statement& last = db.statement("UPDATE session SET last_run_id = ? WHERE id = 1");
    last.bind(1, id_);
    last.run();
    tx.commit();
  } catch (...) {
    s.file->unmark_writer(id_);
    throw;
  }
}

RunWriter::~RunWriter() {
  if (done_) return;
  try {
    discard();
  } catch (const StoreError&) {
    // The run stays kWriting in the file; with this writer's mark gone, readers see it
    // interrupted, and the next read-write open records that.
    release_lock();
  }
}

void RunWriter::require_open(std::string_view what) const {
  if (done_)
    throw StoreError("session '" + store_.path().string() + "': cannot " + std::string(what) +
                     " of run " + std::to_string(id_) + ": it is already " +
                     (committed_ ? "committed" : "discarded"));
}

void RunWriter::release_lock() {
  store_.impl_->file->unmark_writer(id_);
}

RunInfo RunWriter::as_stored(const RunInfo& info) const {
  RunInfo stored = info;
  stored.state = static_cast<RunState>(writing_state_);
  return stored;
}

void RunWriter::set_info(const RunInfo& info) {
  require_open("describe");
  RunInfo next = info;
  next.id = id_;
  next.state = RunState::kWriting;
  next.integrity = Integrity::kUnprotected;
  next.damage.clear();
  Database& db = *store_.impl_->db;
  Transaction tx(db);
  Statement& st = db.statement(
      "UPDATE runs SET name = ?, config_json = ?, kind = ?, variant = ?, dtype = ?, warmup = ?, "
      "iterations = ?, cuda_graph = ?, wall_ns = ?, status = ?, error = ?, trace_status = ?, "
      "dropped_records = ?, created_utc = ?, info_digest = ? WHERE id = ? AND state = ?");
  detail::bind_run_description(st, next);
  st.bind(15, std::string_view(detail::info_digest(as_stored(next), "")));
  st.bind(16, id_);
  st.bind(17, int64_t{writing_state_});
  st.run();
  if (sqlite3_changes(db.handle()) == 0) store_.impl_->no_such_run(id_);
  tx.commit();
  info_ = next;
}

template <typename R>
void RunWriter::add(std::span<const R> records, uint64_t& count) {
  require_open("add records");
  if (records.empty()) return;
  detail::StoreState& s = *store_.impl_;
  for (const R& r : records) check_strings(s, r);

  // Rows go in in start order: the (run_id, start) index then grows at its end, and a run's
  // rows lie in the table in the order they are read back.
  std::vector<R> sorted;
  if constexpr (requires(const R& r) { r.start_ns; }) {
    auto by_start = [](const R& a, const R& b) { return a.start_ns < b.start_ns; };
    if (!std::is_sorted(records.begin(), records.end(), by_start)) {
      sorted.assign(records.begin(), records.end());
      std::stable_sort(sorted.begin(), sorted.end(), by_start);
      records = sorted;
    }
  }
  Transaction tx(*s.db);
  s.require_run(id_);
  detail::insert_records(*s.db, id_, records);
  // Inside the transaction: the texts of strings not cached are read in it, not each in a
  // transaction of its own.
  uint64_t hash = 0;
  for (const R& r : records) hash += detail::record_hash(r, s.string_hashes);
  tx.commit();
  // Only what is committed counts towards the digest.
  records_hash_ += hash;
  count += records.size();
}

void RunWriter::add_kernels(std::span<const KernelRecord> records) {
  add(records, counts_.kernels);
}
void RunWriter::add_api_calls(std::span<const ApiCallRecord> records) {
  add(records, counts_.api_calls);
}
void RunWriter::add_ranges(std::span<const RangeRecord> records) {
  add(records, counts_.ranges);
}
void RunWriter::add_memops(std::span<const MemopRecord> records) {
  add(records, counts_.memops);
}
void RunWriter::add_kernel_metrics(std::span<const KernelMetricRecord> records) {
  add(records, counts_.kernel_metrics);
}
void RunWriter::add_samples(std::span<const SampleRecord> records) {
  add(records, counts_.samples);
}

void RunWriter::add_process(uint32_t pid, std::string_view name) {
  require_open("name a process");
  const ProcessRecord p{pid, store_.intern(name)};
  detail::StoreState& s = *store_.impl_;
  Transaction tx(*s.db);
  s.require_run(id_);
  detail::insert_records(*s.db, id_, std::span<const ProcessRecord>(&p, 1));
  tx.commit();
  processes_[pid] = std::string(name);
}

void RunWriter::add_threads(std::span<const ThreadRecord> threads) {
  require_open("name threads");
  if (threads.empty()) return;
  detail::StoreState& s = *store_.impl_;
  for (const ThreadRecord& t : threads) check_strings(s, t);
  Transaction tx(*s.db);
  s.require_run(id_);
  detail::insert_records(*s.db, id_, threads);
  tx.commit();
  for (const ThreadRecord& t : threads)
    threads_[{t.pid, t.thread_id}] = s.string_text(t.name).value_or("");
}

void RunWriter::set_extra(std::string_view key, std::string_view value) {
  require_open("keep a text with the run");
  const RunExtraRecord e{std::string(key), std::string(value)};
  detail::StoreState& s = *store_.impl_;
  Transaction tx(*s.db);
  s.require_run(id_);
  detail::insert_records(*s.db, id_, std::span<const RunExtraRecord>(&e, 1));
  tx.commit();
  extras_.insert_or_assign(e.key, e.value);
}

void RunWriter::commit() {
  require_open("commit");
  detail::StoreState& s = *store_.impl_;
  detail::RecordsDigest digest;
  digest.kernels = counts_.kernels;
  digest.memops = counts_.memops;
  digest.api_calls = counts_.api_calls;
  digest.ranges = counts_.ranges;
  digest.kernel_metrics = counts_.kernel_metrics;
  digest.samples = counts_.samples;
  digest.processes = processes_.size();
  digest.hash = records_hash_;
  for (const auto& [pid, name] : processes_) {
    const ProcessRecord p{pid, store_.intern(name)};
    digest.hash += detail::record_hash(p, s.string_hashes);
  }
  digest.threads = threads_.size();
  for (const auto& [key, name] : threads_) {
    const ThreadRecord t{key.first, key.second, store_.intern(name)};
    digest.hash += detail::record_hash(t, s.string_hashes);
  }
  digest.extras = extras_.size();
  for (const auto& [key, value] : extras_)
    digest.hash += detail::record_hash(RunExtraRecord{key, value}, s.string_hashes);
  const std::string records = digest.encode();
  RunInfo final_info = info_;
  final_info.state = RunState::kComplete;

  Database& db = *s.db;
  Transaction tx(db);
  Statement& st = db.statement(
      "UPDATE runs SET name = ?, config_json = ?, kind = ?, variant = ?, dtype = ?, warmup = ?, "
      "iterations = ?, cuda_graph = ?, wall_ns = ?, status = ?, error = ?, trace_status = ?, "
      "dropped_records = ?, created_utc = ?, state = ?, records_digest = ?, info_digest = ? "
      "WHERE id = ? AND state = ?");
  detail::bind_run_description(st, final_info);
  st.bind(15, int64_t{detail::kStateComplete});
  st.bind(16, std::string_view(records));
  st.bind(17, std::string_view(detail::info_digest(final_info, records)));
  st.bind(18, id_);
  st.bind(19, int64_t{writing_state_});
  st.run();
  if (sqlite3_changes(db.handle()) == 0)
    throw StoreError("session '" + store_.path().string() + "': run " + std::to_string(id_) +
                     " was deleted or changed by someone else while it was written");
  tx.commit();
  done_ = committed_ = true;
  info_ = final_info;
  release_lock();
}

void RunWriter::discard() {
  if (done_) return;
  detail::StoreState& s = *store_.impl_;
  Transaction tx(*s.db);
  detail::delete_run_rows(*s.db, id_);
  tx.commit();
  done_ = true;
  release_lock();
}

}  // namespace fusionscope::storage
