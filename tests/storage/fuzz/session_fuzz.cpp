// Fuzz target for session files (libFuzzer entry point): any bytes, written as a session file,
// must be refused with a StoreError or read; what is read must keep the store's invariants; and a
// file that opens for writing must take a new run and read it back whole. Anything else (a crash,
// another exception, a hang, a broken invariant) aborts.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>

#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/session_store.h"

namespace {

namespace fs = std::filesystem;
using namespace fusionscope::storage;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "session fuzz: invariant broken: %s\n", what);
  std::abort();
}

const fs::path& scratch() {
  static const fs::path dir = [] {
    fs::path d =
        fs::temp_directory_path() / ("fusionscope-session-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

void write(const fs::path& p, const uint8_t* data, size_t size) {
  std::error_code ec;
  for (const char* s : {"", "-wal", "-shm", "-journal"}) fs::remove(p.string() + s, ec);
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

void check_run(const RunData& d) {
  require(!d.strings.empty() && d.strings[0].empty(), "strings[0] is \"\"");
  size_t kernels = 0, memops = 0, api = 0, ranges = 0;
  for (const GpuLane& l : d.gpu_lanes) {
    require(l.kernel_begin <= l.kernel_end && l.kernel_end <= d.kernels.size(), "kernel lane");
    require(l.memop_begin <= l.memop_end && l.memop_end <= d.memops.size(), "memop lane");
    kernels += l.kernel_end - l.kernel_begin;
    memops += l.memop_end - l.memop_begin;
  }
  for (const CpuLane& l : d.cpu_lanes) {
    require(l.api_begin <= l.api_end && l.api_end <= d.api_calls.size(), "API lane");
    require(l.range_begin <= l.range_end && l.range_end <= d.ranges.size(), "range lane");
    api += l.api_end - l.api_begin;
    ranges += l.range_end - l.range_begin;
  }
  require(kernels == d.kernels.size() && memops == d.memops.size(), "every GPU record in a lane");
  require(api == d.api_calls.size() && ranges == d.ranges.size(), "every CPU record in a lane");
  (void)d.str(0);
  for (const auto& k : d.kernels) (void)d.str(k.name);
}

void read_everything(const SessionStore& store) {
  (void)store.session();
  (void)store.properties();
  (void)store.session_damage();
  (void)store.quick_check();
  for (const RunInfo& r : store.runs()) {
    try {
      const RunData d = store.load_run(r.id, DamagePolicy::kMark);
      check_run(d);
      require(d.info.id == r.id, "a run loads as itself");
      if (d.info.integrity == Integrity::kVerified)
        require(d.info.state == RunState::kComplete || d.info.state == RunState::kInterrupted,
                "only stored runs verify");
    } catch (const StoreError&) {
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fs::path path = scratch() / "s.fsdb";
  write(path, data, size);
  try {
    read_everything(SessionStore::open(path));
  } catch (const StoreError&) {
  }
  try {
    SessionStore store = SessionStore::open(path, OpenMode::kReadWrite);
    read_everything(store);
    // A file that takes writes must take a whole run and give it back whole.
    RunWriter run(store, RunInfo{});
    KernelRecord k;
    k.name = store.intern("fuzz kernel");
    k.end_ns = 10;
    run.add_kernels(std::span(&k, 1));
    run.commit();
    const RunData d = store.load_run(run.id());
    require(d.kernels.size() == 1 && d.str(d.kernels[0].name) == "fuzz kernel", "written run");
    require(d.info.integrity == Integrity::kVerified, "a new run verifies");
  } catch (const StoreError&) {
  }
  return 0;
}
