// Traces in and out without loss: import -> session -> Chrome export -> import -> session gives
// identical rows and args (every field, the extra objects, process and thread names, the kept
// header and metadata), on every PyTorch fixture and on a synthetic trace with every field; and
// every event PyTorch wrote is in the export with every member it had, compared as JSON.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fixture_json.h"
#include "fusionscope/interchange/chrome_trace_export.h"
#include "fusionscope/interchange/torch_trace_import.h"
#include "fusionscope/storage/session_store.h"
#include "run_rows.h"
#include "test_paths.h"

namespace {

using fusionscope::interchange::parse_torch_trace;
using fusionscope::interchange::TorchTrace;
using fusionscope::interchange::write_chrome_trace;
using fusionscope::interchange::write_torch_trace;
using fusionscope::storage::RangeKind;
using fusionscope::storage::RunData;
using fusionscope::storage::SessionInfo;
using fusionscope::storage::SessionStore;
using nlohmann::json;
namespace t = fusionscope::testing;

// A trace with every kind of event and member the importer reads or keeps, in PyTorch's form and
// in the odd forms other writers use.
const char* const kEveryField = R"json({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85017493504,
                        "computeMajor": 9, "computeMinor": 0, "numSms": 132, "warpSize": 32}],
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8, "pg_count": 2},
  "trace_id": "C31A4317457745BCB8078FC27DA74783",
  "record_shapes": 1,
  "cuda_driver_version": 13000,
  "cuda_runtime_version": 12040,
  "cupti_version": 130001,
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1790857026000000000,
  "someoneElses": {"nested": [1, 2.50, {"x": null}], "flag": true},
  "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 402, "tid": 402,
   "ts": 100.000, "dur": 900.5, "args": {"External id": 1, "Record function id": 0, "Ev Idx": 0}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 402, "tid": 402, "ts": 110.25,
   "dur": 300, "args": {"External id": 2, "Record function id": 0,
   "Concrete Inputs": ["", "", "1"], "Input type": ["c10::BFloat16", "c10::BFloat16", "Scalar"],
   "Input Strides": [[98304, 768, 1], [768, 1], []], "Input Dims": [[64, 128, 768], [3072, 768], []],
   "Sequence number": 4021, "Fwd thread id": 0, "Ev Idx": 1}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 402, "tid": 402, "ts": 120.5,
   "dur": 200.25, "args": {"External id": 3, "Record function id": 0, "Ev Idx": 2,
   "Input type": ["float", "float"], "scope": "user_scope", "stream": 0}},
  {"ph": "X", "cat": "cpu_op", "name": "caf\u00e9 \"op\"\n", "pid": 402, "tid": 402,
   "ts": 130, "dur": 1.0, "args": {"External id": 0, "Ev Idx": 3000000000, "dup": 1, "dup": 2}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 402, "tid": 402,
   "ts": 140.125, "dur": 10, "args": {"External id": 3, "cbid": 211, "correlation": 77}},
  {"ph": "s", "id": 77, "pid": 402, "tid": 402, "ts": 140.125, "cat": "ac2g", "name": "ac2g"},
  {"ph": "X", "cat": "kernel", "name": "void gemm<float>(float*)", "pid": 0, "tid": 7,
   "ts": 160.5, "dur": 50.75, "args": {"External id": 3, "queued": 0, "device": 0,
   "context": 1, "stream": 7, "correlation": 77, "registers per thread": 168,
   "shared memory": 213188, "blocks per SM": 1.0, "warps per SM": 12.0, "grid": [2, 66, 1],
   "block": [384, 1, 1], "est. achieved occupancy %": 0, "extra nested": {"a": [1, {"b": "c"}]}}},
  {"ph": "f", "id": 77, "pid": 0, "tid": 7, "ts": 160.5, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernelEx", "pid": 402, "tid": 402,
   "ts": 215, "dur": 5.5, "args": {"External id": 3, "cbid": 652, "correlation": 78}},
  {"ph": "X", "cat": "Kernel", "name": "_Z6kernelPfi", "pid": 1, "tid": 7, "ts": 220.1234,
   "dur": 3, "args": {"device": 0.0, "stream": 7, "correlation": 78, "grid": [1,1,1],
   "block": [128, 1, 1], "registers per thread": 32, "static shared memory": 1024,
   "dynamic shared memory": 2048, "shared memory": 3072}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 402, "tid": 402,
   "ts": 230, "dur": 8, "args": {"External id": 3, "cbid": 41, "correlation": 79}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0,
   "tid": 7, "ts": 240, "dur": 4, "args": {"External id": 3, "device": 0, "context": 1,
   "stream": 7, "correlation": 79, "bytes": 8589934597, "memory bandwidth (GB/s)": 2147.48}},
  {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 250,
   "dur": 0.768, "args": {"device": 0, "stream": 7, "correlation": 80, "bytes": 4,
   "memory bandwidth (GB/s)": 0.005208333333333333}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemsetAsync", "pid": 402, "tid": "worker",
   "ts": 245, "dur": 3, "args": {"cbid": 51, "correlation": 80}},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "mlp_fwd", "pid": 0, "tid": 7, "ts": 160,
   "dur": 100, "args": {"External id": 1}},
  {"ph": "X", "cat": "python_function", "name": "torch/nn/modules/module.py(1750): _call_impl",
   "pid": 402, "tid": 402, "ts": 105, "dur": 800, "args": {"Python parent id": 1,
   "Python id": 2, "Ev Idx": 5}},
  {"ph": "X", "cat": "Trace", "ts": 50, "dur": 1000, "pid": "Spans", "tid": "PyTorch Profiler",
   "name": "PyTorch Profiler (0)", "args": {"Op count": 0}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 402, "tid": 402, "ts": 150,
   "dur": 1, "args": 5},
  {"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces",
   "tid": "Trace PyTorch Profiler", "ts": 50},
  {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": 1100.5},
  {"name": "[memory]", "ph": "i", "cat": "cpu_instant_event", "s": "t", "pid": 402, "tid": 402,
   "ts": 111, "args": {"Device Type": 1, "Device Id": 0, "Addr": 139690423, "Bytes": 512,
   "Total Allocated": 1024, "Total Reserved": 2097152}},
  {"name": "old instant", "ph": "I", "pid": 402, "tid": 402, "ts": 112},
  {"name": "process_name", "ph": "M", "ts": 50, "pid": 402, "tid": 0,
   "args": {"name": "python3"}},
  {"name": "process_labels", "ph": "M", "ts": 50, "pid": 402, "tid": 0, "args": {"labels": "CPU"}},
  {"name": "process_sort_index", "ph": "M", "ts": 50, "pid": 402, "tid": 0,
   "args": {"sort_index": 402}},
  {"name": "process_name", "ph": "M", "ts": 50, "pid": 0, "tid": 0, "args": {"name": "python3"}},
  {"name": "process_labels", "ph": "M", "ts": 50, "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
  {"name": "thread_name", "ph": "M", "ts": 50, "pid": 402, "tid": 402,
   "args": {"name": "thread 402 (python3)"}},
  {"name": "thread_name", "ph": "M", "ts": 50, "pid": 0, "tid": 7, "args": {"name": "stream 7 "}},
  {"name": "thread_sort_index", "ph": "M", "ts": 50, "pid": 402, "tid": 402,
   "args": {"sort_index": 402}}
  ],
  "traceName": "every_field.json"
})json";

