// An open session as the views use it: its description, its runs, and for each run the loaded
// records with what analysis derives from them (lane indexes, summary, statistics, names).
#pragma once

#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "colours.h"
#include "fusionscope/analysis/bandwidth.h"
#include "fusionscope/analysis/iterations.h"
#include "fusionscope/analysis/run_index.h"
#include "fusionscope/analysis/series.h"
#include "fusionscope/analysis/stats.h"
#include "fusionscope/storage/session_store.h"

namespace fusionscope::ui {

// Display names of a run's strings, computed once: demangled and short forms.
struct NameCache {
  std::vector<std::string> full;    // demangled, by StringId
  std::vector<std::string> short_;  // short_name(), by StringId
  const std::string& full_name(storage::StringId id) const;
  const std::string& short_name(storage::StringId id) const;
};

struct LoadedRun {
  storage::RunData data;
  analysis::RunIndex index;
  analysis::RunSummary summary;
  analysis::RunIterations iterations;            // its iterations, timed ones told apart
  std::optional<analysis::TimeSpan> timed_span;  // of the timed iterations (once: views ask often)
  NameCache names;
  std::vector<std::pair<uint32_t, uint32_t>> metrics_by_correlation;  // (id, index), sorted
  analysis::RunTraffic traffic;  // DRAM bytes and FLOPs of one forward pass (counters pass)
  analysis::PmSeries pm;         // PM-sampled series (bandwidth over time)
  RunColours colours;            // of its ops and kernel names (colours.h), set by colour_runs()
  std::string error;             // why the run's records could not be loaded (data is then empty)

  // The kernel metrics recorded for one launch.
  std::vector<const storage::KernelMetricRecord*> metrics_for(uint32_t correlation_id) const;
};

struct Session {
  std::filesystem::path path;
  bool is_sample = false;
  storage::SessionInfo info;
  std::vector<std::unique_ptr<LoadedRun>> runs;                 // in the store's order (by id)
  std::vector<std::pair<std::string, std::string>> properties;  // e.g. the lab's sweeps
  // Colours of ops and of kernel names over every run, in order of first appearance.
  NameColours op_colours, kernel_colours;
  // The whole file checked in the background once open (SQLite's quick_check, the session's
  // digest; start_integrity_check): a large file takes a while, and the views need not wait.
  std::future<std::vector<std::string>> integrity_check;
  std::vector<std::string> damage;  // what it found, once done

  const LoadedRun* find_run(int64_t id) const;
  int index_of(int64_t id) const;  // -1 if absent
};

// Derives everything a run needs from its records.
std::unique_ptr<LoadedRun> prepare_run(storage::RunData data);

// Gives the runs that have none their colours (names seen before keep theirs).
void colour_runs(Session& session);

// Checks the file behind `path` on a thread of its own; the future holds what is damaged, in
// words (empty: sound).
std::future<std::vector<std::string>> start_integrity_check(const std::filesystem::path& path);

// Opens a session file read-only and loads every run. Throws storage::StoreError for a file that
// is not a readable session; a run whose records fail to load keeps its error and stays listed.
std::unique_ptr<Session> open_session(const std::filesystem::path& path);

}  // namespace fusionscope::ui
