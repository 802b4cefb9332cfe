#include "session_loader.h"

#include <system_error>

namespace fusionscope::ui {

namespace fs = std::filesystem;

namespace {

// Thrown inside the worker when Cancel was pressed; never leaves it.
struct Cancelled {};

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

bool is_trace_file(const fs::path& file) {
  const std::string name = file.filename().string();
  return ends_with(name, ".json") || ends_with(name, ".json.gz");
}

std::unique_ptr<SessionLoader> SessionLoader::open(fs::path path) {
  std::unique_ptr<SessionLoader> l(new SessionLoader());
  l->path_ = std::move(path);
  l->progress_.stage = "opening";
  l->worker_ = std::thread(&SessionLoader::run_open, l.get());
  return l;
}

SessionLoader::~SessionLoader() {
  cancel_ = true;
  if (worker_.joinable()) worker_.join();
}

LoadProgress SessionLoader::progress() const {
  std::lock_guard lock(mutex_);
  return progress_;
}

void SessionLoader::set_progress(std::string stage, double fraction) {
  if (cancel_) throw Cancelled{};
  std::lock_guard lock(mutex_);
  progress_ = {std::move(stage), fraction};
}

std::unique_ptr<Session> SessionLoader::take(std::string* error) {
  if (!done_) return nullptr;
  if (worker_.joinable()) worker_.join();
  if (error) *error = error_;
  return std::move(result_);
}

std::unique_ptr<Session> SessionLoader::load(double from, double to) {
  set_progress("opening " + path_.filename().string(), from);
  const storage::SessionStore store =
      storage::SessionStore::open(path_, storage::OpenMode::kReadOnly);
  auto session = std::make_unique<Session>();
  session->path = path_;
  session->info = store.session();
  session->properties = store.properties();
  const std::vector<storage::RunInfo> infos = store.runs();
  const double n = static_cast<double>(std::max<size_t>(infos.size(), 1));
  for (size_t i = 0; i < infos.size(); ++i) {
    const double at = from + (to - from) * static_cast<double>(i) / n;
    const double step = (to - from) / n;
    const std::string which = "run " + std::to_string(i + 1) + " of " +
                              std::to_string(infos.size()) + " (" + infos[i].name + ")";
    set_progress("reading " + which, at);
    try {
      storage::RunData data = store.load_run(infos[i].id);
      // Reading takes about half of a run's time, deriving the rest.
      set_progress("indexing " + which, at + step * 0.5);
      session->runs.push_back(prepare_run(std::move(data)));
    } catch (const storage::StoreError& e) {
      // A run that cannot be read stays listed with its error, as open_session() does.
      auto failed = std::make_unique<LoadedRun>();
      failed->data.info = infos[i];
      failed->data.strings.push_back("");
      failed->error = e.what();
      session->runs.push_back(std::move(failed));
    }
  }
  set_progress("colouring", to);
  colour_runs(*session);
  return session;
}

void SessionLoader::run_open() {
  try {
    result_ = load(0.0, 1.0);
  } catch (const Cancelled&) {
    error_ = "cancelled";
  } catch (const storage::StoreError& e) {
    error_ = e.what();
  } catch (const std::bad_alloc&) {
    error_ = "not enough memory to load " + path_.string();
  }
  done_ = true;
}

}  // namespace fusionscope::ui
