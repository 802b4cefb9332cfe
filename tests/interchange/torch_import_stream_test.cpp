// The streaming reader: the same trace whatever the chunking of its text (every split point of a
// fixture), gzip members one after another, and memory bounded by what is kept on inputs that
// are large, that inflate without bound or that never end.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fixture_json.h"
#include "fusionscope/interchange/interchange_error.h"
#include "fusionscope/interchange/torch_trace_import.h"
#include "run_rows.h"
#include "test_paths.h"

namespace {

using fusionscope::interchange::import_torch_trace;
using fusionscope::interchange::ImportCancelled;
using fusionscope::interchange::ImportOptions;
using fusionscope::interchange::ImportProgress;
using fusionscope::interchange::InterchangeError;
using fusionscope::interchange::parse_torch_trace;
using fusionscope::interchange::read_torch_trace;
using fusionscope::interchange::TorchTrace;
using fusionscope::interchange::write_torch_trace;
using fusionscope::storage::SessionStore;
namespace t = fusionscope::testing;

// One gzip member holding `text`.
std::string gzip_member(std::string_view text, int level = 6) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TorchTrace parse(std::string_view bytes, size_t chunk_bytes) {
  ImportOptions options;
  options.chunk_bytes = chunk_bytes;
  return parse_torch_trace(bytes, "stream.json", options);
}

// Everything the reader produces, compared record by record.
void expect_same(const TorchTrace& a, const TorchTrace& b, const std::string& where) {
  ASSERT_EQ(a.strings, b.strings) << where;
  ASSERT_EQ(a.kernels, b.kernels) << where;
  ASSERT_EQ(a.memops, b.memops) << where;
  ASSERT_EQ(a.api_calls, b.api_calls) << where;
  ASSERT_EQ(a.ranges, b.ranges) << where;
  ASSERT_EQ(a.stats.events, b.stats.events) << where;
  ASSERT_EQ(a.stats.skipped, b.stats.skipped) << where;
  ASSERT_EQ(a.stats.flows_linked, b.stats.flows_linked) << where;
  ASSERT_EQ(a.stats.kernels_launched, b.stats.kernels_launched) << where;
  ASSERT_EQ(a.stats.kernels_with_op, b.stats.kernels_with_op) << where;
  ASSERT_EQ(a.stats.warnings.size(), b.stats.warnings.size()) << where;
  for (size_t i = 0; i < a.stats.warnings.size(); ++i) {
    ASSERT_EQ(a.stats.warnings[i].message, b.stats.warnings[i].message) << where;
    ASSERT_EQ(a.stats.warnings[i].count, b.stats.warnings[i].count) << where;
  }
  ASSERT_EQ(a.session.gpu_name, b.session.gpu_name) << where;
  ASSERT_EQ(a.profiler_steps, b.profiler_steps) << where;
  ASSERT_EQ(a.dtype, b.dtype) << where;
}

// Runs `body` in a child process and returns the child's peak resident memory in MiB, or -1
// when the body failed (returned false or threw).
double peak_mib_of(const std::function<bool()>& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    bool ok = false;
    try {
      ok = body();
    } catch (...) {
      ok = false;
    }
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

// The text of `{"traceEvents": [` + `filler` repeated to `bytes` + one kernel + `]}`, gzipped as
// many members: a small file that inflates to any size.
std::string inflating_trace(const std::string& head, const std::string& filler_unit, uint64_t bytes,
                            const std::string& tail) {
  std::string unit;
  while (unit.size() < (size_t{1} << 20)) unit += filler_unit;
  const std::string unit_gz = gzip_member(unit, 9);
  std::string out = gzip_member(head);
  for (uint64_t n = 0; n < bytes; n += unit.size()) out += unit_gz;
  out += gzip_member(tail);
  return out;
}

const char* const kKernel =
    R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.5, "dur": 2,)"
    R"( "args": {"device": 0, "stream": 7, "correlation": 3}})";

TEST(TorchImportStream, EverySplitPointOfAFixtureReadsTheSame) {
  const std::string text = t::gunzip_file(t::fixture_path(t::kLinearEager));
  ASSERT_GT(text.size(), 1000u);
  const TorchTrace whole = parse(text, size_t{1} << 20);
  ASSERT_GT(whole.kernels.size(), 0u);
  // A chunk of one byte puts a boundary between every two bytes at once; a chunk of p bytes
  // puts the first boundary at p, with everything before it in one piece.
  expect_same(whole, parse(text, 1), "chunks of 1 byte");
  for (size_t p = 2; p < text.size(); ++p) {
    expect_same(whole, parse(text, p), "first split at byte " + std::to_string(p));
    if (HasFatalFailure()) return;
  }
}

TEST(TorchImportStream, ChunkSizesOfALargerFixtureReadTheSame) {
  const std::string text = t::gunzip_file(t::fixture_path(t::kGegluEager));
  const TorchTrace whole = parse(text, size_t{1} << 20);
  for (size_t chunk : {1, 2, 3, 7, 63, 64, 65, 127, 4096, 65537}) {
    expect_same(whole, parse(text, chunk), "chunks of " + std::to_string(chunk));
    if (HasFatalFailure()) return;
  }
  // Compressed, the inflater's chunks fall elsewhere.
  const std::string gz = gzip_member(text);
  for (size_t chunk : {1, 5, 4096}) {
    expect_same(whole, parse(gz, chunk), "gzip, chunks of " + std::to_string(chunk));
  }
}

TEST(TorchImportStream, GzipMembersOneAfterAnotherAreOneText) {
  const std::string text = t::gunzip_file(t::fixture_path(t::kGegluCompile));
  const TorchTrace whole = parse(text, size_t{1} << 20);
  for (size_t split = 1; split < text.size(); split += 997) {
    const std::string two = gzip_member(text.substr(0, split)) + gzip_member(text.substr(split));
    expect_same(whole, parse(two, 4096), "members split at " + std::to_string(split));
    if (HasFatalFailure()) return;
  }
  // Three members, one of them empty.
  const std::string three =
      gzip_member(text.substr(0, 100)) + gzip_member("") + gzip_member(text.substr(100));
  expect_same(whole, parse(three, 333), "three members");
}

TEST(TorchImportStream, EscapedQuotesAndBracketsInsideStringsAcrossChunks) {
  const std::string event =
      R"({"ph": "X", "cat": "kernel", "name": "k\"}]{[\\\"\u00e9", "pid": 0, "tid": 7,)"
      R"( "ts": 1, "dur": 1, "args": {"note": "]]}}\\", "stream": 7}})";
  const std::string text = R"({"traceEvents": [)" + event + "," + event + "]}";
  const TorchTrace whole = parse(text, 1 << 20);
  ASSERT_EQ(whole.kernels.size(), 2u);
  EXPECT_EQ(whole.str(whole.kernels[0].name), "k\"}]{[\\\"\xc3\xa9");
  for (size_t chunk = 1; chunk < text.size(); ++chunk) {
    expect_same(whole, parse(text, chunk), "chunks of " + std::to_string(chunk));
    if (HasFatalFailure()) return;
  }
}

