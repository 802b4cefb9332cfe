// Everything written through SessionStore comes back unchanged, from the same store and after
// reopening the file.
#include <algorithm>
#include <random>
#include <set>
#include <span>

#include <gtest/gtest.h>

#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/session_store.h"
#include "store_fixtures.h"
#include "test_paths.h"

namespace fusionscope::storage {
namespace {

using testing::sample_records;
using testing::sample_run;
using testing::sample_session;

void expect_session_eq(const SessionInfo& a, const SessionInfo& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.created_utc, b.created_utc);
  EXPECT_EQ(a.host, b.host);
  EXPECT_EQ(a.gpu_name, b.gpu_name);
  EXPECT_EQ(a.cc_major, b.cc_major);
  EXPECT_EQ(a.cc_minor, b.cc_minor);
  EXPECT_EQ(a.sm_count, b.sm_count);
  EXPECT_EQ(a.mem_bandwidth_gbs, b.mem_bandwidth_gbs);
  EXPECT_EQ(a.peak_fp32_tflops, b.peak_fp32_tflops);
  EXPECT_EQ(a.peak_tensor_tflops, b.peak_tensor_tflops);
  EXPECT_EQ(a.calibrated_bandwidth_gbs, b.calibrated_bandwidth_gbs);
  EXPECT_EQ(a.calibrated_tensor_tflops, b.calibrated_tensor_tflops);
  EXPECT_EQ(a.driver_version, b.driver_version);
  EXPECT_EQ(a.cuda_version, b.cuda_version);
  EXPECT_EQ(a.cupti_version, b.cupti_version);
  EXPECT_EQ(a.notes, b.notes);
}

void expect_run_eq(const RunInfo& a, const RunInfo& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.config_json, b.config_json);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.variant, b.variant);
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.warmup, b.warmup);
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_EQ(a.cuda_graph, b.cuda_graph);
  EXPECT_EQ(a.wall_ns, b.wall_ns);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.trace_status, b.trace_status);
  EXPECT_EQ(a.dropped_records, b.dropped_records);
  EXPECT_EQ(a.created_utc, b.created_utc);
}

void expect_records_eq(const RunData& d, const testing::SampleRecords& r) {
  EXPECT_EQ(d.kernels, r.kernels);
  EXPECT_EQ(d.api_calls, r.api_calls);
  EXPECT_EQ(d.memops, r.memops);
  EXPECT_EQ(d.kernel_metrics, r.kernel_metrics);
  EXPECT_EQ(d.samples, r.samples);
  ASSERT_EQ(d.ranges.size(), r.ranges.size());
  for (size_t i = 0; i < d.ranges.size(); ++i) {
    RangeRecord expected = r.ranges[i];
    expected.depth = d.ranges[i].depth;  // derived; checked in the lane tests
    EXPECT_EQ(d.ranges[i], expected) << "range " << i;
  }
}

