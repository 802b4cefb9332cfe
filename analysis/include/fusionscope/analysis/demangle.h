// Kernel names as people read them. CUPTI reports most kernel names mangled; imported traces
// carry them demangled already. Both forms go through the same two functions.
#pragma once

#include <string>
#include <string_view>

namespace fusionscope::analysis {

// The demangled name ("void ns::kernel<float>(float const*, int)"); names that are not mangled
// (cuBLAS's, Triton's, or already demangled ones) come back unchanged.
std::string demangle(std::string_view name);

// The bare function name without return type, namespaces, template arguments or parameters
// ("kernel"), as a timeline box or a table cell shows it. Mangled input is demangled first.
std::string short_name(std::string_view name);

}  // namespace fusionscope::analysis
