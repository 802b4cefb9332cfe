// Files that commands write (exports, screenshots, new sessions): checked before anything is
// written, written beside the target under a temporary name, and renamed over it only once
// complete. A failure part-way (a full disk, a file size limit, a crash) never leaves a
// half-written file, and never destroys the file that was there.
//
//   storage::OutputFile csv(args.csv, {.force = args.force, .inputs = {args.session}});
//   export_kernel_csv(csv.temp_path(), run);   // any writer that takes a path
//   csv.commit();                              // the target appears, whole
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace fusionscope::storage {

// Why an output cannot be written, for a person (names the file).
class OutputError : public std::runtime_error {
 public:
  // kArguments: the command line asks for something refused (a session, an input, the same file
  // twice, an existing file without --force); kFileSystem: the file cannot be written there.
  enum class Kind { kArguments, kFileSystem };
  OutputError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

struct OutputRules {
  bool force = false;  // an existing file (not a session, not an input) may be replaced
  std::vector<std::filesystem::path> inputs;  // what the command reads: never written over
  std::vector<std::filesystem::path> others;  // the command's other outputs: never the same file
};

// Throws OutputError unless `target` may be written under `rules`: it is not a folder, not a
// session file (those are only written through the store), not one of the inputs or other outputs
// (by path or by the file a link leads to), and does not exist unless rules.force. A symbolic link
// is an existing file: with force it is replaced by the output, its target never written through.
void check_output(const std::filesystem::path& target, const OutputRules& rules);

// Whether `path` is a fusionscope session (SQLite header and our application id).
bool is_session_file(const std::filesystem::path& path);

// "the disk is full", "the file size limit was reached (ulimit -f)", ... for an errno value.
std::string write_error_reason(int error);

class OutputFile {
 public:
  // check_output(target, rules), then reserves the temporary file beside it.
  OutputFile(std::filesystem::path target, const OutputRules& rules);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  // Without commit(): the temporary file is removed; the target is untouched.
  ~OutputFile();

  const std::filesystem::path& target() const { return target_; }
  // Where to write: in the target's folder, with the target's file name at its end (so writers
  // that look at the extension, ".json.gz", see the same).
  const std::filesystem::path& temp_path() const { return temp_; }

  // `message` (a writer's error) with the temporary file's name replaced by the target's.
  std::string explain(std::string message) const;

  // Flushes the temporary file to disk and renames it over the target. Throws OutputError (with
  // the reason: a full disk, ...) and removes the temporary file if that fails.
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path temp_;
  bool done_ = false;
};

}  // namespace fusionscope::storage
