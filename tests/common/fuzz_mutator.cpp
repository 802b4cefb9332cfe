#include "fuzz_mutator.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

namespace fusionscope::testing {

namespace {

namespace fs = std::filesystem;

// The input being run, for the crash handler (which may only use async-signal-safe calls).
const std::string* g_current = nullptr;
char g_crash_path[4096];

void on_crash(int sig) {
  if (g_current != nullptr) {
    const int fd = ::open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      const char* p = g_current->data();
      size_t left = g_current->size();
      while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n <= 0) break;
        p += n;
        left -= static_cast<size_t>(n);
      }
      ::close(fd);
      const char msg[] = "\nfuzz: the failing input is saved in ";
      [[maybe_unused]] ssize_t w = ::write(2, msg, sizeof msg - 1);
      w = ::write(2, g_crash_path, std::strlen(g_crash_path));
      w = ::write(2, "\n", 1);
    }
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// libFuzzer's dictionary format: one "token" per line (C escapes), comments with #.
std::vector<std::string> read_dictionary(const fs::path& p) {
  std::vector<std::string> out;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) {
    const size_t a = line.find('"'), b = line.rfind('"');
    if (line.empty() || line[0] == '#' || a == std::string::npos || b <= a) continue;
    std::string token;
    for (size_t i = a + 1; i < b; ++i) {
      if (line[i] == '\\' && i + 1 < b) {
        const char c = line[++i];
        if (c == 'x' && i + 2 < b) {
          token += static_cast<char>(std::stoi(line.substr(i + 1, 2), nullptr, 16));
          i += 2;
        } else {
          token += c == 'n' ? '\n' : c == 't' ? '\t' : c;
        }
      } else {
        token += line[i];
      }
    }
    out.push_back(token);
  }
  return out;
}

class Mutator {
 public:
  Mutator(uint64_t seed, const std::vector<std::string>& seeds, const FuzzOptions& o)
      : rng_(seed), seeds_(seeds), options_(o) {}

  std::string next() {
    std::string s = seeds_[pick(seeds_.size())];
    const int rounds = 1 + static_cast<int>(pick(4));
    for (int i = 0; i < rounds; ++i) mutate(s);
    if (s.size() > options_.max_len) s.resize(options_.max_len);
    return s;
  }

 private:
  size_t pick(size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_);
  }

  void mutate(std::string& s) {
    switch (pick(10)) {
      case 0:  // flip one bit
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << pick(8));
        break;
      case 1: {  // an interesting byte
        static constexpr unsigned char kBytes[] = {0, 1, 0x7F, 0x80, 0xFF, '"', '{', '}', '-', '9'};
        if (!s.empty()) s[pick(s.size())] = static_cast<char>(kBytes[pick(sizeof kBytes)]);
        break;
      }
      case 2:  // a random byte
        if (!s.empty()) s[pick(s.size())] = static_cast<char>(pick(256));
        break;
      case 3:  // remove a range
        if (!s.empty()) {
          const size_t at = pick(s.size());
          s.erase(at, 1 + pick(std::min<size_t>(64, s.size() - at)));
        }
        break;
      case 4: {  // repeat a range
        if (s.empty()) break;
        const size_t at = pick(s.size());
        const std::string piece = s.substr(at, 1 + pick(64));
        s.insert(pick(s.size() + 1), piece);
        break;
      }
      case 5:  // truncate
        s.resize(pick(s.size() + 1));
        break;
      case 6: {  // splice in part of another seed
        const std::string& other = seeds_[pick(seeds_.size())];
        if (other.empty()) break;
        const size_t at = pick(other.size());
        s.insert(pick(s.size() + 1), other.substr(at, 1 + pick(256)));
        break;
      }
      case 7:  // a dictionary token
        if (!options_.dictionary.empty())
          s.insert(pick(s.size() + 1), options_.dictionary[pick(options_.dictionary.size())]);
        break;
      case 8: {  // an interesting 32- or 64-bit integer, either byte order
        static constexpr uint64_t kValues[] = {0,
                                               1,
                                               0x7FFFFFFF,
                                               0x80000000,
                                               0xFFFFFFFF,
                                               0x7FFFFFFFFFFFFFFFull,
                                               0x8000000000000000ull,
                                               ~0ull,
                                               16384,
                                               65536};
        uint64_t v = kValues[pick(std::size(kValues))];
        const size_t width = pick(2) ? 4 : 8;
        if (s.size() < width) break;
        if (pick(2)) v = __builtin_bswap64(v) >> (width == 4 ? 32 : 0);
        std::memcpy(s.data() + pick(s.size() - width + 1), &v, width);
        break;
      }
      default: {  // overwrite a range with bytes of another place
        if (s.size() < 2) break;
        const size_t from = pick(s.size()), to = pick(s.size());
        const size_t n = std::min({s.size() - from, s.size() - to, 1 + pick(32)});
        std::memmove(s.data() + to, s.data() + from, n);
        break;
      }
    }
  }

  std::mt19937_64 rng_;
  const std::vector<std::string>& seeds_;
  const FuzzOptions& options_;
};

void run_one(const std::string& input) {
  g_current = &input;
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  g_current = nullptr;
}

}  // namespace

int run_mutation_fuzzer(int argc, char** argv, FuzzOptions o, std::vector<std::string> seeds) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: %s needs a value\n", o.name.c_str(), arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--seconds") {
      o.seconds = std::atof(value().c_str());
    } else if (arg == "--seed") {
      o.seed = std::strtoull(value().c_str(), nullptr, 10);
    } else if (arg == "--max-len") {
      o.max_len = std::strtoull(value().c_str(), nullptr, 10);
    } else if (arg == "--dict") {
      for (auto& t : read_dictionary(value())) o.dictionary.push_back(std::move(t));
    } else {
      std::error_code ec;
      if (fs::is_directory(arg, ec)) {
        std::vector<fs::path> files;
        for (const auto& e : fs::directory_iterator(arg))
          if (e.is_regular_file()) files.push_back(e.path());
        std::sort(files.begin(), files.end());
        for (const auto& f : files) seeds.push_back(read_file(f));
      } else if (fs::is_regular_file(arg, ec)) {
        seeds.push_back(read_file(arg));
      } else {
        std::fprintf(stderr, "%s: no such file or folder: %s\n", o.name.c_str(), arg.c_str());
        return 2;
      }
    }
  }
  if (seeds.empty()) seeds.emplace_back();
  const fs::path crash =
      fs::temp_directory_path() / (o.name + "-crash-" + std::to_string(::getpid()) + ".bin");
  std::snprintf(g_crash_path, sizeof g_crash_path, "%s", crash.c_str());
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, on_crash);

  for (const std::string& s : seeds) run_one(s);
  Mutator mutator(o.seed, seeds, o);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(o.seconds);
  uint64_t runs = 0;
  while (std::chrono::steady_clock::now() < end) {
    run_one(mutator.next());
    ++runs;
  }
  std::printf("%s: %zu seeds and %llu mutations (seed %llu, %.0f s) without a failure\n",
              o.name.c_str(), seeds.size(), static_cast<unsigned long long>(runs),
              static_cast<unsigned long long>(o.seed), o.seconds);
  return 0;
}

}  // namespace fusionscope::testing