TEST(StoreRoundTrip, EveryTableSurvivesReopen) {
  const auto path = fusionscope::testing::scratch_dir() / "session.fsdb";
  int64_t run_id = 0;
  testing::SampleRecords records;
  RunInfo run = sample_run();
  {
    SessionStore store = SessionStore::create(path, sample_session());
    EXPECT_FALSE(store.read_only());
    EXPECT_EQ(store.schema_version(), SessionStore::current_schema_version());
    records = sample_records(store);
    RunWriter writer(store, run);
    run_id = writer.id();
    run.id = run_id;
    testing::insert_all(writer, records);
    // Visible from the writing store at once, as being written.
    EXPECT_EQ(store.load_run(run_id).info.state, RunState::kWriting);
    writer.commit();
    const RunData d = store.load_run(run_id);
    expect_records_eq(d, records);
    EXPECT_EQ(d.info.state, RunState::kComplete);
    EXPECT_EQ(d.info.integrity, Integrity::kVerified);
  }
  SessionStore store = SessionStore::open(path);
  EXPECT_TRUE(store.read_only());
  expect_session_eq(store.session(), sample_session());
  ASSERT_EQ(store.runs().size(), 1u);
  expect_run_eq(store.runs()[0], run);
  ASSERT_TRUE(store.run(run_id).has_value());
  expect_run_eq(*store.run(run_id), run);
  EXPECT_FALSE(store.run(run_id + 1).has_value());

  const RunData d = store.load_run(run_id);
  expect_run_eq(d.info, run);
  expect_records_eq(d, records);
  EXPECT_EQ(d.str(d.kernels[0].name), "sm90_xmma_gemm_bf16bf16_bf16f32");
  EXPECT_EQ(d.str(d.kernels[0].op), "down(gelu(gate(x)) * up(x))");
  EXPECT_EQ(d.str(d.api_calls[0].name), "cuLaunchKernelEx");
  ASSERT_EQ(d.processes.size(), 1u);
  EXPECT_EQ(d.process_name(4242), "python3 train.py");
  EXPECT_EQ(d.process_name(1), "");
  ASSERT_EQ(d.threads.size(), 2u);
  EXPECT_EQ(d.thread_name(4242, 7), "data loader");  // sorted by (pid, thread)
  EXPECT_EQ(d.thread_name(4242, 4242), "thread 4242 (python3)");
  EXPECT_EQ(d.thread_name(4242, 8), "");
  ASSERT_EQ(d.extras.size(), 2u);
  EXPECT_EQ(d.extras[0].key, "chrome.header");
  ASSERT_NE(d.extra("chrome.metadata"), nullptr);
  EXPECT_EQ(*d.extra("chrome.metadata"), "[]");
  EXPECT_EQ(d.extra("nothing"), nullptr);
  EXPECT_EQ(d.str(d.memops[0].extra), R"j({"name": "Memcpy DtoH (Device -> Pageable)"})j");
  EXPECT_EQ(d.gpu_lanes.at(0).pid, 4242u);
  EXPECT_EQ(d.cpu_lanes.at(0).pid, 4242u);
  EXPECT_EQ(d.begin_ns, 1'000'000);
  EXPECT_EQ(d.end_ns, 1'002'000);
  EXPECT_EQ(d.strings, store.strings());
}

TEST(StoreRoundTrip, CreateFillsCreatedTimeAndRefusesExistingFile) {
  const auto path = fusionscope::testing::scratch_dir() / "s.fsdb";
  SessionInfo info;
  info.name = "x";
  {
    SessionStore store = SessionStore::create(path, info);
    const std::string created = store.session().created_utc;
    ASSERT_EQ(created.size(), 20u) << created;  // 2026-01-02T03:04:05Z
    EXPECT_EQ(created[10], 'T');
    EXPECT_EQ(created.back(), 'Z');
    const int64_t id = testing::add_run(store, RunInfo{});
    EXPECT_FALSE(store.run(id)->created_utc.empty());
  }
  EXPECT_THROW(SessionStore::create(path, info), StoreError);
}

TEST(StoreRoundTrip, UpdateRenameAndSessionEdits) {
  const auto path = fusionscope::testing::scratch_dir() / "s.fsdb";
  SessionStore store = SessionStore::create(path, SessionInfo{});
  const int64_t a = testing::add_run(store, sample_run("a"));
  const int64_t b = testing::add_run(store, sample_run("b"));
  EXPECT_LT(a, b);
  RunInfo r = *store.run(a);
  r.status = RunStatus::kFailed;
  r.error = "CUDA error: out of memory";
  r.wall_ns = 99;
  store.update_run(r);
  expect_run_eq(*store.run(a), r);
  store.rename_run(b, "renamed");
  EXPECT_EQ(store.run(b)->name, "renamed");
  EXPECT_THROW(store.rename_run(b + 100, "nope"), StoreError);
  RunInfo missing = r;
  missing.id = 12345;
  EXPECT_THROW(store.update_run(missing), StoreError);

  SessionInfo s = sample_session();
  store.update_session(s);
  expect_session_eq(store.session(), s);
  std::vector<std::string> names;
  for (const RunInfo& x : store.runs()) names.push_back(x.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "renamed"}));
}