// Brackets inside strings with no escape near them, in strings that run over several 64-byte
// blocks of the scanner and begin or end anywhere within one: the strings' quotes alone say the
// brackets are text.
TEST(TorchImportStream, BracketsInsideLongStringsWithoutEscapesAcrossChunks) {
  std::string name = "k";
  for (int i = 0; i < 40; ++i) name += i % 3 == 0 ? "}]" : (i % 3 == 1 ? "{[x" : "]] ,\"");
  name.erase(std::remove(name.begin(), name.end(), '"'), name.end());
  name.erase(std::remove(name.begin(), name.end(), '\\'), name.end());
  const std::string event = R"({"ph": "X", "cat": "kernel", "name": ")" + name +
                            R"(", "pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {"note": )" +
                            R"(["}", "[[", "{\"a\": 1}", ")" + name + R"("], "stream": 7}})";
  const std::string text = R"({"traceEvents": [)" + event + "," + event + "]}";
  const TorchTrace whole = parse(text, 1 << 20);
  ASSERT_EQ(whole.kernels.size(), 2u);
  EXPECT_EQ(whole.str(whole.kernels[0].name), name);
  for (size_t chunk = 1; chunk < text.size(); chunk += chunk < 200 ? 1 : 7) {
    expect_same(whole, parse(text, chunk), "chunks of " + std::to_string(chunk));
    if (HasFatalFailure()) return;
  }
}

