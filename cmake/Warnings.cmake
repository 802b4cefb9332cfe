# fusionscope_warnings: the one warning policy every project target links, and nothing else
# (language and code-generation flags live with the targets that need them: see CudaDeviceCode).
add_library(fusionscope_warnings INTERFACE)
target_compile_options(fusionscope_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
option(FUSIONSCOPE_WERROR "Treat warnings as errors, the host compiler's and nvcc's (CI does)" OFF)
if(FUSIONSCOPE_WERROR)
  target_compile_options(fusionscope_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
endif()
