#include "range_window.h"

namespace fusionscope::inject {

std::unique_ptr<RangeWindow> RangeWindow::exact(std::string name, int occurrence) {
  std::unique_ptr<RangeWindow> w(new RangeWindow);
  w->names_.push_back(std::move(name));
  w->occurrence_ = occurrence < 0 ? 0 : occurrence;
  return w;
}

std::unique_ptr<RangeWindow> RangeWindow::nth_with_prefix(std::vector<std::string> prefixes,
                                                          int occurrence) {
  std::unique_ptr<RangeWindow> w(new RangeWindow);
  w->names_ = std::move(prefixes);
  w->prefix_ = true;
  w->occurrence_ = occurrence < 0 ? 0 : occurrence;
  return w;
}

bool RangeWindow::matches(std::string_view name) {
  if (state_ != State::kWaiting) return false;
  if (!prefix_) return !names_.empty() && name == names_.front() && seen_++ == occurrence_;
  if (chosen_ < 0) {
    for (size_t i = 0; i < names_.size(); ++i) {
      if (!names_[i].empty() && name.starts_with(names_[i])) {
        chosen_ = static_cast<int>(i);
        break;
      }
    }
    if (chosen_ < 0) return false;
  }
  if (!name.starts_with(names_[static_cast<size_t>(chosen_)])) return false;
  return seen_++ == occurrence_;
}

RangeWindow::Event RangeWindow::push(uint32_t thread, uint64_t domain, std::string_view name) {
  std::lock_guard lock(mu_);
  const auto key = std::make_pair(thread, domain);
  const int depth = ++depth_[key];
  if (!matches(name)) return Event::kNone;
  state_ = State::kOpen;
  open_key_ = key;
  open_depth_ = depth;
  open_by_id_ = false;
  return Event::kOpen;
}

RangeWindow::Event RangeWindow::pop(uint32_t thread, uint64_t domain) {
  std::lock_guard lock(mu_);
  const auto key = std::make_pair(thread, domain);
  auto it = depth_.find(key);
  if (it == depth_.end() || it->second == 0) return Event::kNone;  // a pop without its push
  const int depth = it->second--;
  if (state_ == State::kOpen && !open_by_id_ && key == open_key_ && depth == open_depth_) {
    state_ = State::kClosed;
    return Event::kClose;
  }
  return Event::kNone;
}

RangeWindow::Event RangeWindow::start(uint64_t id, std::string_view name) {
  std::lock_guard lock(mu_);
  if (!matches(name)) return Event::kNone;
  state_ = State::kOpen;
  open_by_id_ = true;
  open_id_ = id;
  return Event::kOpen;
}

RangeWindow::Event RangeWindow::end(uint64_t id) {
  std::lock_guard lock(mu_);
  if (state_ == State::kOpen && open_by_id_ && id == open_id_) {
    state_ = State::kClosed;
    return Event::kClose;
  }
  return Event::kNone;
}

bool RangeWindow::opened() const {
  std::lock_guard lock(mu_);
  return state_ != State::kWaiting;
}

bool RangeWindow::closed() const {
  std::lock_guard lock(mu_);
  return state_ == State::kClosed;
}

std::string RangeWindow::describe() const {
  std::lock_guard lock(mu_);
  if (!prefix_) {
    const std::string name = "NVTX range \"" + (names_.empty() ? "" : names_.front()) + "\"";
    if (occurrence_ == 0) return "the first " + name;
    if (occurrence_ == 1) return "the second " + name;
    return name + " number " + std::to_string(occurrence_) + " (from 0)";
  }
  std::string which;
  if (chosen_ >= 0) {
    which = "\"" + names_[static_cast<size_t>(chosen_)] + "\"";
  } else {
    for (size_t i = 0; i < names_.size(); ++i)
      which += (i == 0 ? "\"" : i + 1 == names_.size() ? " or \"" : ", \"") + names_[i] + "\"";
  }
  return "NVTX range number " + std::to_string(occurrence_) + " (from 0) named " + which + "...";
}

}  // namespace fusionscope::inject
