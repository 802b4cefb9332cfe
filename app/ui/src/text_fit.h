// Names that do not fit are shortened from the middle ("nvjet_sm90_tst_…_coopA_TNT"), so both the
// family a kernel belongs to and the tile shape or layout that tells it apart stay visible.
#pragma once

#include <string>
#include <string_view>

#include <imgui.h>

namespace fusionscope::ui {

// `text` as it fits in `width` pixels at the current font: itself, or its start and end joined by
// an ellipsis; "" when not even that fits.
std::string elide_middle(std::string_view text, float width);

// ImGui::TextUnformatted of elide_middle(text, the space left on the line); the full text as a
// tooltip when it was shortened. Returns whether it was.
bool text_elided(std::string_view text);

}  // namespace fusionscope::ui
