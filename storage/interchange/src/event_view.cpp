#include "event_view.h"

namespace fusionscope::interchange::detail {
namespace {

// "External id" -> kExternalId; kCount for keys the importer does not read.
ArgKey arg_key_of(std::string_view key) {
  switch (key.size()) {
    case 2:
      if (key == "op") return ArgKey::kOp;
      break;
    case 4:
      if (key == "grid") return ArgKey::kGrid;
      break;
    case 5:
      if (key == "block") return ArgKey::kBlock;
      if (key == "bytes") return ArgKey::kBytes;
      break;
    case 6:
      if (key == "device") return ArgKey::kDevice;
      if (key == "stream") return ArgKey::kStream;
      if (key == "Ev Idx") return ArgKey::kEvIdx;
      break;
    case 10:
      if (key == "Input type") return ArgKey::kInputType;
      break;
    case 11:
      if (key == "correlation") return ArgKey::kCorrelation;
      if (key == "External id") return ArgKey::kExternalId;
      break;
    case 12:
      if (key == "mangled name") return ArgKey::kMangledName;
      break;
    case 13:
      if (key == "shared memory") return ArgKey::kSharedMemory;
      break;
    case 20:
      if (key == "registers per thread") return ArgKey::kRegisters;
      if (key == "static shared memory") return ArgKey::kStaticSmem;
      break;
    case 21:
      if (key == "dynamic shared memory") return ArgKey::kDynamicSmem;
      break;
    default:
      break;
  }
  return ArgKey::kCount;
}

TopKey top_key_of(std::string_view key) {
  switch (key.size()) {
    case 2:
      if (key == "ph") return TopKey::kPh;
      if (key == "ts") return TopKey::kTs;
      break;
    case 3:
      if (key == "cat") return TopKey::kCat;
      if (key == "pid") return TopKey::kPid;
      if (key == "tid") return TopKey::kTid;
      if (key == "dur") return TopKey::kDur;
      break;
    case 4:
      if (key == "name") return TopKey::kName;
      break;
    default:
      break;
  }
  return TopKey::kCount;
}

uint32_t bit(ArgKey k) {
  return uint32_t{1} << static_cast<unsigned>(k);
}
uint32_t bit(TopKey k) {
  return uint32_t{1} << static_cast<unsigned>(k);
}

}  // namespace

void EventView::reset(const EventFields& f) {
  f_ = &f;
  arg_index_.fill(kAbsentIndex);
  top_index_.fill(kAbsentIndex);
  args_consumed_ = top_consumed_ = 0;
  // The role of each member, found once here for write_extra() as well.
  arg_keys_.resize(f.arg_members.size());
  top_keys_.resize(f.members.size());
  for (size_t i = 0; i < f.arg_members.size(); ++i) {
    const ArgKey k = i < 0x7fff ? arg_key_of(f.arg_members[i].key) : ArgKey::kCount;
    arg_keys_[i] = k;
    if (k == ArgKey::kCount) continue;
    int16_t& at = arg_index_[static_cast<size_t>(k)];
    at = at == kAbsentIndex ? static_cast<int16_t>(i) : kRepeated;
    // The last one counts, as in most JSON readers.
    arg_value_[static_cast<size_t>(k)] = f.arg_members[i].value;
  }
  for (size_t i = 0; i < f.members.size(); ++i) {
    const TopKey k = i < 0x7fff ? top_key_of(f.members[i].key) : TopKey::kCount;
    top_keys_[i] = k;
    if (k == TopKey::kCount) continue;
    int16_t& at = top_index_[static_cast<size_t>(k)];
    at = at == kAbsentIndex ? static_cast<int16_t>(i) : kRepeated;
  }
}

const FieldValue& EventView::arg(ArgKey k) const {
  static const FieldValue kAbsent;
  return arg_index_[static_cast<size_t>(k)] == kAbsentIndex ? kAbsent
                                                            : arg_value_[static_cast<size_t>(k)];
}

bool EventView::consume(ArgKey k) {
  if (arg_index_[static_cast<size_t>(k)] < 0) return false;
  args_consumed_ |= bit(k);
  return true;
}

bool EventView::consume(TopKey k) {
  if (top_index_[static_cast<size_t>(k)] < 0) return false;
  top_consumed_ |= bit(k);
  return true;
}

bool EventView::consume_if(TopKey k, std::string_view raw) {
  const int16_t at = top_index_[static_cast<size_t>(k)];
  if (at < 0 || f_->members[static_cast<size_t>(at)].raw != raw) return false;
  top_consumed_ |= bit(k);
  return true;
}

void EventView::write_extra(ExtraText& out) const {
  out.clear();
  for (size_t i = 0; i < f_->members.size(); ++i) {
    const ArgMember& m = f_->members[i];
    const TopKey k = top_keys_[i];
    if (k != TopKey::kCount && (top_consumed_ & bit(k)) != 0 &&
        top_index_[static_cast<size_t>(k)] == static_cast<int16_t>(i)) {
      continue;
    }
    out.add_member(m.key, m.raw);
  }
  // `args` that is not an object is kept as it was written.
  if (f_->args.present() && f_->args.kind != JsonKind::kObject)
    out.add_member("args", f_->args.raw);
  for (size_t i = 0; i < f_->arg_members.size(); ++i) {
    const ArgMember& m = f_->arg_members[i];
    const ArgKey k = arg_keys_[i];
    if (k != ArgKey::kCount && (args_consumed_ & bit(k)) != 0 &&
        arg_index_[static_cast<size_t>(k)] == static_cast<int16_t>(i)) {
      continue;
    }
    out.add_arg(m.key, m.raw);
  }
}

bool is_canonical_unsigned(std::string_view raw) {
  if (raw.empty() || raw.size() > 20 || (raw[0] == '0' && raw.size() > 1)) return false;
  for (char c : raw)
    if (c < '0' || c > '9') return false;
  return true;
}

bool is_canonical_integer(std::string_view raw) {
  if (!raw.empty() && raw[0] == '-') {
    raw.remove_prefix(1);
    return raw != "0" && is_canonical_unsigned(raw);
  }
  return is_canonical_unsigned(raw);
}

bool is_exact_micros(std::string_view raw) {
  size_t i = 0;
  if (i < raw.size() && raw[i] == '-') ++i;
  const size_t digits = i;
  while (i < raw.size() && raw[i] >= '0' && raw[i] <= '9') ++i;
  if (i == digits) return false;
  if (i == raw.size()) return true;
  if (raw[i] != '.') return false;
  const size_t frac = ++i;
  while (i < raw.size() && raw[i] >= '0' && raw[i] <= '9') {
    if (i - frac >= 3 && raw[i] != '0') return false;
    ++i;
  }
  return i == raw.size() && i > frac;
}

}  // namespace fusionscope::interchange::detail
