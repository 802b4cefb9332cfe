// Find (Ctrl+F or `/`): a name query over the timeline's runs. Kernels match by their short or
// demangled name, or by their op; memcpy/memset, CUDA API calls and NVTX or framework ranges by
// their name. The matches are counted with their total time per kind, highlighted on the
// timeline, stepped through in time order, and filter the statistics tables. No ImGui here: the
// bar that edits the query is find_bar.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fusionscope/analysis/name_query.h"
#include "timeline_items.h"

namespace fusionscope::ui {

// Which kinds a query looks at.
struct FindScope {
  bool kernels = true;  // by name
  bool ops = true;      // kernels by their op
  bool memops = true;
  bool api_calls = true;
  bool ranges = true;
  friend bool operator==(const FindScope&, const FindScope&) = default;
};

struct FindHit {
  int run = 0;  // in the shown runs
  ItemKind kind = ItemKind::kNone;
  uint32_t index = 0;
  double t = 0;  // start on the axis
};

struct KindTotals {
  uint64_t count = 0;
  int64_t total_ns = 0;
};

struct FindResults {
  std::vector<RunMatches> runs;               // per shown run
  std::vector<FindHit> hits;                  // every match, by start on the axis
  std::array<KindTotals, kItemKinds> totals;  // by ItemKind
  const KindTotals& of(ItemKind k) const { return totals[static_cast<size_t>(k)]; }
};

FindResults find_items(std::span<const TimelineRun> runs, const analysis::NameQuery& query,
                       const FindScope& scope);

// Whether a kernel matches: its short or full name, or (with `ops`) its op.
bool kernel_matches(const LoadedRun& run, uint32_t kernel, const analysis::NameQuery& query,
                    const FindScope& scope);

struct FindState {
  bool open = false;
  bool focus_requested = false;  // put the keyboard in the query field on the next frame
  char text[256] = {};
  bool regex = false;
  bool match_case = false;
  FindScope scope;
  std::optional<analysis::NameQuery> query;  // of `text`; empty when blank or not valid
  std::string error;                         // why `text` is not a valid query
  std::string key;                           // what `results` were computed for
  std::string searched;                      // the text `results` are of
  FindResults results;
  int current = -1;  // the hit stepped to, in results.hits
  bool active() const { return open && query.has_value(); }
};

// Recomputes the query and the results when the text, the flags or the runs changed.
void update_find(FindState& state, std::span<const TimelineRun> runs);

}  // namespace fusionscope::ui
