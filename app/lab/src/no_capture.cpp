// Runs without tracing (`capture --no-trace`, tests, a build without CUDA): each run's trace
// status says why.
#include <utility>

#include "fusionscope/lab/lab.h"

namespace fusionscope::lab {
namespace {

class NoCapture final : public Capture {
 public:
  explicit NoCapture(std::string reason) : reason_(std::move(reason)) {}
  bool available() const override { return false; }
  std::string unavailable_reason() const override { return reason_; }
  void begin_run(profiler::TraceSink&) override {}
  profiler::TraceOutcome end_run() override {
    profiler::TraceOutcome out;
    out.status = reason_;
    return out;
  }

 private:
  std::string reason_;
};

}  // namespace

std::unique_ptr<Capture> make_no_capture(std::string reason) {
  return std::make_unique<NoCapture>(std::move(reason));
}

}  // namespace fusionscope::lab
