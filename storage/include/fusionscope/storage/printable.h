// Text that came from a session or a file (run and kernel names, errors, paths), made safe to
// print on a terminal: a name like "\x1b]0;pwned\x07" must show as itself, not retitle the window
// or move the cursor. Control characters (C0 and C1), DEL and bytes that are not UTF-8 become
// "\xNN"; printable text, including UTF-8, passes unchanged, and so do newlines and tabs unless
// `one_line` (a table cell, a message line).
#pragma once

#include <string>
#include <string_view>

namespace fusionscope::storage {

std::string printable(std::string_view text, bool one_line = false);

}  // namespace fusionscope::storage
