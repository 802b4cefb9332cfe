// The time stamps sessions and runs carry (`created_utc`).
#pragma once

#include <string>

namespace fusionscope::storage {

// Now, in UTC, as ISO 8601 to the second: "2025-01-31T14:05:09Z".
std::string utc_now();

}  // namespace fusionscope::storage