SessionInfo named(const char* name) {
  SessionInfo info;
  info.name = name;
  return info;
}

std::string chrome_text(const RunData& run, const SessionInfo& session) {
  std::ostringstream out;
  write_chrome_trace(out, run, session);
  return out.str();
}

// The trace through a session of its own, as load_run() gives it back.
RunData through_session(const TorchTrace& trace, const std::string& file, const char* run_name) {
  auto store = SessionStore::create(t::scratch_dir() / file, named(file.c_str()));
  return store.load_run(write_torch_trace(store, trace, {.run_name = run_name, .variant = ""}));
}

void expect_same_run(const RunData& a, const RunData& b) {
  const t::RunRows ra = t::rows_of(a), rb = t::rows_of(b);
  EXPECT_TRUE(ra == rb) << t::first_difference(ra, rb);
  EXPECT_EQ(a.info.variant, b.info.variant);
  EXPECT_EQ(a.info.dtype, b.info.dtype);
  EXPECT_EQ(a.info.warmup, b.info.warmup);
  EXPECT_EQ(a.info.iterations, b.info.iterations);
  EXPECT_EQ(a.info.wall_ns, b.info.wall_ns);
  EXPECT_EQ(a.info.created_utc, b.info.created_utc);
}

// Import -> session -> export -> import -> session, with the second export checked too.
void expect_lossless(const TorchTrace& original, const char* what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(original.stats.skipped, 0u);
  const RunData a = through_session(original, "a.fsdb", "run");
  const std::string text = chrome_text(a, named("s"));
  const TorchTrace again = parse_torch_trace(text, "exported");
  EXPECT_EQ(again.stats.skipped, 0u);
  const RunData b = through_session(again, "b.fsdb", "run");
  expect_same_run(a, b);
  // Nothing is left to change: a second export is the first, byte for byte.
  EXPECT_EQ(chrome_text(b, named("s")), text);
}

