#include "buffer_pipeline.h"

#include <exception>
#include <utility>

namespace fusionscope::profiler {

BufferPipeline::BufferPipeline(std::function<void(uint8_t*)> release)
    : release_(std::move(release)), worker_([this] { work(); }) {}

BufferPipeline::~BufferPipeline() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

void BufferPipeline::push(uint8_t* buffer, std::size_t valid_bytes) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(Item{buffer, valid_bytes});
  }
  wake_.notify_one();
}

void BufferPipeline::attach(RunAssembler* assembler) {
  std::lock_guard lock(mu_);
  assembler_ = assembler;
  failed_ = false;
}

void BufferPipeline::drain() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [this] { return queue_.empty() && busy_ == 0; });
}

std::string BufferPipeline::take_error() {
  std::lock_guard lock(mu_);
  return std::exchange(error_, {});
}

std::size_t BufferPipeline::take_stray_buffers() {
  std::lock_guard lock(mu_);
  return std::exchange(stray_, 0);
}

void BufferPipeline::work() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything is decoded
    const Item item = queue_.front();
    queue_.pop_front();
    ++busy_;
    RunAssembler* assembler = failed_ ? nullptr : assembler_;
    if (assembler_ == nullptr && item.valid > 0) ++stray_;
    lock.unlock();

    std::string error;
    if (assembler != nullptr && item.valid > 0) {
      try {
        if (!decode_buffer(item.buffer, item.valid, *assembler))
          error = "CUPTI returned a malformed activity buffer; the rest of that buffer was lost";
      } catch (const std::exception& e) {
        error = std::string("writing the trace failed: ") + e.what();
      }
    }
    if (item.buffer != nullptr) release_(item.buffer);

    lock.lock();
    if (!error.empty()) {
      if (error_.empty()) error_ = error;
      if (error.starts_with("writing")) failed_ = true;
    }
    --busy_;
    if (queue_.empty() && busy_ == 0) idle_.notify_all();
  }
}

}  // namespace fusionscope::profiler
