#include "fusionscope/lab/refusal.h"

#include <algorithm>

namespace fusionscope::lab {

const char* to_string(RefusalCode code) {
  switch (code) {
    case RefusalCode::kInvalidConfig:
      return "invalid-config";
    case RefusalCode::kNoVariant:
      return "no-variant";
    case RefusalCode::kIterations:
      return "iterations";
    case RefusalCode::kWarmup:
      return "warmup";
    case RefusalCode::kSweep:
      return "sweep";
    case RefusalCode::kDeviceMemory:
      return "device-memory";
    case RefusalCode::kNoDevice:
      return "no-device";
    case RefusalCode::kProbing:
      return "probing";
  }
  return "?";
}

bool has(const std::vector<Refusal>& refusals, RefusalCode code) {
  return std::any_of(refusals.begin(), refusals.end(),
                     [&](const Refusal& r) { return r.code == code; });
}

void add_refusal(std::vector<Refusal>& refusals, RefusalCode code, std::string message) {
  Refusal r{code, std::move(message)};
  if (std::find(refusals.begin(), refusals.end(), r) == refusals.end())
    refusals.push_back(std::move(r));
}

std::string messages(const std::vector<Refusal>& refusals, const std::string& separator) {
  std::string all;
  for (const Refusal& r : refusals) all += (all.empty() ? "" : separator) + r.message;
  return all;
}

}  // namespace fusionscope::lab
