// NVTX ranges in the "fusionscope" domain (header-only NVTX3: free when no tool is attached).
#pragma once

#include <nvtx3/nvToolsExt.h>

#include "fusionscope/kernels/runner.h"

namespace fusionscope::kernels::detail {

inline nvtxDomainHandle_t nvtx_domain() {
  static const nvtxDomainHandle_t domain = nvtxDomainCreateA(kNvtxDomain);
  return domain;
}

class NvtxRange {
 public:
  NvtxRange(const char* name, bool enabled) : enabled_(enabled) {
    if (!enabled_) return;
    nvtxEventAttributes_t attr{};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = name;
    nvtxDomainRangePushEx(nvtx_domain(), &attr);
  }
  ~NvtxRange() {
    if (enabled_) nvtxDomainRangePop(nvtx_domain());
  }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;

 private:
  bool enabled_;
};

}  // namespace fusionscope::kernels::detail
