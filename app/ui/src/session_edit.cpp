#include "session_edit.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <system_error>

#include "app.h"

namespace fusionscope::ui {

namespace fs = std::filesystem;

namespace {

// Opens the session read-write for one change; throws StoreError.
template <class Fn>
void write_session(const Session& session, Fn&& fn) {
  storage::SessionStore store =
      storage::SessionStore::open(session.path, storage::OpenMode::kReadWrite);
  fn(store);
}

bool refuse(std::string* why, std::string message) {
  if (why) *why = std::move(message);
  return false;
}

bool editable(const AppState& app, std::string* why) {
  if (!app.session) return refuse(why, "no session is open");
  std::string reason;
  if (!session_writable(*app.session, &reason)) return refuse(why, reason);
  if (lab_writing_session(app))
    return refuse(why, "a lab job is writing this session; wait for it to finish or cancel it");
  return true;
}

}  // namespace

bool session_writable(const Session& session, std::string* why) {
  if (session.is_sample)
    return refuse(why,
                  "the built-in sample session is read-only: it is never written. Start a new "
                  "session, or Save As a copy and work in that");
  if (::access(session.path.c_str(), W_OK) != 0)
    return refuse(why, session.path.string() + " is read-only (" + std::strerror(errno) +
                           "): Save As a copy to a writable place");
  const fs::path dir = fs::absolute(session.path).parent_path();
  if (::access(dir.c_str(), W_OK) != 0)
    return refuse(why, "the folder of " + session.path.string() +
                           " is not writable (a session keeps its journal beside it): Save As a "
                           "copy to a writable place");
  return true;
}

bool same_file(const fs::path& a, const fs::path& b) {
  if (a.empty() || b.empty()) return false;
  std::error_code ec1, ec2;
  const fs::path ca = fs::weakly_canonical(a, ec1), cb = fs::weakly_canonical(b, ec2);
  return (ec1 ? fs::absolute(a) : ca) == (ec2 ? fs::absolute(b) : cb);
}

bool lab_writing_session(const AppState& app) {
  if (!app.lab.controller || !app.session) return false;
  const lab::LabStatus s = app.lab.controller->status();
  return s.busy() && same_file(s.session, app.session->path);
}

bool create_and_open_session(AppState& app, const fs::path& path) {
  try {
    storage::SessionInfo info;
    info.name = path.stem().string();
    storage::SessionStore::create(path, info);
  } catch (const std::exception& e) {
    show_error(app, "Cannot create the session", e.what());
    return false;
  }
  if (!open_session_file(app, path)) return false;
  app.status = "Created " + path.string();
  return true;
}

bool save_session_as(AppState& app, const fs::path& path) {
  if (!app.session) return false;
  if (same_file(path, app.session->path)) {
    show_error(app, "Cannot save the session",
               "That is the session's own file; pick another name.");
    return false;
  }
  if (lab_writing_session(app)) {
    show_error(app, "Cannot save the session",
               "A lab job is writing this session; Save As once it has finished.");
    return false;
  }
  try {
    const storage::SessionStore store = storage::SessionStore::open(app.session->path);
    store.save_as(path);
  } catch (const std::exception& e) {
    show_error(app, "Cannot save the session", e.what());
    return false;
  }
  if (!open_session_file(app, path)) return false;
  app.status = "Saved a copy as " + path.string() + " (now open)";
  return true;
}

bool rename_run(AppState& app, int64_t run_id, const std::string& name, std::string* why) {
  if (!editable(app, why)) return false;
  auto it = std::find_if(app.session->runs.begin(), app.session->runs.end(),
                         [&](const auto& r) { return r->data.info.id == run_id; });
  if (it == app.session->runs.end()) return refuse(why, "the run is no longer in the session");
  if (name.empty()) return refuse(why, "a run needs a name");
  try {
    write_session(*app.session, [&](storage::SessionStore& s) { s.rename_run(run_id, name); });
  } catch (const std::exception& e) {
    return refuse(why, e.what());
  }
  (*it)->data.info.name = name;
  app.comparison.result.reset();  // its summaries carry the old name
  app.status = "Renamed run #" + std::to_string(run_id) + " to " + name;
  return true;
}

bool delete_runs(AppState& app, const std::vector<int64_t>& run_ids, std::string* why) {
  if (!editable(app, why)) return false;
  if (run_ids.empty()) return refuse(why, "no run is selected");
  try {
    write_session(*app.session, [&](storage::SessionStore& s) {
      for (int64_t id : run_ids) s.delete_run(id);
    });
  } catch (const std::exception& e) {
    // Deletions that went through are gone from the file: reload what is there.
    const std::string message = e.what();
    const fs::path path = app.session->path;  // the session object is replaced
    open_session_file(app, path, app.session->is_sample);
    return refuse(why, message);
  }
  auto gone = [&](int64_t id) {
    return std::find(run_ids.begin(), run_ids.end(), id) != run_ids.end();
  };
  std::erase_if(app.session->runs, [&](const auto& r) { return gone(r->data.info.id); });
  std::erase_if(app.runs.selected, gone);
  if (gone(app.runs.current)) app.runs.current = -1;
  if (gone(app.stats.run)) app.stats.run = -1;
  app.stats.computed_for = -2;
  if (gone(app.comparison.a)) app.comparison.a = -1;
  if (gone(app.comparison.b)) app.comparison.b = -1;
  app.comparison.result.reset();
  app.timeline.timeline.selected = {};
  app.comparison.timeline.selected = {};
  app.lab.cache_key.clear();
  app.status = "Deleted " + std::to_string(run_ids.size()) +
               (run_ids.size() == 1 ? " run" : " runs") + " from " +
               app.session->path.filename().string();
  return true;
}

bool set_session_notes(AppState& app, const std::string& notes, std::string* why) {
  if (!editable(app, why)) return false;
  try {
    write_session(*app.session, [&](storage::SessionStore& s) {
      storage::SessionInfo info = s.session();
      info.notes = notes;
      s.update_session(info);
    });
  } catch (const std::exception& e) {
    return refuse(why, e.what());
  }
  app.session->info.notes = notes;
  app.status = "Saved the session's notes";
  return true;
}

size_t load_runs_into(Session& session, const std::vector<int64_t>& run_ids) {
  const storage::SessionStore store = storage::SessionStore::open(session.path);
  session.info = store.session();
  session.properties = store.properties();
  size_t loaded = 0;
  for (int64_t id : run_ids) {
    const std::optional<storage::RunInfo> info = store.run(id);
    if (!info) continue;
    std::unique_ptr<LoadedRun> run;
    try {
      run = prepare_run(store.load_run(id));
    } catch (const std::exception& e) {
      run = std::make_unique<LoadedRun>();
      run->data.info = *info;
      run->data.strings.push_back("");
      run->error = e.what();
    }
    auto at = std::lower_bound(session.runs.begin(), session.runs.end(), id,
                               [](const auto& r, int64_t v) { return r->data.info.id < v; });
    if (at != session.runs.end() && (*at)->data.info.id == id)
      *at = std::move(run);
    else
      session.runs.insert(at, std::move(run));
    ++loaded;
  }
  colour_runs(session);
  return loaded;
}

}  // namespace fusionscope::ui
