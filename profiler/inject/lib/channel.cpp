#include "channel.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace fusionscope::inject {

Channel::~Channel() {
  close();
}

bool Channel::connect(const std::string& path) {
  std::lock_guard lock(mu_);
  if (fd_ >= 0) return true;
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int r;
  do {
    r = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  } while (r != 0 && errno == EINTR);
  if (r != 0) {
    ::close(fd);
    return false;
  }
  fd_ = fd;
  return true;
}

bool Channel::connected() const {
  std::lock_guard lock(mu_);
  return fd_ >= 0;
}

bool Channel::send(const std::vector<uint8_t>& bytes) {
  std::lock_guard lock(mu_);
  if (fd_ < 0) return false;
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd_);
      fd_ = -1;
      return false;
    }
    sent += static_cast<size_t>(n);
  }
  return true;
}

void Channel::close() {
  std::lock_guard lock(mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Channel::abandon_after_fork() {
  // The lock may have been held by a thread that does not exist in the child: rebuild it.
  new (&mu_) std::mutex();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace fusionscope::inject