// Every event of `original` (but ac2g flows, which are written one per launch) is in
// `exported` with every member it had, equal as JSON; args may gain only what fusionscope adds.
void expect_every_event_kept(const json& original, const json& exported) {
  // Exported events by (ph, name, pid, tid, ts).
  std::multimap<std::string, const json*> by_place;
  auto place = [](const json& e) {
    return e.value("ph", "") + "|" + e.value("name", "") + "|" + e.value("pid", json()).dump() +
           "|" + e.value("tid", json()).dump() + "|" +
           (e.contains("ts") ? std::to_string(e["ts"].get<double>()) : "");
  };
  for (const auto& e : exported.at("traceEvents")) by_place.emplace(place(e), &e);
  const std::set<std::string> added_args = {"op", "static shared memory", "dynamic shared memory",
                                            "mangled name"};
  std::set<std::pair<std::string, std::string>> flows_out;  // (ph, id)
  for (const auto& e : exported.at("traceEvents")) {
    if (e.value("cat", "") == "ac2g") flows_out.emplace(e.at("ph"), e.at("id").dump());
  }
  size_t checked = 0;
  for (const auto& e : original.at("traceEvents")) {
    if (e.value("cat", "") == "ac2g") {
      // Every GPU end of a launch flow, and its start, are written back.
      if (e.at("ph") == "f") {
        EXPECT_TRUE(flows_out.contains({"f", e.at("id").dump()})) << e.dump();
        EXPECT_TRUE(flows_out.contains({"s", e.at("id").dump()})) << e.dump();
      }
      continue;
    }
    const auto [first, last] = by_place.equal_range(place(e));
    const json* match = nullptr;
    for (auto it = first; it != last && match == nullptr; ++it) {
      bool same = true;
      for (const auto& [key, value] : e.items()) {
        if (key == "args") continue;
        same = same && it->second->contains(key) && it->second->at(key) == value;
      }
      if (same) match = it->second;
    }
    ASSERT_NE(match, nullptr) << "not in the export: " << e.dump();
    if (e.contains("args")) {
      ASSERT_TRUE(match->contains("args")) << e.dump();
      const json& args = e.at("args");
      const json& out = match->at("args");
      if (!args.is_object()) {
        EXPECT_EQ(out, args);
        continue;
      }
      for (const auto& [key, value] : args.items()) {
        EXPECT_TRUE(out.contains(key) && out.at(key) == value)
            << "args." << key << " of " << e.dump() << "\nwritten as " << match->dump();
      }
      for (const auto& [key, value] : out.items()) {
        EXPECT_TRUE(args.contains(key) || added_args.contains(key))
            << "added args." << key << " to " << e.dump();
      }
    }
    ++checked;
  }
  EXPECT_GT(checked, 0u);
  // The trace's own top-level members, as it wrote them.
  for (const auto& [key, value] : original.items()) {
    if (key == "traceEvents") continue;
    EXPECT_TRUE(exported.contains(key) && exported.at(key) == value) << key;
  }
}

class LosslessFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(LosslessFixture, ImportExportImportGivesIdenticalRowsAndArgs) {
  const std::string text = t::gunzip_file(t::fixture_path(GetParam()));
  const TorchTrace original = parse_torch_trace(text, GetParam());
  for (const auto& w : original.stats.warnings) ADD_FAILURE() << w.message << " x" << w.count;
  expect_lossless(original, GetParam());
}

TEST_P(LosslessFixture, EveryEventPyTorchWroteIsExportedWithAllItsMembers) {
  const std::string text = t::gunzip_file(t::fixture_path(GetParam()));
  const RunData run = through_session(parse_torch_trace(text, GetParam()), "a.fsdb", "run");
  expect_every_event_kept(json::parse(text), json::parse(chrome_text(run, named("s"))));
}

