// Streams of injected processes into one run: each process decoded by its own assembler (kernels
// linked to their launch and op), iterations renamed, correlation ids kept apart, and what a
// process's end says about its trace.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "activity_buffer.h"
#include "activity_wire.h"
#include "injected_stream.h"
#include "memory_sink.h"

namespace fusionscope::profiler {
namespace {

namespace t = fusionscope::testing;
using inject::FrameType;

std::vector<uint8_t> hello(uint32_t pid, std::vector<std::string> argv) {
  std::vector<uint8_t> out;
  inject::Hello h;
  h.pid = pid;
  h.ppid = 1;
  h.argv = std::move(argv);
  inject::encode_hello(h, out);
  return out;
}

// Two iterations of a step range around an op range around one launch, as PyTorch marks them.
std::vector<uint8_t> steps(uint32_t thread, const char* step0, const char* step1) {
  t::ActivityBuffer buf;
  buf.add(t::marker_start(1, 1000, thread, step0, nullptr))
      .add(t::marker_start(2, 1100, thread, "aten::mm", nullptr))
      .add(t::launch_record(1200, thread, 5))
      .add(t::marker_end(2, 1500, thread))
      .add(t::marker_end(1, 1900, thread))
      .add(t::kernel_record(2000, 3000, 5, "_Z4gemmv"))
      .add(t::marker_start(3, 4000, thread, step1, nullptr))
      .add(t::marker_start(4, 4100, thread, "aten::gelu", nullptr))
      .add(t::launch_record(4200, thread, 6))
      .add(t::marker_end(4, 4500, thread))
      .add(t::marker_end(3, 4900, thread))
      .add(t::kernel_record(5000, 6000, 6, "_Z4geluv"));
  std::vector<uint8_t> out;
  inject::encode_activity_buffer(buf.data(), buf.size(), out);
  return out;
}

std::vector<uint8_t> end_frame() {
  std::vector<uint8_t> out;
  inject::encode_end(out);
  return out;
}

TEST(InjectedStreams, EachProcessIsDecodedOnItsOwnAndIterationsAreRenamed) {
  testing::MemorySink sink;
  InjectedStreams streams(sink, {});
  const std::size_t a = streams.open();
  const std::size_t b = streams.open();
  streams.feed(a, hello(100, {"/usr/bin/python3", "train.py"}));
  streams.feed(b, hello(200, {"/opt/worker"}));
  // Both processes use the same correlation ids and marker ids: they must not mix.
  streams.feed(a, steps(11, "ProfilerStep#7", "ProfilerStep#8"));
  streams.feed(b, steps(22, "iteration 0", "iteration 1"));
  streams.feed(a, end_frame());
  streams.feed(b, end_frame());
  streams.close(a);
  streams.close(b);
  EXPECT_EQ(streams.open_streams(), 0u);
  streams.finish();

  const auto procs = streams.processes();
  ASSERT_EQ(procs.size(), 2u);
  EXPECT_EQ(procs[0]->pid, 100u);
  EXPECT_EQ(procs[0]->display_name(), "python3 train.py");
  EXPECT_EQ(procs[0]->iteration_prefix, "ProfilerStep#");
  EXPECT_EQ(procs[1]->iteration_prefix, "iteration");
  EXPECT_TRUE(procs[0]->ended_cleanly);
  EXPECT_EQ(procs[0]->stats.kernels, 2u);
  EXPECT_EQ(procs[0]->stats.kernels_without_op, 0u);

  ASSERT_EQ(sink.kernels.size(), 4u);
  std::set<uint32_t> correlations;
  for (const auto& k : sink.kernels) {
    correlations.insert(k.correlation_id);
    const std::string& op = sink.str(k.op);
    if (sink.str(k.name) == "_Z4gemmv") {
      EXPECT_EQ(op, "aten::mm");
    } else {
      EXPECT_EQ(op, "aten::gelu");
    }
  }
  EXPECT_EQ(correlations.size(), 4u) << "the second process's ids are moved apart";
  EXPECT_TRUE(correlations.count(5) && correlations.count((1u << 24) | 5));

  std::multiset<std::string> names;
  for (const auto& r : sink.ranges) names.insert(sink.str(r.name));
  EXPECT_EQ(names.count("iteration 0"), 2u);
  EXPECT_EQ(names.count("iteration 1"), 2u);
  EXPECT_EQ(names.count("ProfilerStep#7"), 0u);
}

TEST(InjectedStreams, AnExplicitIterationRangeWins) {
  testing::MemorySink sink;
  InjectedStreams streams(sink, {"train_step", 8192, {}});
  const std::size_t a = streams.open();
  streams.feed(a, hello(1, {"prog"}));
  streams.feed(a, steps(11, "train_step", "iteration 9"));
  streams.close(a);
  streams.finish();
  std::multiset<std::string> names;
  for (const auto& r : sink.ranges) names.insert(sink.str(r.name));
  EXPECT_EQ(names.count("iteration 0"), 1u);
  EXPECT_EQ(names.count("iteration 9"), 1u) << "not an iteration under this rule: kept as is";
  EXPECT_FALSE(streams.processes()[0]->ended_cleanly);
}

TEST(InjectedStreams, StatusCrashDropsAndCountersAreKept) {
  testing::MemorySink sink;
  InjectedStreams streams(sink, {});
  const std::size_t a = streams.open();
  std::vector<uint8_t> bytes = hello(7, {"prog"});
  inject::encode_status(inject::StatusLevel::kNoTrace, "another CUPTI client holds this process",
                        bytes);
  inject::encode_dropped(12, bytes);
  inject::WireCounters c;
  c.chip = "GH100";
  c.metrics = {"dram__bytes_read.sum"};
  c.units = {"byte"};
  c.kernels = {{0, "_Z4gemmv", {4096}}};
  inject::encode_counters(c, bytes);
  inject::encode_crash(11, bytes);
  streams.feed(a, bytes);
  streams.close(a);
  streams.finish();
  const InjectedProcess& p = *streams.processes().at(0);
  EXPECT_TRUE(p.no_trace);
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_EQ(p.notes[0], "another CUPTI client holds this process");
  EXPECT_EQ(p.dropped_records, 12u);
  EXPECT_EQ(p.crash_signal, 11);
  ASSERT_TRUE(p.counters.has_value());
  EXPECT_EQ(p.counters->kernels.at(0).values.at(0), 4096);
}

TEST(InjectedStreams, DataBeforeHelloOrGarbageIsRefused) {
  testing::MemorySink sink;
  InjectedStreams streams(sink, {});
  const std::size_t a = streams.open();
  streams.feed(a, end_frame());
  streams.close(a);
  streams.finish();
  EXPECT_TRUE(streams.processes().empty()) << "a stream that never said hello is no process";
  EXPECT_TRUE(sink.kernels.empty());
}

}  // namespace
}  // namespace fusionscope::profiler