// A number run into a string (`1"ph"7`, found by the fuzzer) is refused however the text is
// chunked; it once read as one skipped event in one chunk and failed when a boundary fell in it.
TEST(TorchImportStream, ANumberRunIntoAStringIsRefusedWhateverTheChunks) {
  const std::string text = std::string(R"({"traceEvents": [)") + kKernel + R"(,1"ph"7, 2]})";
  for (size_t chunk : {size_t{1}, size_t{2}, size_t{5}, size_t{40}, size_t{1} << 20}) {
    try {
      parse(text, chunk);
      ADD_FAILURE() << "chunks of " << chunk << ": expected an InterchangeError";
    } catch (const InterchangeError& e) {
      EXPECT_NE(std::string(e.what()).find("expected ',' or ']' after an event, found '\"'"),
                std::string::npos)
          << "chunks of " << chunk << ": " << e.what();
    }
  }
  // At the top level too, in a member that is not kept.
  for (size_t chunk : {size_t{1}, size_t{1} << 20}) {
    EXPECT_THROW(parse(R"({"other": 1"x", "traceEvents": []})", chunk), InterchangeError)
        << "chunks of " << chunk;
  }
}

TEST(TorchImportStream, EveryEventMalformedIsAnErrorNotAnEmptyRun) {
  const std::string text =
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "one", "dur": 1},
                           {"ph": "X", "cat": "kernel", "ts": 1, "dur": 1}, 17]})";
  try {
    parse(text, 1 << 20);
    FAIL() << "expected an InterchangeError";
  } catch (const InterchangeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("none of its 3 events could be read"), std::string::npos) << what;
    EXPECT_NE(what.find("`ts` is not a number"), std::string::npos) << what;
  }
  // Events of kinds that are not imported are not malformed: an empty trace is not an error.
  EXPECT_NO_THROW(parse(R"({"traceEvents": [{"ph": "M", "name": "process_name"}]})", 64));
  EXPECT_NO_THROW(parse(R"({"traceEvents": []})", 64));
}

TEST(TorchImportStream, DevZeroIsRefusedAtOnce) {
  try {
    read_torch_trace("/dev/zero");
    FAIL() << "expected an InterchangeError";
  } catch (const InterchangeError& e) {
    EXPECT_NE(std::string(e.what()).find("byte 0x00"), std::string::npos) << e.what();
  }
}

TEST(TorchImportStream, AGzipBombCostsTimeNotMemory) {
  // 1 GiB of whitespace between events, in a file of about a megabyte.
  const std::string bomb =
      inflating_trace(R"({"traceEvents": [)", " ", uint64_t{1} << 30, std::string(kKernel) + "]}");
  ASSERT_LT(bomb.size(), size_t{8} << 20);
  uint64_t text_bytes = 0;
  const double peak = peak_mib_of([&] {
    ImportOptions options;
    options.progress = [&](const ImportProgress& p) { text_bytes = p.text_bytes; };
    const TorchTrace trace = parse_torch_trace(bomb, "bomb.json.gz", options);
    return trace.kernels.size() == 1 && text_bytes > (uint64_t{1} << 30);
  });
  ASSERT_GT(peak, 0) << "the bomb did not read as a one-kernel trace";
  EXPECT_LT(peak, 200.0) << "peak resident memory, MiB";
}

