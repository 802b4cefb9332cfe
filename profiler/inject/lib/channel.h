// The injected process's end of the stream: a connected Unix socket. Sends whole frames under a
// lock (CUPTI hands buffers back on its own thread and on threads that flush); a send that fails
// (the capturing process is gone) closes the channel and later sends are dropped, so the program
// carries on untraced rather than failing. Never raises SIGPIPE in the program.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace fusionscope::inject {

class Channel {
 public:
  ~Channel();
  bool connect(const std::string& path);
  bool connected() const;
  // Sends `bytes` (whole frames). Returns false once the channel is closed.
  bool send(const std::vector<uint8_t>& bytes);
  void close();
  // After fork(): the child must not write into its parent's stream. Forgets the socket without
  // any call that could block (the fd is closed, the lock is rebuilt).
  void abandon_after_fork();

 private:
  mutable std::mutex mu_;
  int fd_ = -1;
};

}  // namespace fusionscope::inject
