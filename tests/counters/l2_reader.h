// A test kernel that reads a buffer once, optionally holding its lines in the L2 at evict-last
// priority, as a GEMM does with an operand it wants kept.
#pragma once

#include <cstddef>

namespace fusionscope::counters::test {

// Reads `bytes` (a multiple of 16) at `buffer` on the legacy default stream. Throws
// std::runtime_error on a launch error.
void launch_l2_read(const void* buffer, size_t bytes, bool evict_last);

}  // namespace fusionscope::counters::test
