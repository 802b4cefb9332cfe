// How fusionscope's records look in a Chrome trace: the categories, names and process numbers the
// exporter writes. The importer reads the same table to know which members of an event the
// exporter gives back unchanged (those need not be kept in the record's extra object).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "fusionscope/storage/records.h"

namespace fusionscope::interchange::detail {

// CPU events of an unknown process (pid 0) are written under this process number, above any
// GPU device number (GPU events are written under their device's number, as PyTorch does).
inline constexpr uint32_t kUnknownCpuPid = 1'000'000;

// The name a memset or memcpy is written with: "Memset (Device)", "Memcpy HtoD", ...
std::string_view memop_event_name(storage::MemopKind kind, storage::CopyKind copy_kind);

// The category a range of `kind` is written with; nullptr where it depends on more than the
// kind (NVTX ranges) or comes from the record's extra object (instants, other events).
const char* range_category(storage::RangeKind kind);

// A mangled C++ name demangled ("_Z3fooi" -> "foo(int)"); other names come back as they are.
std::string demangled(const std::string& name);

}  // namespace fusionscope::interchange::detail
