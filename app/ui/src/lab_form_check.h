// The Lab panel's form checked apart from ImGui, once per edit: the configuration the sizes make,
// the request Run would start, and every refusal with its code (fusionscope/lab/refusal.h). The
// panel draws what this says and never catches errors of its own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fusionscope/lab/lab_controller.h"
#include "fusionscope/lab/refusal.h"
#include "lab_state.h"

namespace fusionscope::ui {

// Checks the form (LabFormCheck is in lab_state.h). `device` is what the GPU probe said; without an
// answer yet the request is refused with RefusalCode::kProbing.
LabFormCheck check_lab_form(const LabPanelState& form,
                            const std::optional<lab::DeviceFacts>& device);

// Everything check_lab_form() reads, as a key: the panel checks again only when it changes.
std::string lab_form_key(const LabPanelState& form, const std::optional<lab::DeviceFacts>& device);

// The panel's variants: fusionscope's (kernels::all_variants()), then PyTorch's, in
// kernels::Variant order.
std::vector<kernels::Variant> panel_variants();

// The variants ticked in the panel, in panel_variants() order.
std::vector<kernels::Variant> chosen_variants(const LabPanelState& form);

}  // namespace fusionscope::ui
