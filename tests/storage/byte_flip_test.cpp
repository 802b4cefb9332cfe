// Single-byte damage anywhere in a session file is detected or harmless, never believed: for
// bytes spread over the whole file, one at a time, the byte is changed and the file read as the
// commands read it (open, quick_check, the session's digest, every run's description and
// records). Either something says it is damaged, or everything read equals the intact file.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/session_store.h"
#include "store_fixtures.h"
#include "test_paths.h"

namespace fusionscope::storage {
namespace {

namespace fs = std::filesystem;

// Everything a reader can see of a session, as text (strings resolved), to compare with.
std::string dump(const SessionStore& store) {
  std::ostringstream out;
  const SessionInfo s = store.session();
  out << s.name << '|' << s.created_utc << '|' << s.host << '|' << s.gpu_name << '|' << s.cc_major
      << s.cc_minor << '|' << s.sm_count << '|' << s.mem_bandwidth_gbs << '|' << s.notes << '\n';
  for (const auto& [k, v] : store.properties()) out << k << '=' << v << '\n';
  for (const RunInfo& r : store.runs()) {
    const RunData d = store.load_run(r.id);
    out << "run " << d.info.id << '|' << d.info.name << '|' << d.info.config_json << '|'
        << d.info.kind << '|' << d.info.variant << '|' << d.info.dtype << '|' << d.info.warmup
        << '|' << d.info.iterations << '|' << d.info.cuda_graph << '|' << d.info.wall_ns << '|'
        << static_cast<int>(d.info.status) << '|' << d.info.error << '|' << d.info.trace_status
        << '|' << d.info.dropped_records << '|' << d.info.created_utc << '|'
        << static_cast<int>(d.info.state) << '\n';
    for (const auto& k : d.kernels)
      out << 'k' << k.start_ns << ',' << k.end_ns << ',' << k.device << ',' << k.stream << ','
          << k.correlation_id << ',' << d.str(k.name) << ',' << d.str(k.op) << ',' << k.grid.x
          << k.grid.y << k.grid.z << ',' << k.block.x << k.block.y << k.block.z << ','
          << k.registers << ',' << k.static_smem << ',' << k.dynamic_smem << ',' << k.pid << '\n';
    for (const auto& a : d.api_calls)
      out << 'a' << a.start_ns << ',' << a.end_ns << ',' << a.thread_id << ',' << a.correlation_id
          << ',' << d.str(a.name) << ',' << static_cast<int>(a.domain) << ',' << a.pid << '\n';
    for (const auto& g : d.ranges)
      out << 'r' << g.start_ns << ',' << g.end_ns << ',' << g.thread_id << ',' << d.str(g.name)
          << ',' << static_cast<int>(g.kind) << ',' << g.depth << ',' << g.pid << '\n';
    for (const auto& m : d.memops)
      out << 'm' << m.start_ns << ',' << m.end_ns << ',' << m.device << ',' << m.stream << ','
          << m.correlation_id << ',' << m.bytes << ',' << static_cast<int>(m.kind) << ','
          << static_cast<int>(m.copy_kind) << ',' << m.pid << '\n';
    for (const auto& x : d.kernel_metrics)
      out << 'x' << x.correlation_id << ',' << d.str(x.name) << ',' << d.str(x.unit) << ','
          << x.value << '\n';
    for (const auto& x : d.samples)
      out << 's' << x.t_ns << ',' << d.str(x.metric) << ',' << x.value << '\n';
    for (const auto& p : d.processes) out << 'p' << p.pid << ',' << d.str(p.name) << '\n';
  }
  return out.str();
}

enum class Verdict { kDetected, kHarmless, kBelieved };

Verdict read_damaged(const fs::path& path, const std::string& intact) {
  try {
    SessionStore store = SessionStore::open(path);
    if (!store.quick_check().empty()) return Verdict::kDetected;
    if (!store.session_damage().empty()) return Verdict::kDetected;
    for (const RunInfo& r : store.runs())
      if (r.integrity == Integrity::kDamaged) return Verdict::kDetected;
    return dump(store) == intact ? Verdict::kHarmless : Verdict::kBelieved;
  } catch (const StoreError&) {
    return Verdict::kDetected;
  }
}

TEST(StoreByteFlips, EverySingleByteChangeIsDetectedOrHarmless) {
  const fs::path path = fusionscope::testing::scratch_dir() / "s.fsdb";
  {
    SessionStore store = SessionStore::create(path, testing::sample_session());
    const testing::SampleRecords records = testing::sample_records(store);
    testing::add_run(store, testing::sample_run("first"), records);
    testing::add_run(store, testing::sample_run("second"), records);
    store.set_property("lab.sweep.1", R"({"size":"hidden","points":[1,2]})");
    store.close();
  }
  const std::string intact = dump(SessionStore::open(path));
  const auto size = static_cast<size_t>(fs::file_size(path));
  const int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);

  // Positions: every byte of the first page (the header and the schema), then bytes spread
  // evenly over the rest, each changed by a different bit pattern.
  std::vector<size_t> positions;
  for (size_t i = 0; i < std::min<size_t>(size, 16384); i += 3) positions.push_back(i);
  for (size_t i = 16384; i < size; i += 53) positions.push_back(i);
  std::mt19937 rng(16);
  int detected = 0, harmless = 0, believed = 0;
  std::vector<size_t> believed_at;
  for (size_t at : positions) {
    unsigned char original = 0;
    ASSERT_EQ(::pread(fd, &original, 1, static_cast<off_t>(at)), 1);
    const auto changed = static_cast<unsigned char>(original ^ (1 + rng() % 255));
    ASSERT_EQ(::pwrite(fd, &changed, 1, static_cast<off_t>(at)), 1);
    switch (read_damaged(path, intact)) {
      case Verdict::kDetected:
        ++detected;
        break;
      case Verdict::kHarmless:
        ++harmless;
        break;
      case Verdict::kBelieved:
        ++believed;
        believed_at.push_back(at);
        if (believed == 1) {
          const std::string seen = dump(SessionStore::open(path));
          size_t i = 0;
          while (i < seen.size() && i < intact.size() && seen[i] == intact[i]) ++i;
          ADD_FAILURE() << "byte " << at << " (" << int{original} << " -> " << int{changed}
                        << ") changes what is read, at: " << intact.substr(i > 40 ? i - 40 : 0, 80)
                        << " / " << seen.substr(i > 40 ? i - 40 : 0, 80);
        }
        break;
    }
    ASSERT_EQ(::pwrite(fd, &original, 1, static_cast<off_t>(at)), 1);
  }
  ::close(fd);
  std::printf(
      "%zu single-byte changes over a %zu-byte session: %d detected, %d harmless, %d "
      "believed\n",
      positions.size(), size, detected, harmless, believed);
  EXPECT_EQ(believed, 0) << "first at byte " << (believed_at.empty() ? 0 : believed_at[0]);
  EXPECT_EQ(dump(SessionStore::open(path)), intact);  // restored
}

}  // namespace
}  // namespace fusionscope::storage
