// How the capturing process configures the library it injects: environment variables set for the
// command it starts (inherited by that command's children, which are captured too).
#pragma once

namespace fusionscope::inject::env {

// Path of the Unix socket to connect to. Without it the library stays inert (loaded outside a
// capture, or by a program that copied the environment of one).
inline constexpr const char* kSocket = "FUSIONSCOPE_INJECT_SOCKET";
// "trace" (default): activity records. "counters": a counters pass over the window, no trace.
inline constexpr const char* kMode = "FUSIONSCOPE_INJECT_MODE";
inline constexpr const char* kDriverApi = "FUSIONSCOPE_INJECT_DRIVER_API";  // "0" turns it off
inline constexpr const char* kBufferBytes = "FUSIONSCOPE_INJECT_BUFFER_BYTES";
// In a process forked from its parent without exec (Python's fork-started multiprocessing and
// DataLoader workers, which leave through _exit and so never flush at exit), the library hands
// CUPTI's completed records on every this many milliseconds (0: never), so that such a process
// loses at most that much of its trace. Other processes flush when a buffer fills and at exit.
inline constexpr const char* kFlushMs = "FUSIONSCOPE_INJECT_FLUSH_MS";
// The window recorded: the first NVTX range of this name (exact, any domain), or the span from
// T0 + DELAY for DURATION (nanoseconds, CLOCK_MONOTONIC; T0 is when the command was started).
inline constexpr const char* kCaptureRange = "FUSIONSCOPE_INJECT_CAPTURE_RANGE";
inline constexpr const char* kDelayNs = "FUSIONSCOPE_INJECT_DELAY_NS";
inline constexpr const char* kDurationNs = "FUSIONSCOPE_INJECT_DURATION_NS";
inline constexpr const char* kStartNs = "FUSIONSCOPE_INJECT_T0_NS";
// Counters mode without a capture range: the window is iteration range number WARMUP (counting
// from 0) among the ranges whose name starts with ITERATION_RANGE.
inline constexpr const char* kIterationRange = "FUSIONSCOPE_INJECT_ITERATION_RANGE";
inline constexpr const char* kWarmup = "FUSIONSCOPE_INJECT_WARMUP";
inline constexpr const char* kKernelFilter =
    "FUSIONSCOPE_INJECT_KERNEL_FILTER";  // ECMAScript regex
inline constexpr const char* kKernelLimit = "FUSIONSCOPE_INJECT_KERNEL_LIMIT";

}  // namespace fusionscope::inject::env
