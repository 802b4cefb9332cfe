#include "chrome_form.h"

#include <cxxabi.h>

#include <cstdlib>

namespace fusionscope::interchange::detail {

std::string_view memop_event_name(storage::MemopKind kind, storage::CopyKind copy_kind) {
  if (kind == storage::MemopKind::kMemset) return "Memset (Device)";
  switch (copy_kind) {
    case storage::CopyKind::kHtoD:
      return "Memcpy HtoD";
    case storage::CopyKind::kDtoH:
      return "Memcpy DtoH";
    case storage::CopyKind::kDtoD:
      return "Memcpy DtoD";
    case storage::CopyKind::kHtoH:
      return "Memcpy HtoH";
    case storage::CopyKind::kPeer:
      return "Memcpy PtoP";
    case storage::CopyKind::kUnknown:
      break;
  }
  return "Memcpy";
}

const char* range_category(storage::RangeKind kind) {
  switch (kind) {
    case storage::RangeKind::kCpuOp:
      return "cpu_op";
    case storage::RangeKind::kUserAnnotation:
      return "user_annotation";
    case storage::RangeKind::kGpuAnnotation:
      return "gpu_user_annotation";
    case storage::RangeKind::kSync:
      return "cpu_sync";
    case storage::RangeKind::kTracerOverhead:
      return "tracer_overhead";
    case storage::RangeKind::kNvtx:
    case storage::RangeKind::kInstant:
    case storage::RangeKind::kOther:
      break;
  }
  return nullptr;
}

std::string demangled(const std::string& name) {
  if (!name.starts_with("_Z")) return name;
  int status = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && d != nullptr ? std::string(d) : name;
  std::free(d);
  return out;
}

}  // namespace fusionscope::interchange::detail
