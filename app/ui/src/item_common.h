// What the item kinds' tooltips and details panels share: two-column key/value tables, launch
// dimensions, the API call that launched a piece of GPU work.
#pragma once

#include <cstdint>
#include <string>

#include <imgui.h>

#include "timeline_items.h"

namespace fusionscope::ui::item_detail {

inline double duration(int64_t a, int64_t b) {
  return static_cast<double>(b - a);
}

// Starts the details table (two columns: key and value); false when it is clipped away.
bool begin_table();

// "+123 us from the ruler's 0": where an item starts on the timeline's ruler.
std::string start_text(const TimelineRun& run, int64_t start_ns);

// One row of the details table.
void row_text(const char* key, const std::string& value, bool wrap = false);

// "(x, y, z)".
std::string dims(const storage::Dim3& d);

// What launched a kernel or memop, by its correlation id: the API call, its CPU time, and the
// launch latency to the work's start.
void launch_rows(const TimelineRun& run, uint32_t correlation_id, int64_t work_start);

// "Memcpy HtoD", "Memset": the kind of a memop, as its box and Find name it.
const char* memop_kind_name(const storage::MemopRecord& m);

}  // namespace fusionscope::ui::item_detail
