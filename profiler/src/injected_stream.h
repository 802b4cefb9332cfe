// The capturing side of injection capture: the byte streams of the injected processes (one per
// process, inject/wire/activity_wire.h) turned into one run's records. Each process gets its own
// RunAssembler, the decoder native capture uses, so kernels are linked to their launches and ops
// exactly as for native runs; its records carry its pid, and the correlation ids of the second and
// later processes are moved apart so that they stay unique within the run.
//
// Iterations: ranges named by the iteration rule (IterationRule) are stored as "iteration N", N
// counting from 0 in each process, which is what the views' per-iteration statistics read.
// No sockets and no processes here: tests feed it bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "../inject/wire/activity_wire.h"
#include "fusionscope/profiler/trace_sink.h"
#include "run_assembler.h"

namespace fusionscope::profiler {

// Which NVTX ranges mark iterations: those whose name starts with `prefix`; with no prefix,
// PyTorch's "ProfilerStep#" or, failing that, "iteration" (the first of the two a process opens
// decides for that process).
class IterationRule {
 public:
  explicit IterationRule(std::string prefix = {});
  // For a range a process opens: "iteration N" when it marks an iteration, else nothing.
  std::optional<std::string> rename(std::string_view name);
  const std::string& chosen() const { return chosen_; }  // the prefix in use ("" until one is seen)

 private:
  std::vector<std::string> prefixes_;
  std::string chosen_;
  long next_ = 0;
};

// What one injected process sent.
struct InjectedProcess {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::vector<std::string> argv;
  std::size_t index = 0;  // order in which processes said hello, from 0
  bool said_hello = false;
  bool ended_cleanly = false;      // sent kEnd: everything was flushed
  int crash_signal = 0;            // sent kCrash
  bool no_trace = false;           // CUPTI could not trace it (another client...)
  std::vector<std::string> notes;  // its status messages, in order
  uint64_t dropped_records = 0;
  std::string stream_error;  // a malformed stream: why, and where it stopped
  AssemblyStats stats;       // after finish()
  std::optional<inject::WireCounters> counters;
  std::string iteration_prefix;  // the iteration rule's choice in this process
  // "python3 train.py": the command line, shortened for a lane's title.
  std::string display_name() const;
};

class InjectedStreams {
 public:
  struct Options {
    std::string iteration_range;  // IterationRule's prefix
    std::size_t batch_records = 8192;
    std::vector<PlannedOp> iteration_ops;  // RunAssembler::Options::iteration_ops
  };
  InjectedStreams(TraceSink& sink, Options options);
  ~InjectedStreams();

  // A new connection; returns its handle.
  std::size_t open();
  // Bytes that arrived on a connection.
  void feed(std::size_t stream, std::span<const uint8_t> bytes);
  // The connection closed.
  void close(std::size_t stream);

  // Links and writes what each process's assembler holds. Call once, after every stream closed.
  void finish();

  // Processes in the order they said hello (connections that never did are left out).
  std::vector<const InjectedProcess*> processes() const;
  std::size_t open_streams() const;

 private:
  struct Stream;
  void handle(Stream& s, inject::FrameType type, std::span<const uint8_t> payload);
  void on_record(Stream& s, const CUpti_Activity& record);

  TraceSink& sink_;
  Options options_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::size_t hellos_ = 0;
  bool finished_ = false;
};

}  // namespace fusionscope::profiler
