# fusionscope_cuda_device_code: how the project's CUDA sources are compiled, linked by every target
# with .cu files: the GPUs targeted (FUSIONSCOPE_CUDA_GENCODE), constexpr host functions usable in
# device code, and line information for profilers.
#
# Kernels are built for Ampere (sm_80, mma.sync paths) and Hopper (sm_90a: wgmma, TMA).
# CMake 3.25 cannot spell "90a" in CUDA_ARCHITECTURES, so the gencode flags are given directly.
set(CMAKE_CUDA_ARCHITECTURES OFF)
set(FUSIONSCOPE_CUDA_GENCODE
    "-gencode=arch=compute_80,code=sm_80"
    "-gencode=arch=compute_90a,code=sm_90a"
    CACHE STRING "nvcc -gencode flags for the kernels")
add_library(fusionscope_cuda_device_code INTERFACE)
target_compile_options(fusionscope_cuda_device_code INTERFACE
  $<$<COMPILE_LANGUAGE:CUDA>:${FUSIONSCOPE_CUDA_GENCODE} --expt-relaxed-constexpr -lineinfo>)