TEST(StoreRoundTrip, InternIsStableWithinAndAcrossOpens) {
  const auto path = fusionscope::testing::scratch_dir() / "s.fsdb";
  StringId gemm = 0, gelu = 0, nul = 0;
  const std::string with_nul("a\0b", 3);
  {
    SessionStore store = SessionStore::create(path, SessionInfo{});
    EXPECT_EQ(store.intern(""), kNoString);
    gemm = store.intern("gemm");
    gelu = store.intern("gelu \xce\xbb");  // UTF-8 survives
    nul = store.intern(with_nul);
    EXPECT_NE(gemm, kNoString);
    EXPECT_NE(gemm, gelu);
    EXPECT_NE(nul, gemm);
    EXPECT_EQ(store.intern("gemm"), gemm);
    EXPECT_EQ(store.intern(std::string("gemm")), gemm);
    EXPECT_EQ(store.find_string("gelu \xce\xbb"), gelu);
    EXPECT_FALSE(store.find_string("never added").has_value());
    // Not used by any record: still kept when the store closes.
  }
  {
    SessionStore store = SessionStore::open(path, OpenMode::kReadWrite);
    EXPECT_EQ(store.intern("gemm"), gemm);
    EXPECT_EQ(store.intern("gelu \xce\xbb"), gelu);
    EXPECT_EQ(store.intern(with_nul), nul);
    const StringId fresh = store.intern("fresh");
    EXPECT_GT(fresh, std::max({gemm, gelu, nul}));
    const std::vector<std::string> strings = store.strings();
    ASSERT_GT(strings.size(), fresh);
    EXPECT_EQ(strings[0], "");
    EXPECT_EQ(strings[gemm], "gemm");
    EXPECT_EQ(strings[nul], with_nul);
  }
  SessionStore store = SessionStore::open(path);
  EXPECT_EQ(store.intern("gemm"), gemm);  // lookups work read-only
  EXPECT_TRUE(store.find_string("fresh").has_value());
  EXPECT_THROW(store.intern("new text"), StoreError);
}

// The store keeps in memory only the ids of the strings it used lately; the others it finds in
// the file. Many more strings than it keeps: ids stay the same, digests match, nothing repeats.
TEST(StoreRoundTrip, MoreStringsThanTheStoreKeepsInMemoryKeepTheirIds) {
  const auto path = fusionscope::testing::scratch_dir() / "s.fsdb";
  constexpr size_t kStrings = 300'000;  // over twice the ids a store keeps
  std::vector<std::string> texts;
  for (size_t i = 0; i < kStrings; ++i) texts.push_back("string number " + std::to_string(i));
  SessionStore store = SessionStore::create(path, SessionInfo{});
  std::vector<StringId> ids;
  for (size_t i = 0; i < kStrings; i += 10'000) {
    const auto part = store.intern_all(std::span<const std::string>(texts).subspan(i, 10'000));
    ids.insert(ids.end(), part.begin(), part.end());
  }
  for (size_t i = 0; i < kStrings; ++i) ASSERT_EQ(ids[i], i + 1) << "ids are dense, in order";
  // The first ones are no longer in memory: found in the file, with the same ids.
  EXPECT_EQ(store.intern(texts[0]), ids[0]);
  EXPECT_EQ(store.find_string(texts[1]), ids[1]);
  EXPECT_EQ(store.intern_all(texts), ids);

  // Another writer adds a string: this store, which has not seen it, finds the same id.
  StringId other = 0;
  {
    SessionStore second = SessionStore::open(path, OpenMode::kReadWrite);
    EXPECT_EQ(second.intern(texts[5]), ids[5]);
    other = second.intern("added by another writer");
    EXPECT_EQ(other, kStrings + 1);
  }
  EXPECT_EQ(store.intern("added by another writer"), other);
  EXPECT_EQ(store.intern("added after it"), other + 1);

  // A run naming strings old and new, and one this store never interned itself, verifies.
  {
    RunWriter writer(store, RunInfo{});
    std::vector<KernelRecord> kernels(3);
    kernels[0].name = ids[0];
    kernels[1].name = ids[kStrings - 1];
    kernels[2].name = other;
    kernels[2].op = ids[7];
    writer.add_kernels(kernels);
    writer.commit();
    const RunData run = store.load_run(writer.id());
    EXPECT_EQ(run.info.integrity, Integrity::kVerified);
    EXPECT_EQ(run.str(run.kernels[0].name), texts[0]);
    EXPECT_EQ(run.str(run.kernels[2].name), "added by another writer");
  }
  const std::vector<std::string> all = store.strings();
  EXPECT_EQ(all.size(), kStrings + 3);
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), all.size());
  SessionStore reader = SessionStore::open(path);
  EXPECT_EQ(reader.intern(texts[kStrings / 2]), ids[kStrings / 2]);
  EXPECT_EQ(reader.load_run(reader.runs().front().id).info.integrity, Integrity::kVerified);
}

