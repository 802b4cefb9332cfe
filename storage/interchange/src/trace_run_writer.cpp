#include "trace_run_writer.h"

#include <algorithm>
#include <chrono>
#include <span>

namespace fusionscope::interchange::detail {
namespace {

using Clock = std::chrono::steady_clock;

// Batches queued at most: the reader waits rather than holding more records twice.
constexpr size_t kQueueDepth = 4;
// Records per transaction: a point to stop when cancelled, and the most a transaction holds.
constexpr size_t kTransaction = size_t{1} << 16;

}  // namespace

TraceRunWriter::TraceRunWriter(storage::SessionStore& store, const storage::RunInfo& provisional,
                               const ImportOptions& options, uint64_t /*records_total_hint*/)
    : store_(store), options_(options) {
  run_ = std::make_unique<storage::RunWriter>(store, provisional,
                                              storage::RunWriter::Visibility::kWhenComplete);
  thread_ = std::thread([this] { run(); });
}

TraceRunWriter::~TraceRunWriter() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
    abandon_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
  // The writing thread has ended: an uncommitted run is removed here, on this thread.
  run_.reset();
}

void TraceRunWriter::rethrow_if_failed() {
  if (!failed()) return;
  std::lock_guard lock(mutex_);
  std::rethrow_exception(error_);
}

void TraceRunWriter::check_cancel() const {
  if (abandon_.load(std::memory_order_relaxed) ||
      (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed))) {
    throw ImportCancelled();
  }
}

void TraceRunWriter::push(RecordBatch batch) {
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return queue_.size() < kQueueDepth || failed(); });
    if (failed()) std::rethrow_exception(error_);
    queue_.push_back({std::move(batch), std::nullopt});
  }
  changed_.notify_all();
}

RecordBatch TraceRunWriter::take_spare() {
  std::lock_guard lock(mutex_);
  if (spares_.empty()) return {};
  RecordBatch b = std::move(spares_.back());
  spares_.pop_back();
  return b;
}

int64_t TraceRunWriter::finish(RecordBatch last, RunEnding ending, uint64_t records_total) {
  const auto start = Clock::now();
  ImportProgress p;
  p.phase = ImportProgress::Phase::kWriting;
  p.records_total = records_total;
  // A first report before the last batch goes: a cancel from it leaves no run.
  if (options_.progress) {
    p.records = written();
    options_.progress(p);
  }
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return queue_.size() < kQueueDepth || failed(); });
    if (failed()) std::rethrow_exception(error_);
    queue_.push_back({std::move(last), std::move(ending)});
    closing_ = true;
  }
  changed_.notify_all();
  while (true) {
    std::unique_lock lock(mutex_);
    if (changed_.wait_for(lock, std::chrono::milliseconds(100), [&] { return done_ || failed(); }))
      break;
    lock.unlock();
    if (options_.progress) {
      p.records = written();
      p.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      options_.progress(p);
    }
  }
  thread_.join();
  rethrow_if_failed();
  if (options_.progress) {
    p.records = written();
    p.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    options_.progress(p);
  }
  return run_->id();
}

void TraceRunWriter::run() {
  try {
    while (true) {
      Item item;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return !queue_.empty() || abandon_; });
        if (abandon_) return;
        item = std::move(queue_.front());
        queue_.pop_front();
      }
      changed_.notify_all();
      write(item);
      if (!item.ending) {
        RecordBatch& b = item.batch;
        b.strings.clear();
        b.kernels.clear();
        b.api_calls.clear();
        b.ranges.clear();
        b.memops.clear();
        std::lock_guard lock(mutex_);
        if (spares_.size() < kQueueDepth) spares_.push_back(std::move(b));
      }
      if (item.ending) {
        {
          std::lock_guard lock(mutex_);
          done_ = true;
        }
        changed_.notify_all();
        return;
      }
    }
  } catch (...) {
    {
      std::lock_guard lock(mutex_);
      error_ = std::current_exception();
      failed_.store(true, std::memory_order_release);
    }
    changed_.notify_all();
  }
}

void TraceRunWriter::write(Item& item) {
  check_cancel();
  RecordBatch& b = item.batch;
  if (!b.strings.empty()) {
    // Strings arrive in the order the trace's ids were given, each once.
    if (b.first_string != ids_.size())
      throw InterchangeError("internal error: strings handed to the writer out of order");
    const std::vector<storage::StringId> interned = store_.intern_all(b.strings);
    ids_.insert(ids_.end(), interned.begin(), interned.end());
  }
  auto id = [this](storage::StringId s) { return s < ids_.size() ? ids_[s] : storage::kNoString; };
  for (auto& k : b.kernels) {
    k.name = id(k.name);
    k.op = id(k.op);
    k.extra = id(k.extra);
  }
  for (auto& a : b.api_calls) {
    a.name = id(a.name);
    a.extra = id(a.extra);
  }
  for (auto& r : b.ranges) {
    r.name = id(r.name);
    r.extra = id(r.extra);
  }
  for (auto& m : b.memops) m.extra = id(m.extra);

  // Each a transaction of its own, with a chance to stop between them. Each goes in in start
  // order, as RunWriter puts them: sorted here, in the batch, rather than copied there.
  auto add = [this](auto& records, auto add_to_run) {
    for (size_t i = 0; i < records.size(); i += kTransaction) {
      check_cancel();
      const size_t n = std::min(kTransaction, records.size() - i);
      const auto part = std::span(records).subspan(i, n);
      auto by_start = [](const auto& x, const auto& y) { return x.start_ns < y.start_ns; };
      if (!std::is_sorted(part.begin(), part.end(), by_start))
        std::stable_sort(part.begin(), part.end(), by_start);
      add_to_run(part);
      written_.fetch_add(n, std::memory_order_relaxed);
    }
  };
  storage::RunWriter& run = *run_;
  add(b.kernels, [&](auto s) { run.add_kernels(s); });
  add(b.api_calls, [&](auto s) { run.add_api_calls(s); });
  add(b.ranges, [&](auto s) { run.add_ranges(s); });
  add(b.memops, [&](auto s) { run.add_memops(s); });
  if (!item.ending) return;

  RunEnding& end = *item.ending;
  // The session's machine description, where it has none.
  storage::SessionInfo session = store_.session();
  if (session.gpu_name.empty() && !end.session.gpu_name.empty()) {
    session.gpu_name = end.session.gpu_name;
    session.cc_major = end.session.cc_major;
    session.cc_minor = end.session.cc_minor;
    session.sm_count = end.session.sm_count;
    if (session.driver_version.empty()) session.driver_version = end.session.driver_version;
    if (session.cuda_version.empty()) session.cuda_version = end.session.cuda_version;
    if (session.cupti_version.empty()) session.cupti_version = end.session.cupti_version;
    store_.update_session(session);
  }
  for (const auto& [pid, name] : end.processes) run.add_process(pid, name);
  for (auto& t : end.threads) t.name = id(t.name);
  run.add_threads(end.threads);
  for (const auto& e : end.extras) run.set_extra(e.key, e.value);
  check_cancel();
  // A trace that does not say when it was taken keeps the time the run was begun.
  if (end.info.created_utc.empty()) end.info.created_utc = run.info().created_utc;
  run.set_info(end.info);
  run.commit();
}

}  // namespace fusionscope::interchange::detail
