// One trace event as the importer turns it into a record: its members by role (the `args` keys
// the importer reads found in one pass), and which of them the record's columns now hold. What no
// column holds goes into the record's extra object (event_extra.h), so that nothing is lost.
//
// A member is consumed only when the exporter writes it back the same from the columns; a key
// written twice is never consumed (both copies stay in the extra object).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "event_extra.h"
#include "event_fields.h"

namespace fusionscope::interchange::detail {

// The `args` members the importer reads.
enum class ArgKey : uint8_t {
  kExternalId,    // "External id"
  kEvIdx,         // "Ev Idx"
  kCorrelation,   // "correlation"
  kDevice,        // "device"
  kStream,        // "stream"
  kGrid,          // "grid"
  kBlock,         // "block"
  kRegisters,     // "registers per thread"
  kSharedMemory,  // "shared memory"
  kStaticSmem,    // "static shared memory"
  kDynamicSmem,   // "dynamic shared memory"
  kOp,            // "op" (our exports)
  kMangledName,   // "mangled name" (our exports)
  kBytes,         // "bytes"
  kInputType,     // "Input type"
  kCount
};

// The top-level members a record's columns can hold.
enum class TopKey : uint8_t { kPh, kCat, kName, kPid, kTid, kTs, kDur, kCount };

class EventView {
 public:
  // Indexes `f` (which must stay alive and unchanged while the view is used).
  void reset(const EventFields& f);

  const EventFields& fields() const { return *f_; }
  // The member's value; absent when the event has none.
  const FieldValue& arg(ArgKey k) const;
  // Marks the member consumed when it is there once. Returns whether it was.
  bool consume(ArgKey k);
  bool consume(TopKey k);
  // Consumes `k` when its JSON text is exactly `raw`.
  bool consume_if(TopKey k, std::string_view raw);

  // Writes every member not consumed into `out` (cleared first).
  void write_extra(ExtraText& out) const;

 private:
  static constexpr int16_t kAbsentIndex = -1;
  static constexpr int16_t kRepeated = -2;
  const EventFields* f_ = nullptr;
  std::array<int16_t, static_cast<size_t>(ArgKey::kCount)> arg_index_{};
  std::array<int16_t, static_cast<size_t>(TopKey::kCount)> top_index_{};
  std::array<FieldValue, static_cast<size_t>(ArgKey::kCount)> arg_value_{};
  std::vector<ArgKey> arg_keys_;  // the role of each member of `args` (kCount: none)
  std::vector<TopKey> top_keys_;  // the role of each top-level member
  uint32_t args_consumed_ = 0;    // bit per ArgKey
  uint32_t top_consumed_ = 0;     // bit per TopKey
};

// A non-negative integer written as plain digits without leading zeros ("0", "42"): the form
// the exporter writes integers in.
bool is_canonical_unsigned(std::string_view raw);
// The same, or such a number with a minus sign (not "-0").
bool is_canonical_integer(std::string_view raw);
// A microsecond time whose text converts to whole nanoseconds exactly: plain decimal digits,
// and past three decimals only zeros (what the exporter writes back reads as the same number).
bool is_exact_micros(std::string_view raw);

}  // namespace fusionscope::interchange::detail
