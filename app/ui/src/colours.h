// The fills of ops and kernel names. A fixed palette of distinct colours is handed out over the
// whole session in order of first appearance, so that the same op has the same colour in every
// run (A and B of a comparison alike), two ops that follow each other in a run never share one,
// and every legend and table swatch shows the colour the timeline draws.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <imgui.h>

#include "fusionscope/storage/session_store.h"

namespace fusionscope::ui {

class NameColours {
 public:
  // Gives each name of `sequence` (names in the order a run meets them) a colour unless it has
  // one, avoiding the colours of the names just before it.
  void assign(const std::vector<std::string_view>& sequence);
  // The name's colour; a stable hashed one for a name never assigned.
  ImU32 of(std::string_view name) const;
  size_t size() const { return index_.size(); }

 private:
  std::unordered_map<std::string, uint32_t> index_;  // name -> palette position
  std::vector<uint32_t> uses_;                       // per palette position
};

// A run's colours by StringId, looked up once per box drawn: ops and kernel names from the
// session's palettes, other strings hashed.
struct RunColours {
  std::vector<ImU32> by_string;
  std::vector<bool> named;  // an op or kernel name (a palette colour)
  bool is_named(storage::StringId id) const { return id < named.size() && named[id]; }
  ImU32 of(storage::StringId id) const {
    return id < by_string.size() ? by_string[id] : IM_COL32(160, 160, 160, 255);
  }
};

// Assigns colours to the run's ops and kernel names (in kernel order, each from its own palette
// map) and returns the run's lookup.
RunColours assign_run_colours(const storage::RunData& run, NameColours& ops, NameColours& kernels);

// The palette, for charts that colour a handful of series (runs, variants) the same way.
ImU32 palette_colour(size_t index);
size_t palette_size();

}  // namespace fusionscope::ui
