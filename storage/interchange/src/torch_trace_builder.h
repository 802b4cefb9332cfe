// Turns the events of a PyTorch (Kineto) Chrome trace into TorchTrace records, one event at a
// time, counting what it keeps, ignores and skips. finish() then links the records (flows,
// correlation ids, op attribution) and reads the trace's header.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "event_fields.h"
#include "event_scanner.h"
#include "fusionscope/interchange/torch_trace_import.h"
#include "trace_linker.h"

namespace fusionscope::interchange::detail {

class TorchTraceBuilder : public ScanSink {
 public:
  explicit TorchTraceBuilder(TorchTrace& out) : out_(out) {}

  void on_event(std::string_view text) override;
  void on_non_object_event() override;
  void on_oversized_event(uint64_t bytes) override;
  void on_header(std::string_view key, std::string_view json_text) override;

  // Completes the trace once every event has been seen. Throws InterchangeError naming `source`
  // when events were found but none could be read.
  void finish(std::string_view source);

  // Problems counted while reading: skip() leaves the event out, note() keeps it.
  void skip(const std::string& reason);
  void note(const std::string& reason, uint64_t count = 1);

  storage::StringId intern(std::string_view text);

 private:
  void complete_event(const EventFields& event);
  void flow_event(const EventFields& event, bool is_start);
  std::optional<uint32_t> cpu_thread(const FieldValue& tid);
  void count_input_types(const EventFields& event);
  void apply_time_base(const nlohmann::json& header);
  void refuse_if_nothing_read(std::string_view source) const;

  TorchTrace& out_;
  EventReader reader_;
  EventFields fields_;
  nlohmann::json header_ = nlohmann::json::object();
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, storage::StringId, TextHash, std::equal_to<>> string_ids_;
  std::unordered_map<std::string, uint64_t> input_type_texts_;  // `Input type` JSON -> count
  std::map<std::string, uint64_t> skipped_;
  std::map<std::string, uint64_t> notes_;
  std::map<std::string, uint32_t> renumbered_threads_;
  std::vector<std::pair<size_t, storage::StringId>> explicit_ops_;  // kernel index, args.op
  std::vector<FlowEnd> flow_starts_;
  std::vector<FlowEnd> flow_finishes_;
};

}  // namespace fusionscope::interchange::detail