TEST(TorchImportStream, HugeValuesArePassedOverNotKept) {
  // A 256 MiB string in a member the importer does not read, and a 64 MiB event.
  const std::string text_head = R"({"stackFrames": ")";
  const std::string junk =
      inflating_trace(text_head, "abcdefgh", uint64_t{256} << 20,
                      R"(", "traceEvents": [{"ph": "X", "cat": "kernel", "name": ")" +
                          std::string(1000, 'x') + R"("}, )" + kKernel + "]}");
  const double peak = peak_mib_of([&] {
    const TorchTrace trace = parse_torch_trace(junk, "junk.json.gz");
    return trace.kernels.size() == 1;
  });
  ASSERT_GT(peak, 0);
  EXPECT_LT(peak, 200.0);

  const std::string big_event = inflating_trace(
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "big", "args": {"blob": ")",
      "0123456789abcdef", uint64_t{64} << 20, R"("}}, )" + std::string(kKernel) + "]}");
  const double peak2 = peak_mib_of([&] {
    const TorchTrace trace = parse_torch_trace(big_event, "big.json.gz");
    bool said_why = false;
    for (const auto& w : trace.stats.warnings) {
      said_why |= w.message == "skipped event: longer than 16 MiB" && w.count == 1;
    }
    return trace.kernels.size() == 1 && trace.stats.skipped == 1 && said_why;
  });
  ASSERT_GT(peak2, 0);
  EXPECT_LT(peak2, 200.0);
}

TEST(TorchImportStream, AnEndlessStreamRunsInBoundedMemoryUntilCancelled) {
  const auto fifo = t::scratch_dir() / "endless.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const double peak = peak_mib_of([&] {
    std::signal(SIGPIPE, SIG_IGN);
    std::thread writer([&] {
      const int fd = open(fifo.c_str(), O_WRONLY);
      if (fd < 0) return;
      std::string block = R"({"traceEvents": [)";
      std::string events;
      // Events the importer does not keep (counters): memory must not grow with the text.
      for (int i = 0; i < 4096; ++i) events += R"({"ph": "C", "name": "tick", "ts": 1}, )";
      for (bool first = true;; first = false) {
        const std::string& data = first ? block : events;
        if (write(fd, data.data(), data.size()) < 0) break;  // the reader has gone
      }
      close(fd);
    });
    std::atomic<bool> cancel{false};
    ImportOptions options;
    options.cancel = &cancel;
    uint64_t last_events = 0;
    options.progress = [&](const ImportProgress& p) {
      last_events = p.events;
      if (p.text_bytes > (uint64_t{512} << 20)) cancel = true;
    };
    bool cancelled = false;
    try {
      read_torch_trace(fifo, options);
    } catch (const ImportCancelled&) {
      cancelled = true;
    }
    writer.join();
    return cancelled && last_events > 1'000'000;
  });
  ASSERT_GT(peak, 0) << "the endless stream was not cancelled";
  EXPECT_LT(peak, 200.0);
}

TEST(TorchImportStream, ProgressGrowsAndEndsAtTheWholeText) {
  const std::string text = t::gunzip_file(t::fixture_path(t::kGegluEager));
  std::vector<ImportProgress> seen;
  ImportOptions options;
  options.chunk_bytes = 512;
  options.progress = [&](const ImportProgress& p) { seen.push_back(p); };
  const TorchTrace trace = parse_torch_trace(text, "p.json", options);
  ASSERT_FALSE(seen.empty());
  for (size_t i = 1; i < seen.size(); ++i) {
    EXPECT_GE(seen[i].text_bytes, seen[i - 1].text_bytes);
    EXPECT_GE(seen[i].events, seen[i - 1].events);
  }
  EXPECT_EQ(seen.back().text_bytes, text.size());
  EXPECT_EQ(seen.back().events, trace.stats.events);
  EXPECT_EQ(seen.back().file_bytes, text.size());
}