TEST_P(LosslessFixture, ExternalIdsArgsAndProcessesAreInTheSession) {
  const std::string text = t::gunzip_file(t::fixture_path(GetParam()));
  const RunData run = through_session(parse_torch_trace(text, GetParam()), "a.fsdb", "run");
  // Every kernel, launch and operator keeps its External id; operators their inputs.
  for (const auto& k : run.kernels) {
    EXPECT_NE(k.external_id, 0);
    EXPECT_EQ(k.pid, 402u);  // the launching process, not the device PyTorch writes as pid
    const json extra = json::parse(run.str(k.extra));
    EXPECT_TRUE(extra.at("args").contains("queued"));
    EXPECT_TRUE(extra.at("args").contains("blocks per SM"));
    EXPECT_TRUE(extra.at("args").contains("est. achieved occupancy %"));
  }
  size_t ops_with_inputs = 0;
  for (const auto& r : run.ranges) {
    if (r.kind != RangeKind::kCpuOp) continue;
    EXPECT_NE(r.external_id, 0);
    EXPECT_GE(r.event_index, 0);
    EXPECT_EQ(r.pid, 402u);
    const json extra = json::parse(run.str(r.extra));
    ops_with_inputs += extra.at("args").contains("Input Dims");
  }
  EXPECT_GT(ops_with_inputs, 0u);
  EXPECT_EQ(run.process_name(402), "python3");
  EXPECT_EQ(run.thread_name(402, 402), "thread 402 (python3)");
  ASSERT_NE(run.extra("chrome.header"), nullptr);
  ASSERT_NE(run.extra("chrome.metadata"), nullptr);
  size_t instants = 0;
  for (const auto& r : run.ranges) instants += r.kind == RangeKind::kInstant;
  EXPECT_EQ(instants, 2u);
}

INSTANTIATE_TEST_SUITE_P(TorchFixtures, LosslessFixture,
                         ::testing::Values(t::kLinearEager, t::kGegluEager, t::kGegluCompile));

TEST(Lossless, ASyntheticTraceWithEveryFieldRoundTrips) {
  const TorchTrace original = parse_torch_trace(kEveryField, "every_field.json");
  EXPECT_EQ(original.stats.ignored, 0u);
  EXPECT_EQ(original.stats.instants, 4u);
  EXPECT_EQ(original.stats.other_events, 2u);
  EXPECT_EQ(original.stats.metadata_events, 8u);
  expect_lossless(original, "every field");
}

TEST(Lossless, ASyntheticTraceWithEveryFieldIsExportedWithAllItsMembers) {
  const RunData run =
      through_session(parse_torch_trace(kEveryField, "every_field.json"), "a.fsdb", "run");
  expect_every_event_kept(json::parse(kEveryField), json::parse(chrome_text(run, named("s"))));
}

TEST(Lossless, WhatTheColumnsHoldIsNotKeptTwice) {
  const RunData run =
      through_session(parse_torch_trace(kEveryField, "every_field.json"), "a.fsdb", "run");
  std::map<std::string, json> kernel_extra;
  for (const auto& k : run.kernels) {
    kernel_extra[run.str(k.name)] = k.extra == 0 ? json::object() : json::parse(run.str(k.extra));
  }
  // PyTorch's kernel: only what no column holds.
  EXPECT_EQ(kernel_extra.at("void gemm<float>(float*)"),
            json::parse(R"j({"args": {"queued": 0, "context": 1, "blocks per SM": 1.0,
                            "warps per SM": 12.0, "est. achieved occupancy %": 0,
                            "extra nested": {"a": [1, {"b": "c"}]}}})j"));
  // The odd one: what the exporter would not write the same way is kept as written.
  EXPECT_EQ(kernel_extra.at("_Z6kernelPfi"),
            json::parse(R"({"cat": "Kernel", "name": "_Z6kernelPfi", "pid": 1, "ts": 220.1234,
                            "args": {"device": 0.0}})"));
  for (const auto& r : run.ranges) {
    if (run.str(r.name) == "aten::mm") {
      EXPECT_EQ(r.external_id, 3);
      EXPECT_EQ(r.event_index, 2);
    }
    if (run.str(r.name) == "caf\u00e9 \"op\"\n") {
      EXPECT_EQ(r.external_id, 0);
      EXPECT_EQ(r.event_index, -1);
      EXPECT_EQ(json::parse(run.str(r.extra)).at("args").at("Ev Idx"), 3000000000u);
    }
  }
  for (const auto& m : run.memops) {
    if (m.kind == fusionscope::storage::MemopKind::kMemcpy) {
      EXPECT_EQ(m.bytes, 8589934597u);
      EXPECT_EQ(m.pid, 402u);
      EXPECT_EQ(json::parse(run.str(m.extra)).at("name"), "Memcpy HtoD (Pageable -> Device)");
    }
  }
  const json header = json::parse(*run.extra("chrome.header"));
  EXPECT_EQ(header.at("distributedInfo").at("rank"), 3);
  EXPECT_TRUE(header.contains("someoneElses"));
  EXPECT_FALSE(header.contains("traceEvents"));
}

}  // namespace
