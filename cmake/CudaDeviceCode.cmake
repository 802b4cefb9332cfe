# fusionscope_cuda_device_code: how the project's CUDA sources are compiled, linked by every target
# with .cu files: the GPUs targeted (FUSIONSCOPE_CUDA_GENCODE), constexpr host functions usable in
# device code, and line information for profilers.
add_library(fusionscope_cuda_device_code INTERFACE)
target_compile_options(fusionscope_cuda_device_code INTERFACE
  $<$<COMPILE_LANGUAGE:CUDA>:${FUSIONSCOPE_CUDA_GENCODE} --expt-relaxed-constexpr -lineinfo>)
