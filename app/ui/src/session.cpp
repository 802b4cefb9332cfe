#include "session.h"

#include <algorithm>
#include <exception>

#include "fusionscope/analysis/demangle.h"

namespace fusionscope::ui {

const std::string& NameCache::full_name(storage::StringId id) const {
  static const std::string empty;
  return id < full.size() ? full[id] : empty;
}

const std::string& NameCache::short_name(storage::StringId id) const {
  static const std::string empty;
  return id < short_.size() ? short_[id] : empty;
}

std::vector<const storage::KernelMetricRecord*> LoadedRun::metrics_for(
    uint32_t correlation_id) const {
  std::vector<const storage::KernelMetricRecord*> out;
  auto it = std::lower_bound(metrics_by_correlation.begin(), metrics_by_correlation.end(),
                             std::make_pair(correlation_id, uint32_t{0}));
  for (; it != metrics_by_correlation.end() && it->first == correlation_id; ++it)
    out.push_back(&data.kernel_metrics[it->second]);
  return out;
}

const LoadedRun* Session::find_run(int64_t id) const {
  const int i = index_of(id);
  return i < 0 ? nullptr : runs[static_cast<size_t>(i)].get();
}

int Session::index_of(int64_t id) const {
  for (size_t i = 0; i < runs.size(); ++i)
    if (runs[i]->data.info.id == id) return static_cast<int>(i);
  return -1;
}

std::unique_ptr<LoadedRun> prepare_run(storage::RunData data) {
  auto run = std::make_unique<LoadedRun>();
  run->data = std::move(data);
  const storage::RunData& d = run->data;
  run->index = analysis::build_run_index(d);
  run->summary = analysis::summarize(d);
  run->iterations = analysis::run_iterations(d);
  run->timed_span = analysis::timed_span(run->iterations);
  // Names are demangled only for strings that name kernels; other strings keep their text.
  run->names.full.assign(d.strings.begin(), d.strings.end());
  run->names.short_.assign(d.strings.begin(), d.strings.end());
  std::vector<bool> is_kernel_name(d.strings.size(), false);
  for (const storage::KernelRecord& k : d.kernels)
    if (k.name < is_kernel_name.size()) is_kernel_name[k.name] = true;
  for (size_t i = 0; i < d.strings.size(); ++i) {
    if (!is_kernel_name[i]) continue;
    run->names.full[i] = analysis::demangle(d.strings[i]);
    run->names.short_[i] = analysis::short_name(d.strings[i]);
  }
  run->metrics_by_correlation.reserve(d.kernel_metrics.size());
  for (uint32_t i = 0; i < d.kernel_metrics.size(); ++i)
    run->metrics_by_correlation.emplace_back(d.kernel_metrics[i].correlation_id, i);
  std::sort(run->metrics_by_correlation.begin(), run->metrics_by_correlation.end());
  run->traffic = analysis::run_traffic(d);
  run->pm = analysis::pm_series(d);
  return run;
}

void colour_runs(Session& session) {
  for (auto& run : session.runs)
    if (run->colours.by_string.size() != run->data.strings.size())
      run->colours = assign_run_colours(run->data, session.op_colours, session.kernel_colours);
}

std::future<std::vector<std::string>> start_integrity_check(const std::filesystem::path& path) {
  return std::async(std::launch::async, [path] {
    std::vector<std::string> found;
    try {
      const storage::SessionStore store =
          storage::SessionStore::open(path, storage::OpenMode::kReadOnly);
      found = store.quick_check();
      if (std::string why = store.session_damage(); !why.empty()) found.push_back(why);
    } catch (const std::exception& e) {
      found.push_back(e.what());
    }
    return found;
  });
}

std::unique_ptr<Session> open_session(const std::filesystem::path& path) {
  const storage::SessionStore store =
      storage::SessionStore::open(path, storage::OpenMode::kReadOnly);
  auto session = std::make_unique<Session>();
  session->path = path;
  session->info = store.session();
  session->properties = store.properties();
  for (const storage::RunInfo& info : store.runs()) {
    try {
      session->runs.push_back(prepare_run(store.load_run(info.id)));
    } catch (const std::exception& e) {
      auto failed = std::make_unique<LoadedRun>();
      failed->data.info = info;
      failed->data.strings.push_back("");
      failed->error = e.what();
      session->runs.push_back(std::move(failed));
    }
  }
  colour_runs(*session);
  return session;
}

}  // namespace fusionscope::ui
