// Lists of plain records that hold at most a fixed amount in memory and keep the rest in an
// anonymous temporary file: what an import must remember of a trace until its end (the records
// it links, and the facts it links them by) costs disk, not memory, past that amount.
//
// SpillList<T> gives its records back in the order they came; SpillSorter<T, Less> gives them
// back sorted, as often as asked: an external merge sort, whose sorted runs of a buffer's size
// on file are merged kFanIn at a time into longer ones as they come (so a reader merges a few
// dozen runs at most, and each record is rewritten a few times at most, whatever their number).
// T must be trivially copyable.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <queue>
#include <type_traits>
#include <utility>
#include <vector>

namespace fusionscope::interchange::detail {

// Records a spilling list keeps in memory, at most, by default.
inline constexpr size_t kSpillBufferBytes = size_t{4} << 20;

// An anonymous file (unlinked from the start, so nothing is left behind, however the process
// ends), in `dir` when it can be made there, else in the system's temporary directory.
class TempFile {
 public:
  explicit TempFile(const std::filesystem::path& dir);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  // Appends `bytes` at the end; returns the offset they were written at.
  uint64_t append(const void* data, size_t bytes);
  void read(uint64_t offset, void* data, size_t bytes) const;
  uint64_t size() const { return size_; }
  // Gives back the room of `bytes` from `offset` (read as zeros after; the size stays).
  void discard(uint64_t offset, uint64_t bytes);

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  std::filesystem::path where_;  // for messages
};

// Records of T in the order they were added, read back once from the first.
template <typename T>
class SpillList {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  explicit SpillList(std::filesystem::path dir, size_t memory_bytes = kSpillBufferBytes)
      : dir_(std::move(dir)), capacity_(std::max<size_t>(1, memory_bytes / sizeof(T))) {}

  void push(const T& v) {
    if (tail_.size() == capacity_) flush();
    if (tail_.capacity() == 0) tail_.reserve(capacity_);
    tail_.push_back(v);
    ++size_;
  }
  uint64_t size() const { return size_; }

  // Reading: the records in order, each once (no push() after the first next()).
  bool next(T& out) {
    if (read_ == size_) return false;
    const uint64_t on_file = file_ ? file_->size() / sizeof(T) : 0;
    if (read_ < on_file) {
      if (pos_ == chunk_.size()) {
        const uint64_t n = std::min<uint64_t>(kReadChunk, on_file - read_);
        chunk_.resize(n);
        file_->read(read_ * sizeof(T), chunk_.data(), n * sizeof(T));
        pos_ = 0;
      }
      out = chunk_[pos_++];
    } else {
      out = tail_[read_ - on_file];
    }
    ++read_;
    return true;
  }

 private:
  static constexpr size_t kReadChunk = (size_t{1} << 16) / sizeof(T) + 1;

  void flush() {
    if (!file_) file_ = std::make_unique<TempFile>(dir_);
    file_->append(tail_.data(), tail_.size() * sizeof(T));
    tail_.clear();
  }

  std::filesystem::path dir_;
  size_t capacity_;
  std::vector<T> tail_;  // the records not on file, the last ones
  std::unique_ptr<TempFile> file_;
  uint64_t size_ = 0;
  uint64_t read_ = 0;
  std::vector<T> chunk_;
  size_t pos_ = 0;
};

// Records of T, given back in the order of `Less` (a strict weak order; make it total, e.g. with
// a running index, where equal records must come in a set order).
template <typename T, typename Less>
class SpillSorter {
  static_assert(std::is_trivially_copyable_v<T>);

  struct Run {
    uint64_t first = 0;  // index of its first record in the file
    uint64_t count = 0;
    int level = 0;  // 0: a buffer's worth; n + 1: kFanIn runs of level n merged
  };

 public:
  // Runs of one level merged into one of the next, as soon as there are this many.
  static constexpr size_t kFanIn = 16;

  explicit SpillSorter(std::filesystem::path dir, size_t memory_bytes = kSpillBufferBytes,
                       Less less = {})
      : dir_(std::move(dir)),
        capacity_(std::max<size_t>(2, memory_bytes / sizeof(T))),
        less_(less) {}

  void push(const T& v) {
    if (buffer_.size() == capacity_) spill();
    if (buffer_.capacity() == 0) buffer_.reserve(capacity_);
    buffer_.push_back(v);
    ++size_;
  }
  uint64_t size() const { return size_; }

  // Reads the records in order; any number of readers, each from the first record, once every
  // record is pushed.
  class Reader {
   public:
    // The next record; false at the end.
    bool next(T& out) {
      if (!peek()) return false;
      out = *head_;
      advance();
      return true;
    }
    // The next record without taking it, or nullptr at the end.
    const T* peek() {
      if (head_ == nullptr) settle();
      return head_;
    }

