#include "colours.h"

#include <algorithm>
#include <array>
#include <limits>

#include "theme.h"

namespace fusionscope::ui {

namespace {

// Light fills that dark text reads on. The first twelve are far apart in hue; the least used
// colour is handed out first, so a session's first dozen ops get those.
constexpr std::array<ImU32, 18> kPalette = {
    IM_COL32(110, 165, 235, 255), IM_COL32(245, 155, 70, 255),  IM_COL32(110, 200, 110, 255),
    IM_COL32(235, 110, 110, 255), IM_COL32(180, 140, 225, 255), IM_COL32(225, 205, 80, 255),
    IM_COL32(80, 200, 190, 255),  IM_COL32(240, 150, 200, 255), IM_COL32(195, 150, 120, 255),
    IM_COL32(165, 170, 180, 255), IM_COL32(180, 225, 110, 255), IM_COL32(140, 215, 245, 255),
    IM_COL32(250, 190, 160, 255), IM_COL32(170, 170, 90, 255),  IM_COL32(210, 195, 240, 255),
    IM_COL32(170, 230, 200, 255), IM_COL32(200, 120, 160, 255), IM_COL32(120, 140, 200, 255),
};

}  // namespace

ImU32 palette_colour(size_t index) {
  return kPalette[index % kPalette.size()];
}

size_t palette_size() {
  return kPalette.size();
}

void NameColours::assign(const std::vector<std::string_view>& sequence) {
  if (uses_.empty()) uses_.assign(kPalette.size(), 0);
  uint32_t recent[2] = {std::numeric_limits<uint32_t>::max(), std::numeric_limits<uint32_t>::max()};
  for (std::string_view name : sequence) {
    auto it = index_.find(std::string(name));
    if (it == index_.end()) {
      // The least used colour that neither of the two names before this one has.
      uint32_t best = 0;
      uint32_t best_uses = std::numeric_limits<uint32_t>::max();
      for (uint32_t c = 0; c < kPalette.size(); ++c) {
        if (c == recent[0] || c == recent[1]) continue;
        if (uses_[c] < best_uses) {
          best = c;
          best_uses = uses_[c];
        }
      }
      ++uses_[best];
      it = index_.emplace(std::string(name), best).first;
    }
    if (it->second != recent[0]) {
      recent[1] = recent[0];
      recent[0] = it->second;
    }
  }
}

ImU32 NameColours::of(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? color_for_name(name) : kPalette[it->second];
}

RunColours assign_run_colours(const storage::RunData& run, NameColours& ops_colours,
                              NameColours& kernel_colours) {
  // Ops in the order the kernels meet them, then kernel names likewise.
  std::vector<size_t> order(run.kernels.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return run.kernels[a].start_ns < run.kernels[b].start_ns;
  });
  std::vector<std::string_view> op_names, names;
  std::vector<bool> seen_op(run.strings.size(), false), seen_name(run.strings.size(), false);
  for (size_t i : order) {
    const storage::KernelRecord& k = run.kernels[i];
    if (k.op != storage::kNoString && k.op < seen_op.size() && !seen_op[k.op]) {
      seen_op[k.op] = true;
      op_names.push_back(run.str(k.op));
    }
    if (k.name < seen_name.size() && !seen_name[k.name]) {
      seen_name[k.name] = true;
      names.push_back(run.str(k.name));
    }
  }
  ops_colours.assign(op_names);
  kernel_colours.assign(names);
  RunColours out;
  out.by_string.resize(run.strings.size());
  out.named.assign(run.strings.size(), false);
  for (size_t i = 0; i < run.strings.size(); ++i) {
    out.named[i] = seen_op[i] || seen_name[i];
    out.by_string[i] = seen_op[i]     ? ops_colours.of(run.strings[i])
                       : seen_name[i] ? kernel_colours.of(run.strings[i])
                                      : color_for_name(run.strings[i]);
  }
  return out;
}

}  // namespace fusionscope::ui
