// The stream between an injected process and fusionscope: records keep every field and string
// through encoding, frames survive any split of the bytes, and damage is detected, not trusted.
#include <gtest/gtest.h>

#include "activity_buffer.h"
#include "activity_wire.h"

namespace fusionscope::inject {
namespace {

namespace t = fusionscope::testing;

std::vector<const CUpti_Activity*> kept;

TEST(ActivityWire, RecordsComeBackWithTheirFieldsAndStrings) {
  t::ActivityBuffer buf;
  buf.add(t::marker_start(1, 1000, 42, "step", "my domain"))
      .add(t::marker_end(1, 2000, 42))
      .add(t::launch_record(1100, 42, 7))
      .add(t::kernel_record(1500, 1900, 7, "_Z4gemmv", 3, 99))
      .add(t::memcpy_record(10, 20, 8, 4096, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD))
      .add(t::memset_record(30, 40, 9, 512))
      .add(t::sync_record(50, 60, 10))
      .add(t::overhead_record(70, 80, 42));
  std::vector<uint8_t> bytes;
  std::size_t skipped = 99;
  EXPECT_EQ(encode_activity_buffer(buf.data(), buf.size(), bytes, &skipped), 8u);
  EXPECT_EQ(skipped, 0u);

  FrameStream stream;
  stream.feed(bytes);
  FrameType type{};
  std::span<const uint8_t> payload;
  ASSERT_TRUE(stream.next(type, payload));
  EXPECT_EQ(type, FrameType::kRecords);
  std::vector<CUpti_ActivityKind> kinds;
  bool saw_kernel = false, saw_marker = false, saw_end = false;
  ASSERT_TRUE(decode_activity_records(payload, [&](const CUpti_Activity& r) {
    kinds.push_back(r.kind);
    if (r.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      const auto& k = reinterpret_cast<const CUpti_ActivityKernel10&>(r);
      EXPECT_STREQ(k.name, "_Z4gemmv");
      EXPECT_EQ(k.start, 1500u);
      EXPECT_EQ(k.end, 1900u);
      EXPECT_EQ(k.correlationId, 7u);
      EXPECT_EQ(k.streamId, 3u);
      EXPECT_EQ(k.graphNodeId, 99u);
      EXPECT_EQ(k.gridX, 132);
      EXPECT_EQ(k.dynamicSharedMemory, 49152);
      saw_kernel = true;
    }
    if (r.kind == CUPTI_ACTIVITY_KIND_MARKER) {
      const auto& m = reinterpret_cast<const CUpti_ActivityMarker2&>(r);
      if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        EXPECT_STREQ(m.name, "step");
        EXPECT_STREQ(m.domain, "my domain");
        EXPECT_EQ(m.objectId.pt.threadId, 42u);
        saw_marker = true;
      } else {
        // An end marker has no strings: they stay null, not empty.
        EXPECT_EQ(m.name, nullptr);
        EXPECT_EQ(m.domain, nullptr);
        saw_end = true;
      }
    }
    if (r.kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto& m = reinterpret_cast<const CUpti_ActivityMemcpy6&>(r);
      EXPECT_EQ(m.bytes, 4096u);
      EXPECT_EQ(m.copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    }
  }));
  EXPECT_TRUE(saw_kernel && saw_marker && saw_end);
  EXPECT_EQ(kinds.size(), 8u);
  EXPECT_FALSE(stream.next(type, payload));
}

TEST(ActivityWire, FramesSurviveAnySplitOfTheStream) {
  std::vector<uint8_t> bytes;
  Hello h;
  h.pid = 1234;
  h.ppid = 1;
  h.cupti_ns = 555;
  h.argv = {"python3", "train.py", "--steps", "3"};
  encode_hello(h, bytes);
  encode_status(StatusLevel::kNoTrace, "another CUPTI client holds this process", bytes);
  encode_dropped(17, bytes);
  const WireGraphNode nodes[] = {{0, 5, 0, 42, 1000}, {1, 6, 5, 0, 0}};
  encode_graph_nodes(nodes, bytes);
  encode_crash(11, bytes);
  encode_end(bytes);

  for (std::size_t piece : {std::size_t{1}, std::size_t{3}, std::size_t{7}, bytes.size()}) {
    FrameStream stream;
    std::vector<FrameType> types;
    Hello got;
    std::vector<WireGraphNode> graph;
    for (std::size_t at = 0; at < bytes.size(); at += piece) {
      stream.feed(std::span<const uint8_t>(bytes).subspan(at, std::min(piece, bytes.size() - at)));
      FrameType type{};
      std::span<const uint8_t> payload;
      while (stream.next(type, payload)) {
        types.push_back(type);
        bool ok = false;
        if (type == FrameType::kHello) {
          got = decode_hello(payload, &ok);
          EXPECT_TRUE(ok);
        }
        if (type == FrameType::kGraphNodes) {
          graph = decode_graph_nodes(payload, &ok);
          EXPECT_TRUE(ok);
        }
      }
    }
    ASSERT_EQ(types.size(), 6u) << "pieces of " << piece;
    EXPECT_EQ(types.front(), FrameType::kHello);
    EXPECT_EQ(types.back(), FrameType::kEnd);
    EXPECT_EQ(got.pid, 1234u);
    EXPECT_EQ(got.argv, h.argv);
    ASSERT_EQ(graph.size(), 2u);
    EXPECT_EQ(graph[1].cloned, 1);
    EXPECT_EQ(graph[1].original_id, 5u);
    EXPECT_EQ(stream.pending_bytes(), 0u);
  }
}

TEST(ActivityWire, CountersRoundTrip) {
  WireCounters c;
  c.chip = "GH100";
  c.window = "the first NVTX range \"step\"";
  c.passes = 6;
  c.filtered_out = 2;
  c.l2_sweeps = 4;
  c.method = "DRAM bytes: 1 pass";
  c.metrics = {"dram__bytes_read.sum", "dram__bytes_write.sum"};
  c.units = {"byte", "byte"};
  c.kernels = {{0, "_Z4gemmv", {1e6, 2e6}}, {3, "triton_poi_fused_gelu_mul_0", {3e6, 4e6}}};
  std::vector<uint8_t> bytes;
  encode_counters(c, bytes);
  FrameStream stream;
  stream.feed(bytes);
  FrameType type{};
  std::span<const uint8_t> payload;
  ASSERT_TRUE(stream.next(type, payload));
  bool ok = false;
  const WireCounters back = decode_counters(payload, &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(back.chip, "GH100");
  EXPECT_EQ(back.passes, 6u);
  EXPECT_EQ(back.filtered_out, 2u);
  EXPECT_EQ(back.l2_sweeps, 4u);
  EXPECT_EQ(back.method, "DRAM bytes: 1 pass");
  EXPECT_EQ(back.metrics, c.metrics);
  EXPECT_EQ(back.units, c.units);
  ASSERT_EQ(back.kernels.size(), 2u);
  EXPECT_EQ(back.kernels[1].launch_index, 3u);
  EXPECT_EQ(back.kernels[1].name, "triton_poi_fused_gelu_mul_0");
  EXPECT_EQ(back.kernels[1].values, (std::vector<double>{3e6, 4e6}));
}

TEST(ActivityWire, DamageIsDetectedNotTrusted) {
  t::ActivityBuffer buf;
  buf.add(t::kernel_record(1, 2, 3, "k")).add(t::kernel_record(4, 5, 6, "k2"));
  std::vector<uint8_t> bytes;
  encode_activity_buffer(buf.data(), buf.size(), bytes);
  FrameStream stream;
  stream.feed(bytes);
  FrameType type{};
  std::span<const uint8_t> payload;
  ASSERT_TRUE(stream.next(type, payload));
  // Cut short: the first record arrives, the damaged rest is refused.
  int seen = 0;
  EXPECT_FALSE(decode_activity_records(payload.first(payload.size() - 9),
                                       [&](const CUpti_Activity&) { ++seen; }));
  EXPECT_EQ(seen, 1);
  // A wrong struct size for the kind.
  std::vector<uint8_t> bad(payload.begin(), payload.end());
  bad[4] ^= 0x10;
  seen = 0;
  EXPECT_FALSE(decode_activity_records(bad, [&](const CUpti_Activity&) { ++seen; }));
  EXPECT_EQ(seen, 0);
  // A frame that claims more than any buffer: the stream is broken from there on.
  FrameStream broken;
  const uint8_t huge[8] = {0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0};
  broken.feed(huge);
  EXPECT_FALSE(broken.next(type, payload));
  EXPECT_TRUE(broken.broken());
  // A hello from another version of the library is refused.
  std::vector<uint8_t> hello;
  Hello h;
  h.version = kWireVersion + 1;
  encode_hello(h, hello);
  FrameStream hs;
  hs.feed(hello);
  ASSERT_TRUE(hs.next(type, payload));
  bool ok = true;
  decode_hello(payload, &ok);
  EXPECT_FALSE(ok);
}

}  // namespace
}  // namespace fusionscope::inject