TEST(TorchImportStream, CancelBeforeTheFirstChunkStopsTheRead) {
  const std::string text = t::gunzip_file(t::fixture_path(t::kGegluEager));
  std::atomic<bool> cancel{true};
  ImportOptions options;
  options.cancel = &cancel;
  options.chunk_bytes = 1024;
  EXPECT_THROW(parse_torch_trace(text, "c.json", options), ImportCancelled);
}

// What linking remembers spills to files past ImportOptions::spill_bytes a list: with (almost) no
// memory for it, every fact goes through many sorted runs on file, and the trace reads the same.
TEST(TorchImportStream, SpillingEveryFactToFilesReadsTheSame) {
  for (const char* fixture : {t::kLinearEager, t::kGegluEager, t::kGegluCompile}) {
    const TorchTrace in_memory = read_torch_trace(t::fixture_path(fixture));
    ImportOptions spilling;
    spilling.spill_bytes = 1;
    expect_same(in_memory, read_torch_trace(t::fixture_path(fixture), spilling), fixture);
    if (HasFatalFailure()) return;

    // And so does the import into a session, whose kernels wait on file to be linked.
    const auto dir = t::scratch_dir();
    auto a = SessionStore::create(dir / (std::string(fixture) + "_a.fsdb"), {});
    auto b = SessionStore::create(dir / (std::string(fixture) + "_b.fsdb"), {});
    const auto run_a = import_torch_trace(t::fixture_path(fixture), a).run_id;
    const auto run_b = import_torch_trace(t::fixture_path(fixture), b, {}, spilling).run_id;
    const t::RunRows rows_a = t::rows_of(a.load_run(run_a));
    const t::RunRows rows_b = t::rows_of(b.load_run(run_b));
    EXPECT_EQ(t::first_difference(rows_a, rows_b), "") << fixture;
    EXPECT_EQ(rows_a.kernels.size(), in_memory.kernels.size()) << fixture;
  }
}

// The text of a trace of `kernels` launches, each an operator, its launch call, the kernel and
// the flow between them (as PyTorch writes them), written to `fd` as it is made. `distinct`:
// each operator has a name of its own and each kernel an argument object of its own, two new
// strings a launch.
bool write_launches(int fd, uint64_t kernels, bool distinct = false) {
  std::string text =
      R"({"baseTimeNanoseconds": 1700000000000000000, "traceEvents": [)"
      R"({"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}})";
  for (uint64_t i = 1; i <= kernels; ++i) {
    const std::string id = std::to_string(i), ts = std::to_string(i * 100);
    const std::string launch = std::to_string(i * 100 + 1), run = std::to_string(i * 100 + 50);
    const std::string op = distinct ? "aten::mm #" + id : "aten::mm";
    text += R"(, {"ph": "X", "cat": "cpu_op", "name": ")" + op +
            R"(", "pid": 1, "tid": 1, "ts": )" + ts + R"(, "dur": 20, "args": {"External id": )" +
            id + "}}";
    text += R"(, {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, )"
            R"("tid": 1, "ts": )" +
            launch + R"(, "dur": 5, "args": {"correlation": )" + id + R"(, "External id": )" + id +
            "}}";
    text += R"(, {"ph": "s", "id": )" + id + R"(, "pid": 1, "tid": 1, "ts": )" + launch +
            R"(, "cat": "ac2g", "name": "ac2g"})";
    text += R"(, {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": )" + run +
            R"(, "dur": 30, "args": {"device": 0, "stream": 7, "correlation": )" + id +
            R"(, "External id": )" + id + (distinct ? R"(, "queued": )" + id : "") + "}}";
    text += R"(, {"ph": "f", "id": )" + id + R"(, "pid": 0, "tid": 7, "ts": )" + run +
            R"(, "cat": "ac2g", "name": "ac2g", "bp": "e"})";
    if (text.size() > (size_t{1} << 20) || i == kernels) {
      if (i == kernels) text += "]}";
      for (size_t done = 0; done < text.size();) {
        const ssize_t n = write(fd, text.data() + done, text.size() - done);
        if (n <= 0) return false;
        done += static_cast<size_t>(n);
      }
      text.clear();
    }
  }
  return true;
}

