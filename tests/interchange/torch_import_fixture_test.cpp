// The importer against the real PyTorch traces: every figure it produces is compared with one the
// test computes itself from the raw JSON (parsed by nlohmann into a tree, times through doubles).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fixture_json.h"
#include "fusionscope/interchange/torch_trace_import.h"

namespace {

using fusionscope::interchange::read_torch_trace;
using fusionscope::interchange::TorchTrace;
using fusionscope::storage::ApiDomain;
using fusionscope::storage::RangeKind;
using nlohmann::json;
namespace t = fusionscope::testing;

int64_t ns_of(const json& micros) {
  return std::llround(micros.get<double>() * 1000.0);
}

std::vector<const json*> events_of(const json& trace, const std::string& cat,
                                   const std::string& ph = "X") {
  std::vector<const json*> out;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.value("cat", "") == cat && e.value("ph", "") == ph) out.push_back(&e);
  }
  return out;
}

std::vector<const json*> kernels_by_start(const json& trace) {
  auto kernels = events_of(trace, "kernel");
  std::stable_sort(kernels.begin(), kernels.end(), [](const json* a, const json* b) {
    return a->at("ts").get<double>() < b->at("ts").get<double>();
  });
  return kernels;
}

class FixtureImport : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    raw_ = t::load_fixture_json(GetParam());
    trace_ = read_torch_trace(t::fixture_path(GetParam()));
  }
  json raw_;
  TorchTrace trace_;
};

TEST_P(FixtureImport, RecordCountsMatchTheRawEvents) {
  EXPECT_EQ(trace_.stats.events, raw_.at("traceEvents").size());
  EXPECT_EQ(trace_.stats.skipped, 0u);
  for (const auto& w : trace_.stats.warnings) ADD_FAILURE() << w.message << " x" << w.count;

  EXPECT_EQ(trace_.kernels.size(), events_of(raw_, "kernel").size());
  EXPECT_GT(trace_.kernels.size(), 0u);
  size_t runtime = 0, driver = 0;
  for (const auto& a : trace_.api_calls) ++(a.domain == ApiDomain::kRuntime ? runtime : driver);
  EXPECT_EQ(runtime, events_of(raw_, "cuda_runtime").size());
  EXPECT_EQ(driver, events_of(raw_, "cuda_driver").size());
  std::map<RangeKind, size_t> ranges;
  for (const auto& r : trace_.ranges) ++ranges[r.kind];
  EXPECT_EQ(ranges[RangeKind::kCpuOp], events_of(raw_, "cpu_op").size());
  EXPECT_EQ(ranges[RangeKind::kUserAnnotation], events_of(raw_, "user_annotation").size());
  EXPECT_EQ(ranges[RangeKind::kGpuAnnotation], events_of(raw_, "gpu_user_annotation").size());
  EXPECT_EQ(trace_.memops.size(),
            events_of(raw_, "gpu_memset").size() + events_of(raw_, "gpu_memcpy").size());
  EXPECT_EQ(trace_.stats.flow_starts, events_of(raw_, "ac2g", "s").size());
  EXPECT_EQ(trace_.stats.flow_finishes, events_of(raw_, "ac2g", "f").size());
}

TEST_P(FixtureImport, KernelCountAndTotalDurationPerNameMatchTheRawEvents) {
  std::map<std::string, std::pair<size_t, int64_t>> expected, imported;
  for (const json* k : events_of(raw_, "kernel")) {
    auto& [count, total] = expected[k->at("name").get<std::string>()];
    ++count;
    total += ns_of(k->at("dur"));
  }
  for (const auto& k : trace_.kernels) {
    auto& [count, total] = imported[trace_.str(k.name)];
    ++count;
    total += k.end_ns - k.start_ns;
  }
  EXPECT_EQ(imported, expected);
}

TEST_P(FixtureImport, TimesAreNanosecondsAfterTheBaseTime) {
  const auto base = raw_.at("baseTimeNanoseconds").get<int64_t>();
  const auto raw = kernels_by_start(raw_);
  ASSERT_EQ(trace_.kernels.size(), raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    // The double route may be a nanosecond off at this magnitude; the importer reads the text.
    EXPECT_NEAR(static_cast<double>(trace_.kernels[i].start_ns - base),
                static_cast<double>(ns_of(raw[i]->at("ts"))), 1.0);
    EXPECT_EQ(trace_.kernels[i].end_ns - trace_.kernels[i].start_ns, ns_of(raw[i]->at("dur")));
  }
}

