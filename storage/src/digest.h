// Digests that make damage to a session file visible: of a run's records (counts and an
// order-independent hash over every record, with the text of the strings it names), of a run's
// description, and of the session's description with its properties. They guard against accidents
// (a bad disk, a broken copy, a byte changed by hand), not against someone who means to forge a
// session: the hash is fast, not cryptographic.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fusionscope/storage/bounded_cache.h"
#include "fusionscope/storage/records.h"
#include "fusionscope/storage/session_store.h"

namespace fusionscope::storage::detail {

// A 64-bit hash fed word by word.
class Hasher {
 public:
  explicit Hasher(uint64_t seed) : h_(seed * 0x9E3779B97F4A7C15ull + 0x243F6A8885A308D3ull) {}
  void add(uint64_t v) {
    h_ = (h_ ^ v) * 0x9E3779B97F4A7C15ull;
    h_ ^= h_ >> 29;
    h_ *= 0xBF58476D1CE4E5B9ull;
    h_ ^= h_ >> 32;
  }
  void add(int64_t v) { add(static_cast<uint64_t>(v)); }
  void add(uint32_t v) { add(uint64_t{v}); }
  void add(double v);
  void add(std::string_view text);
  uint64_t value() const;

 private:
  uint64_t h_;
};

// Hashes of the texts of a session's strings: of a table held whole (a run loaded, a
// migration), each computed once; or of strings fetched by id where they are kept (a writer),
// the hashes of those used lately kept in a bounded cache.
class StringHashes {
 public:
  explicit StringHashes(const std::vector<std::string>& strings) : strings_(&strings) {}
  // `fetch`: the text of a string id; "" for an id within the table that has no text, nullopt
  // for an id beyond it.
  using Fetch = std::function<std::optional<std::string>(StringId)>;
  explicit StringHashes(Fetch fetch) : fetch_(std::move(fetch)) {}
  uint64_t of(StringId id);
  // Keeps the hash of a string whose text is at hand (a writer that has just added it).
  void remember(StringId id, std::string_view text);
  // Forgets every hash kept from fetched texts (strings that a transaction added, then undid).
  void forget();

 private:
  const std::vector<std::string>* strings_ = nullptr;
  std::vector<uint64_t> cache_;
  Fetch fetch_;
  BoundedCache<StringId, uint64_t> fetched_{size_t{1} << 16, size_t{1} << 23};
};

uint64_t record_hash(const KernelRecord& r, StringHashes& s);
uint64_t record_hash(const ApiCallRecord& r, StringHashes& s);
uint64_t record_hash(const RangeRecord& r, StringHashes& s);
uint64_t record_hash(const MemopRecord& r, StringHashes& s);
uint64_t record_hash(const KernelMetricRecord& r, StringHashes& s);
uint64_t record_hash(const SampleRecord& r, StringHashes& s);
uint64_t record_hash(const ProcessRecord& r, StringHashes& s);
uint64_t record_hash(const ThreadRecord& r, StringHashes& s);
uint64_t record_hash(const RunExtraRecord& r, StringHashes& s);

// What runs.records_digest holds, e.g.
// "kernels=5 memops=0 api_calls=5 ranges=9 kernel_metrics=0 samples=0 processes=1 hash=...";
// `threads=N` and `extras=N` (version 4) follow `processes` when they are not 0.
struct RecordsDigest {
  uint64_t kernels = 0, memops = 0, api_calls = 0, ranges = 0, kernel_metrics = 0, samples = 0,
           processes = 0, threads = 0, extras = 0;
  uint64_t hash = 0;  // sum of the records' hashes (mod 2^64): independent of their order

  std::string encode() const;
  static std::optional<RecordsDigest> decode(std::string_view text);
  friend bool operator==(const RecordsDigest&, const RecordsDigest&) = default;
};

// The digest of a run's records as loaded (strings resolved through `strings`, which must hash
// the texts of run.strings).
RecordsDigest digest_records(const RunData& run, StringHashes& strings);
// How `found` differs from `expected`, in words ("3 of its 5 kernels are there", ...).
std::string describe_difference(const RecordsDigest& expected, const RecordsDigest& found);

// runs.info_digest: every column of the run's row but info_digest itself (hex).
std::string info_digest(const RunInfo& run, std::string_view records_digest);
// session.digest: the session row but digest and last_run_id, and every property (hex).
std::string session_digest(const SessionInfo& session,
                           const std::vector<std::pair<std::string, std::string>>& properties);

}  // namespace fusionscope::storage::detail
