// Turns the events of a PyTorch (Kineto) Chrome trace into TorchTrace records, one event at a
// time, counting what it keeps, ignores and skips. finish() then links the records (flows,
// correlation ids, op attribution) and reads the trace's header.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "fusionscope/interchange/torch_trace_import.h"
#include "trace_json_reader.h"
#include "trace_linker.h"

namespace fusionscope::interchange::detail {

class TorchTraceBuilder : public TraceEventSink {
 public:
  explicit TorchTraceBuilder(TorchTrace& out) : out_(out) {}

  void on_event(RawEvent& event) override;
  void on_non_object_event() override;

  // Completes the trace once every event has been seen.
  void finish(const nlohmann::json& header);

  // Problems counted while reading: skip() leaves the event out, note() keeps it.
  void skip(const std::string& reason);
  void note(const std::string& reason, uint64_t count = 1);

  storage::StringId intern(std::string_view text);

 private:
  void complete_event(const RawEvent& event);
  void flow_event(const RawEvent& event, bool is_start);
  std::optional<uint32_t> cpu_thread(const nlohmann::json* tid);
  void count_input_types(const nlohmann::json* args);
  void apply_time_base(const nlohmann::json& header);

  TorchTrace& out_;
  std::unordered_map<std::string, storage::StringId> string_ids_;
  std::map<std::string, uint64_t> skipped_;
  std::map<std::string, uint64_t> notes_;
  std::map<std::string, uint32_t> renumbered_threads_;
  std::map<std::string, uint64_t> input_types_;
  std::vector<FlowEnd> flow_starts_;
  std::vector<FlowEnd> flow_finishes_;
};

}  // namespace fusionscope::interchange::detail
