#include "timeline_items.h"

#include <array>

#include "item_types.h"

namespace fusionscope::ui {

namespace {

const ItemType kNoItem{};
constexpr std::array kKinds = {ItemKind::kKernel, ItemKind::kMemop, ItemKind::kApiCall,
                               ItemKind::kRange};

}  // namespace

const ItemType& item_type(ItemKind kind) {
  switch (kind) {
    case ItemKind::kKernel:
      return kKernelItem;
    case ItemKind::kMemop:
      return kMemopItem;
    case ItemKind::kApiCall:
      return kApiCallItem;
    case ItemKind::kRange:
      return kRangeItem;
    case ItemKind::kNone:
      break;
  }
  return kNoItem;
}

std::span<const ItemKind> item_kinds() {
  return kKinds;
}

bool item_extent(const storage::RunData& run, const ItemRef& item, int64_t& start, int64_t& end) {
  const ItemType& type = item_type(item.kind);
  return type.extent && type.extent(run, item.index, start, end);
}

std::vector<ItemRef> correlated(const TimelineRun& run, const ItemRef& item) {
  std::vector<ItemRef> out;
  const ItemType& type = item_type(item.kind);
  if (!type.links || item.index >= type.count(run.run->data)) return out;
  std::vector<ItemLink> links;
  type.links(*run.run, item.index, links);
  for (const ItemLink& l : links) out.push_back({item.run, l.kind, l.index});
  return out;
}

}  // namespace fusionscope::ui
