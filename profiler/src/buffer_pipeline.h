// Completed CUPTI buffers go through a queue to one worker thread, which decodes them into the
// current run's assembler: CUPTI's callback returns at once, and the store's writes happen off
// the thread that runs the kernels.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "run_assembler.h"

namespace fusionscope::profiler {

class BufferPipeline {
 public:
  // `release` is called (on the worker) for every buffer once decoded, to give its memory back.
  explicit BufferPipeline(std::function<void(uint8_t*)> release);
  ~BufferPipeline();  // decodes what is queued, then stops the worker
  BufferPipeline(const BufferPipeline&) = delete;
  BufferPipeline& operator=(const BufferPipeline&) = delete;

  // Takes ownership of `buffer`. Never blocks on decoding; safe from any thread.
  void push(uint8_t* buffer, std::size_t valid_bytes);
  // Buffers decoded from now on go to `assembler` (nullptr: none; they are counted and dropped).
  // Call only while drained.
  void attach(RunAssembler* assembler);
  // Returns once every buffer pushed so far has been decoded.
  void drain();
  // The first decoding or writing error since the last call (empty if none).
  std::string take_error();
  // Buffers that arrived while no run was attached, since the last call.
  std::size_t take_stray_buffers();

 private:
  struct Item {
    uint8_t* buffer = nullptr;
    std::size_t valid = 0;
  };
  void work();

  std::function<void(uint8_t*)> release_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<Item> queue_;
  std::size_t busy_ = 0;  // items popped but not yet decoded
  bool stop_ = false;
  RunAssembler* assembler_ = nullptr;
  bool failed_ = false;  // the attached run hit an error: drop its later buffers
  std::string error_;
  std::size_t stray_ = 0;
  std::thread worker_;
};

}  // namespace fusionscope::profiler
