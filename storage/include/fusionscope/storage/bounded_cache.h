// A map of bounded size for the tables that intern strings (the session store's, an importer's):
// what was used lately stays, what was not is forgotten, and the owner looks it up again where it
// is kept for good (the session file) or gives it a new id.
//
// Two generations: entries go into the young one; when it is full (in entries or in bytes) it
// becomes the old one and the old one is dropped. An entry found in the old generation moves to
// the young one, so entries in use are never dropped, and at most two generations are held.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace fusionscope::storage {

// What an entry costs beside its key's text: a node of the map and its share of the buckets.
inline constexpr size_t kCacheEntryOverhead = 64;

inline size_t cache_key_bytes(const std::string& key) {
  return key.size() + kCacheEntryOverhead;
}
template <typename Key>
size_t cache_key_bytes(const Key&) {
  return sizeof(Key) + kCacheEntryOverhead;
}

// A transparent hash of texts: a std::string_view finds a std::string key without a copy.
struct TextKeyHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

template <typename Key, typename Value, typename Hash = std::hash<Key>,
          typename Equal = std::equal_to<>>
class BoundedCache {
 public:
  // Each generation holds at most `entries` entries and `bytes` bytes (keys and overheads).
  BoundedCache(size_t entries, size_t bytes) : max_entries_(entries), max_bytes_(bytes) {
    reserve();
  }

  // The value of `key`, or nullptr. The pointer is valid until the next insert() or find().
  template <typename K>
  Value* find(const K& key) {
    if (auto it = young_.find(key); it != young_.end()) return &it->second;
    auto it = old_.find(key);
    if (it == old_.end()) return nullptr;
    auto node = old_.extract(it);
    const size_t bytes = cache_key_bytes(node.key());
    make_room(bytes);
    young_bytes_ += bytes;
    return &young_.insert(std::move(node)).position->second;
  }

  // Adds `key` (or gives it `value` if it is there).
  template <typename K>
  void insert(const K& key, Value value) {
    if (Value* v = find(key)) {
      *v = std::move(value);
      return;
    }
    Key owned(key);
    const size_t bytes = cache_key_bytes(owned);
    make_room(bytes);
    young_bytes_ += bytes;
    young_.emplace(std::move(owned), std::move(value));
  }

  void clear() {
    young_ = Map();
    old_ = Map();
    young_bytes_ = 0;
    reserve();
  }

  size_t size() const { return young_.size() + old_.size(); }

 private:
  using Map = std::unordered_map<Key, Value, Hash, Equal>;

  void make_room(size_t bytes) {
    if (young_.size() < max_entries_ && young_bytes_ + bytes <= max_bytes_) return;
    old_ = std::move(young_);
    young_ = Map();
    young_bytes_ = 0;
    reserve();
  }

  // A generation of a bounded size gets its buckets at once rather than by rehashing as it fills.
  void reserve() {
    if (max_entries_ <= kReservedAtMost) young_.reserve(max_entries_);
  }
  static constexpr size_t kReservedAtMost = size_t{1} << 20;

  size_t max_entries_, max_bytes_;
  Map young_, old_;
  size_t young_bytes_ = 0;
};

// Text -> value, looked up by std::string_view.
template <typename Value, typename Hash = TextKeyHash>
using TextCache = BoundedCache<std::string, Value, Hash>;

}  // namespace fusionscope::storage
