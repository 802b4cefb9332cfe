// The ItemType of each kind, defined in item_<kind>.cpp (see timeline_items.h).
#pragma once

#include "timeline_items.h"

namespace fusionscope::ui {

extern const ItemType kKernelItem;
extern const ItemType kMemopItem;
extern const ItemType kApiCallItem;
extern const ItemType kRangeItem;

}  // namespace fusionscope::ui
