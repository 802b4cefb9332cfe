// The kinds of item a timeline row holds, one record type each (kernels, memcpy/memset, CUDA API
// calls, NVTX and framework ranges), in the manner of Tracy's TimelineItem subclasses: each kind
// is one ItemType, defined in its own file (item_kernel.cpp, item_memop.cpp, item_api_call.cpp,
// item_range.cpp), that knows the record's times, how it looks on the timeline, its name, its
// partners through the correlation id, its tooltip and its details panel. A new CUPTI record type
// is a new ItemKind, one file defining its ItemType, and a row that draws its lane
// (timeline_rows.h).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <imgui.h>

#include "session.h"
#include "theme.h"
#include "timeline_draw.h"

namespace fusionscope::ui {

enum class ItemKind : uint8_t { kNone, kKernel, kMemop, kApiCall, kRange };

// One record of one of the drawn runs.
struct ItemRef {
  int run = -1;  // index into the TimelineRun span
  ItemKind kind = ItemKind::kNone;
  uint32_t index = 0;  // into RunData::kernels, memops, api_calls or ranges
  bool valid() const { return run >= 0 && kind != ItemKind::kNone; }
  friend bool operator==(const ItemRef&, const ItemRef&) = default;
};

enum class ColorMode { kByOp, kByKernel };

constexpr size_t kItemKinds = 5;  // ItemKind values, kNone included

// Which items of a run Find matched, per kind (indexed by ItemKind, then by record index).
struct RunMatches {
  std::array<std::vector<bool>, kItemKinds> of_kind;
  bool matches(ItemKind kind, uint32_t index) const {
    const std::vector<bool>& m = of_kind[static_cast<size_t>(kind)];
    return index < m.size() && m[index];
  }
};

// A run as the timeline draws it.
struct TimelineRun {
  const LoadedRun* run = nullptr;
  int64_t origin_ns = 0;  // the run's time drawn at 0 on the axis
  std::string label;
  const RunMatches* matches = nullptr;  // Find's matches: the others are drawn dimmed
  double ruler_zero = 0;  // the axis time the ruler counts from (for the details' "Start")
};

// What an item's look depends on besides the item.
struct ItemLookContext {
  const LoadedRun* run = nullptr;
  ColorMode mode = ColorMode::kByOp;
  const Theme* theme = nullptr;
};

// A record's partner through its correlation id: a kernel's launch, an API call's kernels.
struct ItemLink {
  ItemKind kind = ItemKind::kNone;
  uint32_t index = 0;
};

struct ItemType {
  ItemKind kind = ItemKind::kNone;
  const char* name = "";  // "kernel", as the state probe and Find's filters say it
  // The record's start and end; false for an index out of range.
  bool (*extent)(const storage::RunData& run, uint32_t index, int64_t& start,
                 int64_t& end) = nullptr;
  // Fill and label on the timeline.
  ItemLook (*look)(const ItemLookContext& context, uint32_t index) = nullptr;
  // The name Find matches and the area selection groups by (a kernel's short name, ...).
  std::string_view (*name_of)(const LoadedRun& run, uint32_t index) = nullptr;
  // Partners through the correlation id, appended to `out`.
  void (*links)(const LoadedRun& run, uint32_t index, std::vector<ItemLink>& out) = nullptr;
  // A few lines while hovering, and the details panel for the selection (ImGui).
  void (*tooltip)(const TimelineRun& run, uint32_t index, const Theme& theme) = nullptr;
  void (*details)(const TimelineRun& run, uint32_t index, const Theme& theme) = nullptr;
  // How many records of this kind the run holds.
  size_t (*count)(const storage::RunData& run) = nullptr;
};

// The type of each kind (kNone has an empty one whose functions are null).
const ItemType& item_type(ItemKind kind);

// Every kind with records, in the order Find and the area selection list them.
std::span<const ItemKind> item_kinds();

// The time extent of an item, through its type.
bool item_extent(const storage::RunData& run, const ItemRef& item, int64_t& start, int64_t& end);

// The partners of an item in the same run, through its type.
std::vector<ItemRef> correlated(const TimelineRun& run, const ItemRef& item);

}  // namespace fusionscope::ui
