// What a program capture is asked and answers, as text: the command line and environment a person
// types, a run's title, the exit status `fusionscope capture` returns. CUDA-free (every build).
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fusionscope/lab/program_capture.h"

namespace fusionscope::lab {

int ProgramCaptureOutcome::exit_status() const {
  if (!traced.started) return 1;
  if (traced.stopped) return 130;
  if (traced.signal != 0) return 128 + traced.signal;
  return traced.exit_code;
}

std::vector<std::string> split_command_line(const std::string& line) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < line.size() &&
                 (line[i + 1] == '"' || line[i + 1] == '\\')) {
        cur += line[++i];
      } else {
        cur += c;
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < line.size()) {
      cur += line[++i];
      in_word = true;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (quote != 0) throw std::invalid_argument(std::string("unclosed ") + quote + " quote");
  if (in_word) words.push_back(std::move(cur));
  return words;
}

std::vector<std::pair<std::string, std::string>> parse_environment(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0, number = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos || line[first] == '#') continue;
    line = line.substr(first);
    const size_t eq = line.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument("environment line " + std::to_string(number) +
                                  " is not KEY=VALUE: " + line);
    out.emplace_back(line.substr(0, eq), line.substr(eq + 1));
  }
  return out;
}

std::string command_title(const std::vector<std::string>& command, std::size_t max_chars) {
  std::string s;
  for (size_t i = 0; i < command.size(); ++i) {
    std::string a = command[i];
    if (i <= 1) {
      // The program and an interpreter's script by their file names.
      const auto slash = a.rfind('/');
      if (slash != std::string::npos && !a.starts_with("-")) a = a.substr(slash + 1);
    }
    if (a.find(' ') != std::string::npos) a = "'" + a + "'";
    s += (s.empty() ? "" : " ") + a;
  }
  if (s.size() > max_chars && max_chars > 3) s = s.substr(0, max_chars - 3) + "...";
  return s;
}

}  // namespace fusionscope::lab
