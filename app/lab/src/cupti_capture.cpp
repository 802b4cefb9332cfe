// The lab's capture in the program: the CUPTI tracer.
#include "fusionscope/lab/lab.h"
#include "fusionscope/profiler/tracer.h"

namespace fusionscope::lab {
namespace {

class CuptiCapture final : public Capture {
 public:
  explicit CuptiCapture(const profiler::TracerOptions& options) : tracer_(options) {}
  bool available() const override { return tracer_.available(); }
  std::string unavailable_reason() const override { return tracer_.unavailable_reason(); }
  void begin_run(profiler::TraceSink& sink) override { tracer_.begin_run(sink); }
  profiler::TraceOutcome end_run() override { return tracer_.end_run(); }

 private:
  profiler::Tracer tracer_;
};

}  // namespace

std::unique_ptr<Capture> make_cupti_capture(const profiler::TracerOptions& options) {
  return std::make_unique<CuptiCapture>(options);
}

}  // namespace fusionscope::lab
