// Capture job files (JSON, documented in docs/capture.md): which configurations, in which
// variants, how many iterations.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "fusionscope/lab/capture_job.h"

namespace fusionscope::lab {

struct JobFile {
  std::string session_name;  // optional "session" key
  CaptureJob job;
  std::vector<std::string> skipped;  // "config / variant: why" for variants that do not apply
  int rounds = 1;                    // optional "rounds" key: job.runs as in_rounds() repeats them
};

// Parses a job file's text; throws kernels::ConfigError naming the problem and where it is.
JobFile parse_job_file(std::string_view json_text);
JobFile load_job_file(const std::filesystem::path& path);

// "eager,pointwise-fused" or "all" -> variants; throws kernels::ConfigError on unknown names.
std::vector<kernels::Variant> parse_variant_list(std::string_view list);

}  // namespace fusionscope::lab