// Peak resident memory, MiB, of importing a trace of `kernels` launches into a new session, in
// a child process; -1 when the import failed or linked other than every kernel to its operator.
// The session is left at `session` when given.
double import_peak_mib(uint64_t kernels, bool distinct = false,
                       std::filesystem::path* session_out = nullptr) {
  const auto dir = t::scratch_dir();
  const auto fifo =
      dir / ("launches_" + std::to_string(kernels) + (distinct ? "_distinct" : "") + ".json");
  if (mkfifo(fifo.c_str(), 0600) != 0) return -1;
  const auto session = std::filesystem::path(fifo).replace_extension(".fsdb");
  if (session_out != nullptr) *session_out = session;
  return peak_mib_of([&] {
    std::signal(SIGPIPE, SIG_IGN);
    bool written = false;
    std::thread writer([&] {
      const int fd = open(fifo.c_str(), O_WRONLY);
      if (fd < 0) return;
      written = write_launches(fd, kernels, distinct);
      close(fd);
    });
    auto store = SessionStore::create(session, {});
    const auto result = import_torch_trace(fifo, store);
    writer.join();
    return written && result.trace.stats.kernels == kernels &&
           result.trace.stats.kernels_with_op == kernels &&
           result.trace.stats.flows_linked == kernels;
  });
}

TEST(TorchImportStream, AnImportsMemoryDoesNotGrowWithTheTrace) {
  // Twice the kernels (each linked to its operator and launch), the same memory: what linking
  // needs is on file past a few MiB a list, records go to the session as they are read or
  // linked. Memory grows until those lists and the session's page cache (64 MiB) are full, by
  // about 500,000 of these kernels; past them, it stays. (Keeping 200 bytes a kernel until the
  // trace is linked, as linking in memory did, would add over 110 MiB.)
  const uint64_t small = 600'000, large = 1'200'000;
  const double small_peak = import_peak_mib(small);
  const double large_peak = import_peak_mib(large);
  ASSERT_GT(small_peak, 0) << "the import of " << small << " kernels failed";
  ASSERT_GT(large_peak, 0) << "the import of " << large << " kernels failed";
  RecordProperty("peak_mib_small", std::to_string(small_peak));
  RecordProperty("peak_mib_large", std::to_string(large_peak));
  EXPECT_LT(large_peak - small_peak, 32.0)
      << "peak resident MiB: " << small_peak << " for " << small << " kernels, " << large_peak
      << " for " << large;
}

