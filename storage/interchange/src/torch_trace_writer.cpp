#include <algorithm>
#include <chrono>
#include <span>
#include <string>
#include <vector>

#include "fusionscope/interchange/torch_trace_import.h"
#include "fusionscope/storage/run_writer.h"
#include "imported_run_info.h"

namespace fusionscope::interchange {
namespace {

using Clock = std::chrono::steady_clock;

// Records go into the session in batches of this many: each is one transaction, a point to
// report progress and to stop when cancelled, and the most a batch copies.
constexpr size_t kBatch = size_t{1} << 16;

class BatchWriter {
 public:
  BatchWriter(storage::SessionStore& store, const TorchTrace& trace, const ImportOptions& options)
      : options_(options), start_(Clock::now()) {
    // Every string in one transaction.
    ids_.assign(trace.strings.size(), storage::kNoString);
    if (trace.strings.size() > 1) {
      const std::vector<storage::StringId> interned =
          store.intern_all(std::span<const std::string>(trace.strings).subspan(1));
      std::copy(interned.begin(), interned.end(), ids_.begin() + 1);
    }
    progress_.phase = ImportProgress::Phase::kWriting;
    progress_.events = trace.stats.events;
    progress_.records_total =
        trace.kernels.size() + trace.memops.size() + trace.api_calls.size() + trace.ranges.size();
  }

  // Writes `records` in batches, each with its strings renamed from the trace's to the
  // session's by `rename`.
  template <typename R, typename Rename, typename Insert>
  void write(const std::vector<R>& records, Rename rename, Insert insert) {
    std::vector<R> batch;
    for (size_t i = 0; i < records.size(); i += kBatch) {
      check_cancel();
      const size_t n = std::min(kBatch, records.size() - i);
      batch.assign(records.begin() + static_cast<std::ptrdiff_t>(i),
                   records.begin() + static_cast<std::ptrdiff_t>(i + n));
      for (auto& r : batch) rename(r);
      insert(std::span<const R>(batch));
      progress_.records += n;
      report(false);
    }
  }

  storage::StringId id(storage::StringId local) const {
    return local < ids_.size() ? ids_[local] : storage::kNoString;
  }

  void report(bool last) {
    if (!options_.progress) return;
    const auto now = Clock::now();
    if (!last && now < next_report_) return;
    next_report_ = now + std::chrono::milliseconds(100);
    progress_.seconds = std::chrono::duration<double>(now - start_).count();
    options_.progress(progress_);
  }

  void check_cancel() const {
    if (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed)) {
      throw ImportCancelled();
    }
  }

 private:
  const ImportOptions& options_;
  std::vector<storage::StringId> ids_;
  ImportProgress progress_;
  Clock::time_point start_, next_report_;
};

}  // namespace

int64_t write_torch_trace(storage::SessionStore& store, const TorchTrace& trace,
                          const WriteOptions& options, const ImportOptions& import) {
  // Fill the session's machine description only where it has none.
  storage::SessionInfo session = store.session();
  if (session.gpu_name.empty() && !trace.session.gpu_name.empty()) {
    session.gpu_name = trace.session.gpu_name;
    session.cc_major = trace.session.cc_major;
    session.cc_minor = trace.session.cc_minor;
    session.sm_count = trace.session.sm_count;
    if (session.driver_version.empty()) session.driver_version = trace.session.driver_version;
    if (session.cuda_version.empty()) session.cuda_version = trace.session.cuda_version;
    if (session.cupti_version.empty()) session.cupti_version = trace.session.cupti_version;
    store.update_session(session);
  }

  // Through a RunWriter: the run is shown as being written until commit(); on any failure or a
  // cancel the writer removes it, and if the process dies readers see it interrupted.
  BatchWriter w(store, trace, import);
  storage::RunWriter run(store, detail::imported_run_info(trace, options));
  w.write(
      trace.kernels,
      [&w](storage::KernelRecord& k) {
        k.name = w.id(k.name);
        k.op = w.id(k.op);
      },
      [&](std::span<const storage::KernelRecord> b) { run.add_kernels(b); });
  w.write(
      trace.api_calls, [&w](storage::ApiCallRecord& a) { a.name = w.id(a.name); },
      [&](std::span<const storage::ApiCallRecord> b) { run.add_api_calls(b); });
  w.write(
      trace.ranges, [&w](storage::RangeRecord& r) { r.name = w.id(r.name); },
      [&](std::span<const storage::RangeRecord> b) { run.add_ranges(b); });
  w.write(
      trace.memops, [](storage::MemopRecord&) {},
      [&](std::span<const storage::MemopRecord> b) { run.add_memops(b); });
  w.check_cancel();
  run.commit();
  w.report(true);
  return run.id();
}

}  // namespace fusionscope::interchange