TEST(StoreRoundTrip, RecordsReferringToUnknownStringsOrRunsAreRefused) {
  const auto path = fusionscope::testing::scratch_dir() / "s.fsdb";
  SessionStore store = SessionStore::create(path, SessionInfo{});
  RunWriter writer(store, RunInfo{});
  const int64_t run = writer.id();
  KernelRecord k;
  k.name = 999;
  EXPECT_THROW(writer.add_kernels(std::span(&k, 1)), StoreError);
  k.name = store.intern("k");
  EXPECT_THROW(store.load_run(run + 1), StoreError);
  writer.add_kernels(std::span(&k, 1));
  writer.commit();
  EXPECT_EQ(store.load_run(run).kernels.size(), 1u);
  EXPECT_EQ(store.load_run(run).info.integrity, Integrity::kVerified);
}

TEST(StoreRoundTrip, PathsWithUriSyntaxAndSpaces) {
  // Paths go to SQLite as "file:" URIs: characters with a meaning there must be quoted.
  const auto dir = fusionscope::testing::scratch_dir() / "we?ird #dir %20 \xc3\xbc&mode=ro";
  std::filesystem::create_directories(dir);
  const auto path = dir / "a b?c#d%25.fsdb";
  {
    SessionStore store = SessionStore::create(path, sample_session());
    testing::add_run(store, sample_run());
  }
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(SessionStore::open(path).runs().size(), 1u);
  SessionStore store = SessionStore::open(path, OpenMode::kReadWrite);
  testing::add_run(store, sample_run());
  EXPECT_EQ(store.runs().size(), 2u);
  EXPECT_EQ(store.path(), path);
}

TEST(StoreRoundTrip, StringsOfAFailedBatchStayInterned) {
  const auto path = fusionscope::testing::scratch_dir() / "s.fsdb";
  int64_t run = 0;
  {
    SessionStore store = SessionStore::create(path, SessionInfo{});
    RunWriter writer(store, RunInfo{});
    run = writer.id();
    KernelRecord k;
    k.name = store.intern("interned before a failed batch");
    KernelRecord bad = k;
    bad.op = 12345;  // not a string of this session: the batch is refused
    const KernelRecord both[] = {k, bad};
    EXPECT_THROW(writer.add_kernels(both), StoreError);
    writer.add_kernels(std::span(&k, 1));
    writer.commit();
  }
  const RunData d = SessionStore::open(path).load_run(run);
  ASSERT_EQ(d.kernels.size(), 1u);
  EXPECT_EQ(d.str(d.kernels[0].name), "interned before a failed batch");
}

TEST(StoreRoundTrip, ManyBatchesComeBackSortedPerLane) {
  const auto path = fusionscope::testing::scratch_dir() / "s.fsdb";
  SessionStore store = SessionStore::create(path, SessionInfo{});
  RunWriter writer(store, RunInfo{});
  const int64_t run = writer.id();
  std::vector<StringId> names;
  for (int i = 0; i < 10; ++i) names.push_back(store.intern("kernel_" + std::to_string(i)));
  std::mt19937 rng(7);
  std::vector<KernelRecord> all;
  for (uint32_t i = 0; i < 1000; ++i) {
    KernelRecord k;
    k.start_ns = static_cast<int64_t>(rng() % 1'000'000);
    k.end_ns = k.start_ns + 1 + static_cast<int64_t>(rng() % 500);
    k.device = static_cast<uint32_t>(rng() % 2);
    k.stream = 7 + static_cast<uint32_t>(rng() % 3);
    k.correlation_id = i + 1;
    k.name = names[i % names.size()];
    k.grid = {i, 1, 1};
    all.push_back(k);
  }
  // Odd batch sizes exercise both the multi-row and the single-row statements.
  for (size_t i = 0; i < all.size(); i += 137)
    writer.add_kernels(std::span(all).subspan(i, std::min<size_t>(137, all.size() - i)));
  writer.commit();
  const RunData d = store.load_run(run);
  ASSERT_EQ(d.kernels.size(), all.size());
  auto key = [](const KernelRecord& k) {
    return std::tie(k.device, k.stream, k.start_ns, k.end_ns, k.correlation_id);
  };
  EXPECT_TRUE(std::is_sorted(d.kernels.begin(), d.kernels.end(),
                             [&](const auto& a, const auto& b) { return key(a) < key(b); }));
  std::vector<KernelRecord> expected = all;
  std::sort(expected.begin(), expected.end(),
            [&](const auto& a, const auto& b) { return key(a) < key(b); });
  EXPECT_EQ(d.kernels, expected);
  EXPECT_EQ(d.gpu_lanes.size(), 6u);  // 2 devices x 3 streams
}

}  // namespace
}  // namespace fusionscope::storage
