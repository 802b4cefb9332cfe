// Builds CUPTI activity buffers in memory, laid out as CUPTI lays them out (records of this
// CUPTI version's structs, back to back, 8-byte aligned), so decoding can be tested without a GPU.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cupti.h>

namespace fusionscope::testing {

class ActivityBuffer {
 public:
  template <class Record>
  ActivityBuffer& add(const Record& r) {
    static_assert(sizeof(Record) % 8 == 0);
    const size_t at = bytes_.size();
    bytes_.resize(at + sizeof(Record));
    std::memcpy(bytes_.data() + at, &r, sizeof(Record));
    return *this;
  }
  uint8_t* data() { return reinterpret_cast<uint8_t*>(bytes_.data()); }
  size_t size() const { return bytes_.size(); }
  // A malloc'ed copy, for code that takes ownership of CUPTI buffers.
  uint8_t* release_copy() const {
    auto* p = static_cast<uint8_t*>(std::aligned_alloc(8, (bytes_.size() + 7) / 8 * 8 + 8));
    std::memcpy(p, bytes_.data(), bytes_.size());
    return p;
  }

 private:
  std::vector<unsigned char> bytes_;
};

inline CUpti_ActivityKernel10 kernel_record(uint64_t start, uint64_t end, uint32_t correlation,
                                            const char* name, uint32_t stream = 7,
                                            uint64_t graph_node = 0) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = start;
  k.end = end;
  k.deviceId = 0;
  k.streamId = stream;
  k.correlationId = correlation;
  k.name = name;
  k.gridX = 132;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 96;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 49152;
  k.graphNodeId = graph_node;
  return k;
}

inline CUpti_ActivityAPI api_record(CUpti_ActivityKind kind, uint32_t cbid, uint64_t start,
                                    uint64_t end, uint32_t thread, uint32_t correlation) {
  CUpti_ActivityAPI a{};
  a.kind = kind;
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.processId = 1;
  a.threadId = thread;
  a.correlationId = correlation;
  return a;
}

inline CUpti_ActivityAPI launch_record(uint64_t start, uint32_t thread, uint32_t correlation) {
  return api_record(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                    start, start + 3000, thread, correlation);
}

inline CUpti_ActivityMarker2 marker_start(uint32_t id, uint64_t t, uint32_t thread,
                                          const char* name, const char* domain) {
  CUpti_ActivityMarker2 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
  m.timestamp = t;
  m.id = id;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = 1;
  m.objectId.pt.threadId = thread;
  m.name = name;
  m.domain = domain;
  return m;
}

inline CUpti_ActivityMarker2 marker_end(uint32_t id, uint64_t t, uint32_t thread) {
  CUpti_ActivityMarker2 m = marker_start(id, t, thread, nullptr, nullptr);
  m.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
  return m;
}

inline CUpti_ActivityMemcpy6 memcpy_record(uint64_t start, uint64_t end, uint32_t correlation,
                                           uint64_t bytes, uint8_t copy_kind) {
  CUpti_ActivityMemcpy6 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = copy_kind;
  m.bytes = bytes;
  m.start = start;
  m.end = end;
  m.deviceId = 0;
  m.streamId = 7;
  m.correlationId = correlation;
  return m;
}

inline CUpti_ActivityMemset4 memset_record(uint64_t start, uint64_t end, uint32_t correlation,
                                           uint64_t bytes) {
  CUpti_ActivityMemset4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  m.bytes = bytes;
  m.start = start;
  m.end = end;
  m.deviceId = 0;
  m.streamId = 7;
  m.correlationId = correlation;
  return m;
}

inline CUpti_ActivitySynchronization2 sync_record(uint64_t start, uint64_t end,
                                                  uint32_t correlation) {
  CUpti_ActivitySynchronization2 s{};
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  s.start = start;
  s.end = end;
  s.correlationId = correlation;
  s.streamId = 7;
  return s;
}

inline CUpti_ActivityOverhead3 overhead_record(uint64_t start, uint64_t end, uint32_t thread) {
  CUpti_ActivityOverhead3 o{};
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o.objectId.pt.threadId = thread;
  o.start = start;
  o.end = end;
  return o;
}

}  // namespace fusionscope::testing