TEST(TorchImportStream, AnImportsMemoryDoesNotGrowWithItsDistinctStrings) {
  // Each launch names two strings never seen before (its operator's name, its kernel's argument
  // object): twice the launches, twice the distinct strings (1.2 and 2.4 million), the same
  // memory. The importer and the session store keep the ids of the strings named lately only and
  // find the others in the session file. (Keeping every string, as both did, costs about 0.35
  // KiB a string: over 400 MiB more for the second trace.)
  const uint64_t small = 600'000, large = 1'200'000;
  std::filesystem::path session;
  const double small_peak = import_peak_mib(small, /*distinct=*/true);
  const double large_peak = import_peak_mib(large, /*distinct=*/true, &session);
  ASSERT_GT(small_peak, 0) << "the import of " << small << " kernels failed";
  ASSERT_GT(large_peak, 0) << "the import of " << large << " kernels failed";
  // Each string once, each launch with its own: the operator's name as its kernel's op.
  auto store = SessionStore::open(session);
  const std::vector<std::string> strings = store.strings();
  EXPECT_EQ(strings.size(), 2 * large + 4);  // and "", gemm, cudaLaunchKernel, python
  EXPECT_EQ(std::set<std::string>(strings.begin(), strings.end()).size(), strings.size());
  const auto run = store.load_run(store.runs().front().id);
  ASSERT_EQ(run.kernels.size(), large);
  for (const size_t i : {size_t{0}, large / 2, large - 1}) {
    const std::string id = std::to_string(i + 1);
    EXPECT_EQ(run.str(run.kernels[i].op), "aten::mm #" + id);
    EXPECT_EQ(run.str(run.kernels[i].extra), R"({"args": {"queued": )" + id + "}}");
  }
  RecordProperty("peak_mib_small", std::to_string(small_peak));
  RecordProperty("peak_mib_large", std::to_string(large_peak));
  EXPECT_LT(large_peak - small_peak, 32.0)
      << "peak resident MiB: " << small_peak << " for " << 2 * small << " distinct strings, "
      << large_peak << " for " << 2 * large;
}

TEST(TorchImportStream, ACancelAfterTheLastByteLeavesNoRun) {
  // Linking a large trace takes seconds after its last byte is read, and the kernels are written
  // only then: a cancel meanwhile stops the import, and leaves nothing.
  const uint64_t kernels = 200'000;
  const auto dir = t::scratch_dir();
  const auto file = dir / "launches.json";
  const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(write_launches(fd, kernels));
  close(fd);
  auto store = SessionStore::create(dir / "cancelled.fsdb", {});
  std::atomic<bool> cancel{false};
  bool read_whole = false;
  ImportOptions options;
  options.cancel = &cancel;
  options.progress = [&](const ImportProgress& p) {
    if (p.phase == ImportProgress::Phase::kReading && p.events == 1 + 5 * kernels) {
      read_whole = true;
      cancel = true;
    }
  };
  EXPECT_THROW(import_torch_trace(file, store, {}, options), ImportCancelled);
  EXPECT_TRUE(read_whole);
  EXPECT_TRUE(store.runs().empty());
}

TEST(TorchImportStream, ATimeBaseAfterTheEventsImportsAsTheReadDoes) {
  // Records read before their time base is known are final only at the end: the import holds
  // them, then links and writes them as it writes spilled ones.
  std::string text = t::gunzip_file(t::fixture_path(t::kGegluEager));
  const std::string key = R"("baseTimeNanoseconds": )";
  const size_t at = text.find(key);
  ASSERT_NE(at, std::string::npos);
  const size_t end = text.find(", ", at);
  const std::string member = text.substr(at, end - at);
  text.erase(at, end + 2 - at);
  const size_t last_brace = text.rfind('}');
  text.insert(last_brace, ", " + member);
  ASSERT_GT(text.find(member), text.find("traceEvents"));
  const auto dir = t::scratch_dir();
  const auto file = dir / "late_base.json";
  {
    const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    close(fd);
  }
  auto read = SessionStore::create(dir / "late_read.fsdb", {});
  auto imported = SessionStore::create(dir / "late_imported.fsdb", {});
  const TorchTrace trace = read_torch_trace(file);
  ASSERT_GT(trace.kernels.size(), 0u);
  ASSERT_GT(trace.kernels.front().start_ns, int64_t{1} << 60) << "the base was not applied";
  const auto run_read = write_torch_trace(read, trace);
  ImportOptions spilling;
  spilling.spill_bytes = 1;
  const auto run_imported = import_torch_trace(file, imported, {}, spilling).run_id;
  EXPECT_EQ(t::first_difference(t::rows_of(read.load_run(run_read)),
                                t::rows_of(imported.load_run(run_imported))),
            "");
}

}  // namespace
