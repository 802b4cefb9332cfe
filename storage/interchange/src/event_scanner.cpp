#include "event_scanner.h"

#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "fusionscope/interchange/interchange_error.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace fusionscope::interchange::detail {
namespace {

constexpr size_t kMaxKeyBytes = size_t{64} << 10;

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// A number or a literal also ends where a string, an object or an array would begin: the caller
// then refuses what follows. Were `1"a"` one token, a chunk boundary inside it would make the rest
// read as a string, and whether the text is accepted would depend on where the chunks fall.
bool ends_scalar(char c) {
  return c == ',' || c == ']' || c == '}' || c == ':' || c == '"' || c == '[' || c == '{' ||
         is_space(c);
}

// The bytes of 64 that change the structure of JSON text (between them are numbers, literals,
// separators and string contents), one mask of each kind: bit i set when p[i] is one.
struct BlockMasks {
  uint64_t quote = 0, backslash = 0, open = 0, close = 0;  // `"`, `\`, `{` or `[`, `}` or `]`
  uint64_t special() const { return quote | backslash | open | close; }
};

// Reads 64 bytes from p; the caller masks off bits past its data (the window is padded).
BlockMasks block_masks(const char* p) {
  BlockMasks m;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  // OR-ing 0x20 folds '[' onto '{' and ']' onto '}' and nothing else onto either.
  const __m128i lower = _mm_set1_epi8(0x20);
  const __m128i open = _mm_set1_epi8('{');
  const __m128i close = _mm_set1_epi8('}');
  auto bits = [](__m128i hits, int i) {
    return static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(hits))) << (16 * i);
  };
  for (int i = 0; i < 4; ++i) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
    const __m128i folded = _mm_or_si128(v, lower);
    m.quote |= bits(_mm_cmpeq_epi8(v, quote), i);
    m.backslash |= bits(_mm_cmpeq_epi8(v, backslash), i);
    m.open |= bits(_mm_cmpeq_epi8(folded, open), i);
    m.close |= bits(_mm_cmpeq_epi8(folded, close), i);
  }
#else
  for (int i = 0; i < 64; ++i) {
    const char c = p[i];
    const uint64_t bit = uint64_t{1} << i;
    if (c == '"') m.quote |= bit;
    if (c == '\\') m.backslash |= bit;
    if (c == '{' || c == '[') m.open |= bit;
    if (c == '}' || c == ']') m.close |= bit;
  }
#endif
  return m;
}

// Bit i of the result: the parity of the bits 0..i of x.
uint64_t prefix_xor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

std::string byte_words(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", u);
  return std::string("byte ") + hex;
}

}  // namespace

bool is_header_key(std::string_view key) {
  return key == "deviceProperties" || key == "baseTimeNanoseconds" ||
         key == "cuda_driver_version" || key == "cuda_runtime_version" || key == "cupti_version" ||
         key == "traceName" || key == "trace_id" || key == "schemaVersion" || key == "fusionscope";
}

EventScanner::EventScanner(ChunkStream& stream, std::string_view source)
    : stream_(stream), source_(source) {}

void EventScanner::fail(const std::string& what) const {
  throw InterchangeError(source_ + ": " + what);
}

void EventScanner::fail_at(const std::string& what) const {
  fail("not valid JSON: " + what + " at byte " + std::to_string(offset()));
}

void EventScanner::fail_ended() const {
  fail("not valid JSON: the text ends early at byte " + std::to_string(base_ + len_) +
       " (is the file complete?)");
}

bool EventScanner::fill() {
  if (ended_) return false;
  if (!stream_.next(chunk_)) {
    ended_ = true;
    return false;
  }
  ++fills_;
  // Drop what is consumed, then append the chunk behind what is kept.
  if (pos_ > 0) {
    std::memmove(buf_.data(), buf_.data() + pos_, len_ - pos_);
    base_ += pos_;
    len_ -= pos_;
    pos_ = 0;
  }
  const size_t need = len_ + chunk_.bytes.size() + kEventPadding;
  if (buf_.size() < need) buf_.resize(std::max(need, buf_.size() + buf_.size() / 2));
  std::memcpy(buf_.data() + len_, chunk_.bytes.data(), chunk_.bytes.size());
  len_ += chunk_.bytes.size();
  std::memset(buf_.data() + len_, 0, kEventPadding);
  stream_.recycle(std::move(chunk_));
  return true;
}

