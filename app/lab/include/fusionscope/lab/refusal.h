// Why the lab will not run a request, as a code the app and tests act on and a sentence for a
// person. Code decides; the message is only ever shown.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fusionscope::lab {

enum class RefusalCode : uint8_t {
  kInvalidConfig,  // the shape, dtype or activation make no valid configuration
  kNoVariant,      // no chosen variant applies to the configuration
  kIterations,     // timed iterations out of range
  kWarmup,         // warm-up iterations out of range
  kSweep,          // the sweep's range or points are not valid
  kDeviceMemory,   // does not fit in the GPU's free memory
  kNoDevice,       // no CUDA device: viewing only
  kProbing,        // the GPU has not answered yet
};

struct Refusal {
  RefusalCode code = RefusalCode::kInvalidConfig;
  std::string message;
  friend bool operator==(const Refusal&, const Refusal&) = default;
};

// "invalid-config", "no-variant", ...: the code as the state probe and logs write it.
const char* to_string(RefusalCode code);

bool has(const std::vector<Refusal>& refusals, RefusalCode code);

// Appends unless a refusal with the same code and message is there already.
void add_refusal(std::vector<Refusal>& refusals, RefusalCode code, std::string message);

// The messages, one per line (or joined by `separator`).
std::string messages(const std::vector<Refusal>& refusals, const std::string& separator = "\n");

}  // namespace fusionscope::lab
