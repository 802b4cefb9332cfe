// The stream between an injected process (libfusionscope_inject.so) and the fusionscope process
// that captures it: length-prefixed frames over a Unix socket, one connection per process.
//
// CUPTI activity records hold pointers into the injected process (kernel names, NVTX messages),
// so a record travels as its struct's bytes with the pointers cleared, followed by the strings
// they pointed to; the capturing side rebuilds the struct with pointers into its own memory and
// hands it to the same decoder native capture uses (RunAssembler). Both sides are built from the
// same CUPTI headers. Everything here is plain bytes: no CUDA context, no GPU needed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <cupti.h>

namespace fusionscope::inject {

inline constexpr uint32_t kWireVersion = 2;
// A frame larger than this is a broken stream, not data (a CUPTI buffer is 8 MiB by default).
inline constexpr uint32_t kMaxFrameBytes = 256u << 20;

enum class FrameType : uint16_t {
  kHello = 1,       // who is talking: pid, parent pid, command line, clocks
  kRecords = 2,     // the activity records of one CUPTI buffer
  kGraphNodes = 3,  // CUDA graph nodes created or cloned (ties replayed kernels to their op)
  kStatus = 4,      // a sentence for the person capturing (e.g. why there is no trace)
  kDropped = 5,     // records CUPTI reported lost
  kCounters = 6,    // the result of a counters pass in this process
  kCrash = 7,       // the process is dying of a signal; what could be flushed was sent before
  kEnd = 8,         // the process flushed everything and closes the stream
};

// Level of a kStatus frame.
enum class StatusLevel : uint32_t { kInfo = 0, kWarning = 1, kNoTrace = 2 };

struct Hello {
  uint32_t version = kWireVersion;
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint64_t cupti_ns = 0;      // cuptiGetTimestamp() when the injection started
  uint64_t monotonic_ns = 0;  // CLOCK_MONOTONIC at the same moment
  std::vector<std::string> argv;
};

// A graph node event, as the native tracer records them (run_assembler.h's GraphNodeEvent).
struct WireGraphNode {
  uint8_t cloned = 0;  // 0: created (during stream capture), 1: cloned from original_id
  uint64_t node_id = 0;
  uint64_t original_id = 0;
  uint32_t thread_id = 0;
  int64_t t_ns = 0;
};

// One kernel of a counters pass: its name and the metric values, aligned with
// WireCounters::metrics.
struct WireKernelCounters {
  uint32_t launch_index = 0;  // position among the kernels launched in the window, from 0
  std::string name;
  std::vector<double> values;
};

struct WireCounters {
  uint32_t availability = 0;  // counters::CounterAvailability
  std::string message;        // empty when ok
  std::string chip;
  std::string window;  // what was profiled, in words ("the first \"iteration 5\" range")
  uint32_t passes = 0;
  bool limit_reached = false;
  uint32_t filtered_out = 0;  // kernels profiled whose names the kernel filter did not match
  uint32_t l2_sweeps = 0;  // L2 sweeps launched before the window's kernels (their ranges dropped)
  // How the values were collected, in words (which pass gave which metrics, and what is missing);
  // empty when one pass gave them all.
  std::string method;
  std::vector<std::string> metrics;
  std::vector<std::string> units;
  std::vector<std::string> skipped_metrics;
  std::vector<WireKernelCounters> kernels;  // in launch order
};

// Appends frames to a byte vector.
class FrameWriter {
 public:
  explicit FrameWriter(std::vector<uint8_t>& out) : out_(out) {}
  void begin(FrameType type);
  void u8(uint8_t v) { raw(&v, 1); }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void f64(double v) { raw(&v, 8); }
  void str(std::string_view s);
  void raw(const void* data, std::size_t n);
  void align8();
  void end();  // writes the frame's length

 private:
  std::vector<uint8_t>& out_;
  std::size_t start_ = 0;
};

// Reads a frame's payload; every read past the end fails softly (ok() turns false).
class PayloadReader {
 public:
  explicit PayloadReader(std::span<const uint8_t> payload) : data_(payload) {}
  uint8_t u8();
  uint32_t u32();
  uint64_t u64();
  double f64();
  std::string str();
  bool raw(void* out, std::size_t n);
  const uint8_t* view(std::size_t n);  // n bytes in place, or nullptr
  void align8();
  bool ok() const { return ok_; }
  bool at_end() const { return at_ == data_.size(); }

 private:
  std::span<const uint8_t> data_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

// Frames out of a byte stream that arrives in pieces.
class FrameStream {
 public:
  void feed(std::span<const uint8_t> bytes);
  // The next complete frame, if any. The payload stays valid until the next feed() or next().
  bool next(FrameType& type, std::span<const uint8_t>& payload);
  // A frame claimed more than kMaxFrameBytes: the stream cannot be trusted past it.
  bool broken() const { return broken_; }
  std::size_t pending_bytes() const { return buffer_.size() - consumed_; }

 private:
  std::vector<uint8_t> buffer_;
  std::size_t consumed_ = 0;
  bool broken_ = false;
};

// Encoders.
void encode_hello(const Hello& hello, std::vector<uint8_t>& out);
Hello decode_hello(std::span<const uint8_t> payload, bool* ok);
void encode_status(StatusLevel level, std::string_view text, std::vector<uint8_t>& out);
void encode_dropped(uint64_t count, std::vector<uint8_t>& out);
void encode_crash(int signal, std::vector<uint8_t>& out);
void encode_end(std::vector<uint8_t>& out);
void encode_graph_nodes(std::span<const WireGraphNode> nodes, std::vector<uint8_t>& out);
std::vector<WireGraphNode> decode_graph_nodes(std::span<const uint8_t> payload, bool* ok);
void encode_counters(const WireCounters& counters, std::vector<uint8_t>& out);
WireCounters decode_counters(std::span<const uint8_t> payload, bool* ok);

// Every record of a completed CUPTI buffer as one kRecords frame. Kinds the capture does not
// store are left out and counted in *skipped. Returns the number of records encoded.
std::size_t encode_activity_buffer(uint8_t* buffer, std::size_t valid_bytes,
                                   std::vector<uint8_t>& out, std::size_t* skipped = nullptr);
// The same from records already in hand (tests build them in memory).
void encode_activity_record(const CUpti_Activity& record, FrameWriter& frame);

// The size of the struct a stored kind travels as (0 for kinds not stored).
std::size_t record_size(uint32_t kind);

// Storage for any record the stream carries, aligned as CUPTI aligns records.
union alignas(8) AnyActivity {
  CUpti_Activity base;
  CUpti_ActivityKernel10 kernel;
  CUpti_ActivityMemcpy6 memcpy;
  CUpti_ActivityMemset4 memset;
  CUpti_ActivityAPI api;
  CUpti_ActivityMarker2 marker;
  CUpti_ActivitySynchronization2 sync;
  CUpti_ActivityOverhead3 overhead;
};

// Calls on_record for every record of a kRecords payload, rebuilt with its strings; the record
// and its strings are valid during the call only. Returns false on a malformed payload (records
// before the damage were delivered).
bool decode_activity_records(std::span<const uint8_t> payload,
                             const std::function<void(const CUpti_Activity&)>& on_record);

}  // namespace fusionscope::inject