int EventScanner::peek_token() {
  while (true) {
    while (pos_ < len_ && is_space(buf_[pos_])) ++pos_;
    if (pos_ < len_) return static_cast<unsigned char>(buf_[pos_]);
    if (!fill()) return -1;
  }
}

bool EventScanner::scan_value(ValueState& st) const {
  const char* const begin = buf_.data() + pos_;
  const char* const end = buf_.data() + len_;
  const char* p = begin + st.at;
  if (!st.scalar && st.at == 0 && begin < end && st.depth == 0 && !st.in_string) {
    const char c = *begin;
    st.scalar = c != '{' && c != '[' && c != '"';
  }
  if (st.scalar) {
    // A number or a literal: it ends at the next separator (or the end of the text).
    while (p < end && !ends_scalar(*p)) ++p;
    st.at = static_cast<size_t>(p - begin);
    return p < end || ended_;
  }
  // 64 bytes at a time: the masks of structural bytes.
  const char* resume = p;  // bytes before this are escaped string contents
  while (p < end) {
    const size_t block = std::min<size_t>(64, static_cast<size_t>(end - p));
    const uint64_t in_block = block < 64 ? (uint64_t{1} << block) - 1 : ~uint64_t{0};
    const BlockMasks m = block_masks(p);
    // Inside an object or array, or at the bracket that opens one (a string value, which ends
    // at a quote, is never in it).
    const bool nested = st.depth > 0 || (!st.in_string && (*p == '{' || *p == '['));
    if ((m.backslash & in_block) == 0 && resume <= p && nested) {
      // The common block, without escapes: the quotes delimit the strings (a bracket is inside
      // one when an odd number of quotes, counting the open string's, precede it), so only the
      // brackets outside strings are walked.
      const uint64_t quotes = m.quote & in_block;
      const uint64_t inside = prefix_xor(quotes) ^ (st.in_string ? ~uint64_t{0} : 0);
      uint64_t brackets = (m.open | m.close) & in_block & ~inside;
      while (brackets != 0) {
        const int i = __builtin_ctzll(brackets);
        brackets &= brackets - 1;
        if ((m.open >> i) & 1) {
          if (++st.depth > st.max_depth) st.max_depth = st.depth;
        } else if (--st.depth <= 0) {
          st.in_string = false;
          st.at = static_cast<size_t>(p + i + 1 - begin);
          return true;
        }
      }
      if (__builtin_popcountll(quotes) & 1) st.in_string = !st.in_string;
      p += block;
      continue;
    }
    // A block with a backslash (or a value not yet open): byte by byte through the mask.
    uint64_t mask = m.special() & in_block;
    while (mask != 0) {
      const char* s = p + __builtin_ctzll(mask);
      mask &= mask - 1;
      if (s < resume) continue;
      const char c = *s;
      if (st.in_string) {
        if (c == '\\') {
          if (s + 1 >= end) {  // the escaped byte is in the next chunk: resume at the backslash
            st.at = static_cast<size_t>(s - begin);
            return false;
          }
          resume = s + 2;
        } else if (c == '"') {
          st.in_string = false;
          if (st.depth == 0) {
            st.at = static_cast<size_t>(s + 1 - begin);
            return true;
          }
        }
        continue;
      }
      switch (c) {
        case '"':
          st.in_string = true;
          break;
        case '{':
        case '[':
          if (++st.depth > st.max_depth) st.max_depth = st.depth;
          break;
        case '}':
        case ']':
          if (--st.depth <= 0) {
            st.at = static_cast<size_t>(s + 1 - begin);
            return true;
          }
          break;
        default:  // a backslash outside a string: simdjson (or the root checks) will say so
          break;
      }
    }
    p += block;
    if (resume > p) p = resume;
  }
  st.at = static_cast<size_t>(end - begin);
  return false;
}

