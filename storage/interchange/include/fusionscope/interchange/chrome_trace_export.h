// Export of a run to Chrome trace JSON, which Perfetto (ui.perfetto.dev) and chrome://tracing open:
// a process per GPU device and one for the CPU, a thread per stream and per CPU thread, complete
// ("X") events for kernels, memory operations, API calls and ranges, and `ac2g` flow events
// linking each API call to the GPU work it launched (by correlation id). The file also carries the
// fields our PyTorch importer reads (deviceProperties, versions, baseTimeNanoseconds), so an
// exported run imports back with the same kernels and durations.
#pragma once

#include <filesystem>
#include <iosfwd>

#include "fusionscope/storage/session_store.h"

namespace fusionscope::interchange {

// Timestamps are written relative to the run's first record (baseTimeNanoseconds holds it) in
// microseconds with three decimals, so nanoseconds survive exactly.
void write_chrome_trace(std::ostream& out, const storage::RunData& run,
                        const storage::SessionInfo& session);

// Writes the file, gzip-compressed when its name ends in ".gz". Throws InterchangeError.
void export_chrome_trace(const std::filesystem::path& file, const storage::RunData& run,
                         const storage::SessionInfo& session);

}  // namespace fusionscope::interchange
