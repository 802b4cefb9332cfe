// Leaves the GPU's L2 cache without dirty lines before a profiled kernel, as Nsight Compute's
// cache control (`--cache-control all`) does before each pass: a kernel reads a buffer three
// times the L2 size, which writes every dirty line back to DRAM during the sweep (not during the
// next kernel) and leaves the L2 full of clean lines that the next kernel evicts for free. The
// next kernel's DRAM writes are then its own, and its reads all come from DRAM. Optionally the
// sweep's last block then discards the buffer's lines (PTX `discard.global.L2`, no write-back),
// so the next kernel finds the L2 empty, as after Nsight Compute's invalidation; measured on an
// H100 it makes no difference to any kernel's bytes (docs/counters.md), so it is not the default.
// The sweep is one kernel launch, so the range profiler counts it as one range of its own
// (KernelCounterSession drops those by the buffer's bytes they read). Measured on an H100 too:
// copying the same buffer to the host instead does not clean the L2.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace fusionscope::counters {

// What a sweep leaves in the L2.
enum class L2SweepEnd : uint8_t {
  kCleanLines,  // the buffer's lines left in place: an L2 full of clean lines (the default)
  kEmpty,       // the buffer's lines discarded after the reads: an empty L2
};

class L2Flusher {
 public:
  // Allocates the sweep buffer (`l2_multiple` x the device's L2 size) on `device`, the current
  // device afterwards. Throws std::runtime_error when the device or the memory is missing.
  explicit L2Flusher(int device = 0, double l2_multiple = 3.0,
                     L2SweepEnd end = L2SweepEnd::kCleanLines);
  ~L2Flusher();
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;

  // Enqueues the sweep on `stream` (a cudaStream_t; null = the legacy default stream).
  void flush(void* stream);

  size_t l2_bytes() const;
  size_t buffer_bytes() const;
  size_t flushes() const;  // sweeps enqueued so far

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fusionscope::counters