uint64_t EventScanner::take_value(size_t keep_limit, bool& kept, ValueState& st) {
  kept = keep_limit > 0;
  uint64_t passed = 0;  // bytes consumed while passing over
  while (!scan_value(st)) {
    if (kept && st.at > keep_limit) kept = false;
    if (!kept) {
      passed += st.at;
      pos_ += st.at;
      st.at = 0;
    }
    // At the end of the text a number or literal is complete; anything else is cut short.
    if (!fill() && !scan_value(st)) fail_ended();
  }
  if (kept && st.at > keep_limit) kept = false;
  if (kept) return st.at;
  passed += st.at;
  pos_ += st.at;
  st.at = 0;
  return passed;
}

std::string EventScanner::take_key() {
  ValueState st;
  bool kept = false;
  const uint64_t n = take_value(kMaxKeyBytes, kept, st);
  if (!kept) fail_at("a top-level key longer than " + std::to_string(kMaxKeyBytes) + " bytes");
  const std::string_view raw(buf_.data() + pos_, n);
  pos_ += n;
  if (raw.find('\\') == std::string_view::npos) return std::string(raw.substr(1, raw.size() - 2));
  try {
    return nlohmann::json::parse(raw).get<std::string>();
  } catch (const nlohmann::json::exception&) {
    fail_at("a malformed key");
  }
}

const char* EventScanner::scalar_words(char first) const {
  switch (first) {
    case '"':
      return "a string";
    case 't':
    case 'f':
      return "a boolean";
    case 'n':
      return "null";
    default:
      return (first == '-' || (first >= '0' && first <= '9')) ? "a number" : nullptr;
  }
}

void EventScanner::run(ScanSink& sink) {
  const int first = peek_token();
  if (first < 0) fail("the file is empty, not a Chrome trace");
  if (first == '[') {
    scan_events(sink);
  } else if (first == '{') {
    ++pos_;
    scan_root_object(sink);
  } else if (const char* words = scalar_words(static_cast<char>(first))) {
    // Only a well-formed value earns the "not a trace" message.
    ValueState st;
    bool kept = false;
    const uint64_t n = take_value(1024, kept, st);
    std::string_view token = kept ? std::string_view(buf_.data() + pos_, n) : "";
    bool valid = !kept || first == '"' || first == '-' || (first >= '0' && first <= '9') ||
                 token == "true" || token == "false" || token == "null";
    if (first == '-' || (first >= '0' && first <= '9')) {
      valid = token.find_first_not_of("0123456789+-.eE") == std::string_view::npos;
    }
    if (!valid) fail_at("unexpected " + byte_words(static_cast<char>(first)));
    fail(std::string("the document is ") + words +
         ", not a Chrome trace (expected an object with a traceEvents array)");
  } else {
    fail_at("unexpected " + byte_words(static_cast<char>(first)));
  }
  const int after = peek_token();
  if (after >= 0) fail_at("unexpected text after the end of the trace");
}