TEST_P(FixtureImport, KernelArgsAreKept) {
  const auto raw = kernels_by_start(raw_);
  ASSERT_EQ(trace_.kernels.size(), raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    const json& args = raw[i]->at("args");
    const auto& k = trace_.kernels[i];
    EXPECT_EQ(trace_.str(k.name), raw[i]->at("name").get<std::string>());
    EXPECT_EQ(k.device, args.at("device").get<uint32_t>());
    EXPECT_EQ(k.stream, args.at("stream").get<uint32_t>());
    EXPECT_EQ(k.correlation_id, args.at("correlation").get<uint32_t>());
    EXPECT_EQ(k.registers, args.at("registers per thread").get<uint32_t>());
    EXPECT_EQ(k.static_smem + k.dynamic_smem, args.at("shared memory").get<uint32_t>());
    EXPECT_EQ(k.grid.x, args.at("grid")[0].get<uint32_t>());
    EXPECT_EQ(k.grid.y, args.at("grid")[1].get<uint32_t>());
    EXPECT_EQ(k.grid.z, args.at("grid")[2].get<uint32_t>());
    EXPECT_EQ(k.block.x, args.at("block")[0].get<uint32_t>());
    EXPECT_EQ(k.block.y, args.at("block")[1].get<uint32_t>());
    EXPECT_EQ(k.block.z, args.at("block")[2].get<uint32_t>());
  }
}

TEST_P(FixtureImport, EveryKernelHasExactlyOneLaunchLinkedByItsFlow) {
  // Raw side: the flow finishing at each kernel and the flow starting at its launch.
  std::multimap<uint64_t, const json*> starts, finishes, calls;
  for (const json* s : events_of(raw_, "ac2g", "s")) starts.emplace(s->at("id").get<uint64_t>(), s);
  for (const json* f : events_of(raw_, "ac2g", "f"))
    finishes.emplace(f->at("id").get<uint64_t>(), f);
  for (const char* cat : {"cuda_runtime", "cuda_driver"}) {
    for (const json* c : events_of(raw_, cat)) {
      calls.emplace(c->at("args").at("correlation").get<uint64_t>(), c);
    }
  }
  for (const json* k : events_of(raw_, "kernel")) {
    const auto id = k->at("args").at("correlation").get<uint64_t>();
    ASSERT_EQ(finishes.count(id), 1u) << "kernel flow " << id;
    ASSERT_EQ(starts.count(id), 1u) << "launch flow " << id;
    ASSERT_EQ(calls.count(id), 1u) << "launch call " << id;
    EXPECT_EQ(finishes.find(id)->second->at("ts"), k->at("ts"));
    EXPECT_EQ(starts.find(id)->second->at("ts"), calls.find(id)->second->at("ts"));
  }

  // Imported side: each kernel's correlation id names exactly one API call, a launch.
  std::multimap<uint32_t, const fusionscope::storage::ApiCallRecord*> by_id;
  for (const auto& a : trace_.api_calls) by_id.emplace(a.correlation_id, &a);
  for (const auto& k : trace_.kernels) {
    ASSERT_NE(k.correlation_id, 0u);
    ASSERT_EQ(by_id.count(k.correlation_id), 1u) << trace_.str(k.name);
    const auto* call = by_id.find(k.correlation_id)->second;
    EXPECT_NE(trace_.str(call->name).find("Launch"), std::string::npos) << trace_.str(call->name);
    EXPECT_LE(call->start_ns, k.start_ns);  // launched before it ran
  }
  EXPECT_EQ(trace_.stats.kernels_launched, trace_.kernels.size());
  // Every flow finish in these traces lands on a kernel or memset whose launch it starts from.
  EXPECT_EQ(trace_.stats.flows_linked, events_of(raw_, "ac2g", "f").size());
}

TEST_P(FixtureImport, KernelOpIsTheCpuOpThatLaunchedIt) {
  // PyTorch also links a kernel to its operator by "External id"; the importer uses time nesting
  // around the launch instead, so the two must agree.
  std::map<int64_t, std::string> op_by_external_id;
  for (const json* op : events_of(raw_, "cpu_op")) {
    op_by_external_id[op->at("args").at("External id").get<int64_t>()] =
        op->at("name").get<std::string>();
  }
  const auto raw = kernels_by_start(raw_);
  ASSERT_EQ(trace_.kernels.size(), raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    const auto external = raw[i]->at("args").at("External id").get<int64_t>();
    ASSERT_TRUE(op_by_external_id.contains(external));
    EXPECT_EQ(trace_.str(trace_.kernels[i].op), op_by_external_id[external])
        << raw[i]->at("name").get<std::string>();
  }
  EXPECT_EQ(trace_.stats.kernels_with_op, trace_.kernels.size());
}

TEST_P(FixtureImport, SessionInfoComesFromTheTraceHeader) {
  const json& device = raw_.at("deviceProperties").at(0);
  EXPECT_EQ(trace_.session.gpu_name, device.at("name").get<std::string>());
  EXPECT_EQ(trace_.session.cc_major, device.at("computeMajor").get<int>());
  EXPECT_EQ(trace_.session.cc_minor, device.at("computeMinor").get<int>());
  EXPECT_EQ(trace_.session.sm_count, device.at("numSms").get<int>());
  const auto driver = raw_.at("cuda_driver_version").get<int>();
  EXPECT_EQ(trace_.session.driver_version,
            std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10));
  const auto runtime = raw_.at("cuda_runtime_version").get<int>();
  EXPECT_EQ(trace_.session.cuda_version,
            std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10));
  EXPECT_EQ(trace_.session.cupti_version, std::to_string(raw_.at("cupti_version").get<int>()));
  EXPECT_EQ(trace_.trace_id, raw_.at("trace_id").get<std::string>());
  EXPECT_EQ(trace_.source_name, GetParam());
}

