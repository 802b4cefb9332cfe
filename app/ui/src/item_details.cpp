#include "item_details.h"

namespace fusionscope::ui {

void draw_item_tooltip(const TimelineRun& tr, const ItemRef& item, const Theme& theme) {
  const ItemType& type = item_type(item.kind);
  if (!type.tooltip || item.index >= type.count(tr.run->data)) return;
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40.0f);
  type.tooltip(tr, item.index, theme);
  ImGui::PopTextWrapPos();
}

void draw_item_details(const TimelineState& state, std::span<const TimelineRun> runs,
                       const Theme& theme) {
  const ItemRef& item = state.selected;
  const ItemType& type = item_type(item.kind);
  if (!item.valid() || item.run >= static_cast<int>(runs.size()) || !type.details ||
      item.index >= type.count(runs[static_cast<size_t>(item.run)].run->data)) {
    ImGui::TextDisabled("Click an item in the timeline to see its details.");
    ImGui::Spacing();
    ImGui::TextDisabled("Wheel or W/S: zoom   Drag or A/D: pan");
    ImGui::TextDisabled("Shift-drag or right-drag: measure");
    ImGui::TextDisabled("Double-click: zoom to item   F: fit");
    return;
  }
  type.details(runs[static_cast<size_t>(item.run)], item.index, theme);
}

}  // namespace fusionscope::ui
