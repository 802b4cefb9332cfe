# fusionscope_warnings: an interface target every project target links for one warning policy.
add_library(fusionscope_warnings INTERFACE)
target_compile_options(fusionscope_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --expt-relaxed-constexpr>)
option(FUSIONSCOPE_WERROR "Treat warnings as errors" OFF)
if(FUSIONSCOPE_WERROR)
  target_compile_options(fusionscope_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