   private:
    friend class SpillSorter;
    struct Cursor {
      Run run;
      uint64_t read = 0;  // of the run
      std::vector<T> chunk;
      size_t pos = 0;
    };
    // The runs from `first_run` on, and the memory buffer `with_memory`.
    Reader(const SpillSorter& owner, size_t first_run, bool with_memory)
        : owner_(&owner), mem_end_(with_memory ? owner.buffer_.size() : 0) {
      for (size_t i = first_run; i < owner.runs_.size(); ++i) {
        if (owner.runs_[i].count > 0) cursors_.push_back({owner.runs_[i], 0, {}, 0});
      }
      for (size_t i = 0; i < cursors_.size(); ++i) {
        if (fill(cursors_[i])) heap_.push_back(i);
      }
      std::make_heap(heap_.begin(), heap_.end(), heap_less());
    }

    auto heap_less() const {
      // std heaps keep the greatest first: the cursor whose record is least must compare
      // greatest. Ties: the earlier run first, so equal records come in the order pushed.
      return [this](size_t a, size_t b) {
        const T& x = cursors_[a].chunk[cursors_[a].pos];
        const T& y = cursors_[b].chunk[cursors_[b].pos];
        if (owner_->less_(y, x)) return true;
        if (owner_->less_(x, y)) return false;
        return a > b;
      };
    }
    bool fill(Cursor& c) {
      if (c.pos < c.chunk.size()) return true;
      if (c.read == c.run.count) return false;
      const uint64_t n = std::min<uint64_t>(kReadChunk, c.run.count - c.read);
      c.chunk.resize(n);
      owner_->file_->read((c.run.first + c.read) * sizeof(T), c.chunk.data(), n * sizeof(T));
      c.read += n;
      c.pos = 0;
      return true;
    }
    void settle() {
      // The memory buffer (sorted) competes with the runs on file; it holds the last records.
      const std::vector<T>& mem = owner_->buffer_;
      const T* from_runs =
          heap_.empty() ? nullptr : &cursors_[heap_.front()].chunk[cursors_[heap_.front()].pos];
      const T* from_mem = mem_pos_ < mem_end_ ? &mem[mem_pos_] : nullptr;
      if (from_runs != nullptr && (from_mem == nullptr || !owner_->less_(*from_mem, *from_runs))) {
        head_ = from_runs;
        head_is_mem_ = false;
      } else {
        head_ = from_mem;
        head_is_mem_ = true;
      }
    }
    void advance() {
      if (head_is_mem_) {
        ++mem_pos_;
      } else {
        std::pop_heap(heap_.begin(), heap_.end(), heap_less());
        Cursor& c = cursors_[heap_.back()];
        ++c.pos;
        if (fill(c)) {
          std::push_heap(heap_.begin(), heap_.end(), heap_less());
        } else {
          heap_.pop_back();
        }
      }
      head_ = nullptr;
    }

    const SpillSorter* owner_;
    std::vector<Cursor> cursors_;
    std::vector<size_t> heap_;  // cursors with a record left
    size_t mem_end_ = 0;
    size_t mem_pos_ = 0;
    const T* head_ = nullptr;
    bool head_is_mem_ = false;
  };

  Reader reader() {
    if (!sorted_) {
      std::stable_sort(buffer_.begin(), buffer_.end(), less_);
      sorted_ = true;
    }
    return Reader(*this, 0, true);
  }

 private:
  static constexpr size_t kReadChunk = (size_t{1} << 16) / sizeof(T) + 1;

  void spill() {
    if (!file_) file_ = std::make_unique<TempFile>(dir_);
    std::stable_sort(buffer_.begin(), buffer_.end(), less_);
    const uint64_t first = file_->size() / sizeof(T);
    file_->append(buffer_.data(), buffer_.size() * sizeof(T));
    runs_.push_back({first, buffer_.size(), 0});
    buffer_.clear();
    while (runs_.size() >= kFanIn && same_level_tail()) merge_tail();
  }

  // Whether the last kFanIn runs are of one level.
  bool same_level_tail() const {
    const int level = runs_.back().level;
    for (size_t i = runs_.size() - kFanIn; i < runs_.size(); ++i)
      if (runs_[i].level != level) return false;
    return true;
  }

  // Merges the last kFanIn runs into one at the end of the file, and gives their room back. The
  // merged run takes their place: runs stay in the order their records were pushed.
  void merge_tail() {
    const size_t from = runs_.size() - kFanIn;
    const uint64_t first = file_->size() / sizeof(T);
    uint64_t count = 0;
    {
      Reader r(*this, from, false);
      std::vector<T> out;
      out.reserve(kReadChunk);
      T v;
      while (r.next(v)) {
        out.push_back(v);
        if (out.size() == kReadChunk) {
          file_->append(out.data(), out.size() * sizeof(T));
          count += out.size();
          out.clear();
        }
      }
      file_->append(out.data(), out.size() * sizeof(T));
      count += out.size();
    }
    const uint64_t old_first = runs_[from].first;
    const uint64_t old_end = runs_.back().first + runs_.back().count;
    file_->discard(old_first * sizeof(T), (old_end - old_first) * sizeof(T));
    const int level = runs_.back().level + 1;
    runs_.resize(from);
    runs_.push_back({first, count, level});
  }

  std::filesystem::path dir_;
  size_t capacity_;
  Less less_;
  std::vector<T> buffer_;
  bool sorted_ = false;
  std::vector<Run> runs_;
  std::unique_ptr<TempFile> file_;
  uint64_t size_ = 0;
};

}  // namespace fusionscope::interchange::detail