void EventScanner::scan_root_object(ScanSink& sink) {
  bool saw_events = false;
  std::vector<std::string> keys;
  int c = peek_token();
  if (c == '}') {
    ++pos_;
    fail("no `traceEvents` array, so not a Chrome trace (the object is empty)");
  }
  while (true) {
    if (c < 0) fail_ended();
    if (c != '"') fail_at("expected a key, found " + byte_words(static_cast<char>(c)));
    std::string key = take_key();
    c = peek_token();
    if (c < 0) fail_ended();
    if (c != ':') fail_at("expected ':' after a key");
    ++pos_;
    c = peek_token();
    if (c < 0) fail_ended();
    if (keys.size() < 8) keys.push_back(key);
    if (key == "traceEvents") {
      if (c == '{') fail("`traceEvents` is an object, not an array of events");
      if (c != '[') {
        const char* words = scalar_words(static_cast<char>(c));
        if (words == nullptr) fail_at("unexpected " + byte_words(static_cast<char>(c)));
        fail(std::string("`traceEvents` is ") + words + ", not an array of events");
      }
      saw_events = true;
      scan_events(sink);
    } else {
      ValueState st;
      bool kept = false;
      // Every top-level member is handed over (the export writes them back); one past
      // kMaxHeaderValueBytes is passed over without being kept.
      const uint64_t n = take_value(kMaxHeaderValueBytes, kept, st);
      if (kept) {
        sink.on_header(key, std::string_view(buf_.data() + pos_, n));
        pos_ += n;
      } else {
        sink.on_oversized_header(key, n);
      }
    }
    c = peek_token();
    if (c == ',') {
      ++pos_;
      c = peek_token();
      continue;
    }
    if (c == '}') {
      ++pos_;
      break;
    }
    if (c < 0) fail_ended();
    fail_at("expected ',' or '}' between top-level members, found " +
            byte_words(static_cast<char>(c)));
  }
  if (!saw_events) {
    std::string list;
    for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
    fail("no `traceEvents` array, so not a Chrome trace (top-level keys: " + list + ")");
  }
}

void EventScanner::scan_events(ScanSink& sink) {
  ++pos_;  // '['
  int c = peek_token();
  if (c == ']') {
    ++pos_;
    return;
  }
  while (true) {
    if (c < 0) fail_ended();
    ValueState st;
    if (c == '{') {
      bool kept = false;
      const uint64_t n = take_value(kMaxEventBytes, kept, st);
      if (!kept) {
        sink.on_oversized_event(n);
      } else {
        std::string_view text(buf_.data() + pos_, n);
        if (st.max_depth > kMaxEventDepth) {
          pruned_ = prune_deep_values(text, kMaxEventDepth);
          pruned_.append(kEventPadding, '\0');
          text = std::string_view(pruned_.data(), pruned_.size() - kEventPadding);
        }
        sink.on_event(text);
        pos_ += n;
      }
    } else {
      if (scalar_words(static_cast<char>(c)) == nullptr && c != '[') {
        fail_at("unexpected " + byte_words(static_cast<char>(c)) + " in traceEvents");
      }
      bool kept = false;
      take_value(0, kept, st);
      sink.on_non_object_event();
    }
    c = peek_token();
    if (fills_ != reported_fills_) {
      reported_fills_ = fills_;
      sink.on_chunk();
    }
    if (c == ',') {
      ++pos_;
      c = peek_token();
      if (c == ']') fail_at("a ',' before the ']' that closes traceEvents");
      continue;
    }
    if (c == ']') {
      ++pos_;
      sink.on_chunk();
      return;
    }
    if (c < 0) fail_ended();
    fail_at("expected ',' or ']' after an event, found " + byte_words(static_cast<char>(c)));
  }
}

std::string prune_deep_values(std::string_view text, int max_depth) {
  std::string out;
  out.reserve(text.size());
  int depth = 0;
  bool in_string = false;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < text.size()) {
        out.push_back(text[++i]);
      } else if (c == '"') {
        in_string = false;
      }
      ++i;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (depth + 1 > max_depth) {
        // Pass over the whole value and write null in its place.
        int inner = 0;
        bool s = false;
        for (; i < text.size(); ++i) {
          const char d = text[i];
          if (s) {
            if (d == '\\') {
              ++i;
            } else if (d == '"') {
              s = false;
            }
          } else if (d == '"') {
            s = true;
          } else if (d == '{' || d == '[') {
            ++inner;
          } else if ((d == '}' || d == ']') && --inner == 0) {
            break;
          }
        }
        out += "null";
        ++i;
        continue;
      }
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    }
    out.push_back(c);
    ++i;
  }
  return out;
}

}  // namespace fusionscope::interchange::detail