TEST_P(FixtureImport, StepsAndDtypeDescribeTheRun) {
  std::vector<const json*> steps;
  for (const json* a : events_of(raw_, "user_annotation")) {
    if (a->at("name").get<std::string>().starts_with("ProfilerStep#")) steps.push_back(a);
  }
  EXPECT_EQ(trace_.profiler_steps, static_cast<int>(steps.size()));
  EXPECT_EQ(trace_.profiler_steps, 3);  // schedule: wait 1, warmup 1, active 3
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const json* s : steps) {
    first = std::min(first, ns_of(s->at("ts")));
    last = std::max(last, ns_of(s->at("ts")) + ns_of(s->at("dur")));
  }
  EXPECT_NEAR(static_cast<double>(trace_.steps_wall_ns), static_cast<double>(last - first), 2.0);
  EXPECT_EQ(trace_.dtype, "bf16");
}

INSTANTIATE_TEST_SUITE_P(TorchFixtures, FixtureImport,
                         ::testing::Values(t::kLinearEager, t::kGegluEager, t::kGegluCompile));

std::map<std::string, int> kernels_per_op(const TorchTrace& trace) {
  std::map<std::string, int> out;
  for (const auto& k : trace.kernels) ++out[trace.str(k.op)];
  return out;
}

TEST(TorchImport, EagerGegluRunsFiveKernelsPerStep) {
  const TorchTrace trace = read_torch_trace(t::fixture_path(t::kGegluEager));
  EXPECT_EQ(trace.kernels.size(), 15u);  // per step: gate, gelu, up, mul, down
  EXPECT_EQ(kernels_per_op(trace),
            (std::map<std::string, int>{{"aten::mm", 9}, {"aten::gelu", 3}, {"aten::mul", 3}}));
  EXPECT_EQ(trace.stats.memsets, 6u);
  EXPECT_EQ(trace.variant, "torch-eager");
}

TEST(TorchImport, CompiledGegluFusesGeluAndMulIntoOneTritonKernel) {
  const TorchTrace trace = read_torch_trace(t::fixture_path(t::kGegluCompile));
  EXPECT_EQ(trace.kernels.size(), 12u);  // per step: three GEMMs and the fused kernel
  int triton = 0;
  for (const auto& k : trace.kernels) {
    const std::string& name = trace.str(k.name);
    if (name.starts_with("triton_")) {
      ++triton;
      // Inductor launches it from a cpu_op named after the kernel.
      EXPECT_EQ(trace.str(k.op), name);
    } else {
      EXPECT_EQ(trace.str(k.op), "aten::mm") << name;
    }
  }
  EXPECT_EQ(triton, 3);
  EXPECT_EQ(trace.variant, "torch-compile");
}

TEST(TorchImport, LinearEagerLaunchesOneAddmmPerStep) {
  const TorchTrace trace = read_torch_trace(t::fixture_path(t::kLinearEager));
  EXPECT_EQ(kernels_per_op(trace), (std::map<std::string, int>{{"aten::addmm", 3}}));
  EXPECT_EQ(trace.variant, "torch-eager");
}

TEST(TorchImport, VariantFollowsTheKernelsWhenTheNameIsSilent) {
  const std::string compiled = t::gunzip_file(t::fixture_path(t::kGegluCompile));
  const std::string eager = t::gunzip_file(t::fixture_path(t::kGegluEager));
  EXPECT_EQ(fusionscope::interchange::parse_torch_trace(compiled, "trace").variant,
            "torch-compile");
  EXPECT_EQ(fusionscope::interchange::parse_torch_trace(eager, "trace").variant, "torch-eager");
}

TEST(TorchImport, PlainAndGzippedTextImportAlike) {
  const std::string text = t::gunzip_file(t::fixture_path(t::kGegluEager));
  const TorchTrace plain = fusionscope::interchange::parse_torch_trace(text, t::kGegluEager);
  const TorchTrace gz = read_torch_trace(t::fixture_path(t::kGegluEager));
  EXPECT_EQ(plain.kernels, gz.kernels);
  EXPECT_EQ(plain.api_calls, gz.api_calls);
  EXPECT_EQ(plain.ranges, gz.ranges);
  EXPECT_EQ(plain.memops, gz.memops);
}

TEST(TorchImport, FirstEagerKernelStartsOnTheExactNanosecond) {
  // From the file's text: baseTimeNanoseconds 1790857026000000000 and the first kernel's
  // "ts": 4489001737451.606 (us): 16 significant digits, one more than a double keeps exactly.
  const TorchTrace trace = read_torch_trace(t::fixture_path(t::kGegluEager));
  ASSERT_FALSE(trace.kernels.empty());
  EXPECT_EQ(trace.kernels.front().start_ns, int64_t{1790857026000000000} + 4489001737451606);
  EXPECT_EQ(trace.kernels.front().end_ns - trace.kernels.front().start_ns, 57250);
}

}  // namespace
