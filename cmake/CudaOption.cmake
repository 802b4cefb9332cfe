# FUSIONSCOPE_CUDA: ON builds everything; OFF builds the viewer for machines without the CUDA
# Toolkit (open, import, export, report, screenshot), whose capture, calibrate and Lab runs say
# why they are absent. Left unset, it is ON when a CUDA compiler is found and OFF otherwise; the
# choice is kept in the cache (configure again with -DFUSIONSCOPE_CUDA=ON after installing CUDA).
#
# Where nvcc is looked for: CMAKE_CUDA_COMPILER or $CUDACXX when given; else in CUDAToolkit_ROOT
# (variable or environment) when given, and only there; else on PATH, then in /usr/local/cuda/bin.
if(NOT DEFINED FUSIONSCOPE_CUDA OR FUSIONSCOPE_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    set(_fusionscope_cuda_root "${CUDAToolkit_ROOT}")
    if(NOT _fusionscope_cuda_root AND DEFINED ENV{CUDAToolkit_ROOT})
      set(_fusionscope_cuda_root "$ENV{CUDAToolkit_ROOT}")
    endif()
    if(_fusionscope_cuda_root)
      find_program(_fusionscope_nvcc nvcc PATHS "${_fusionscope_cuda_root}/bin" NO_DEFAULT_PATH
                   NO_CACHE)
    else()
      find_program(_fusionscope_nvcc nvcc PATHS /usr/local/cuda/bin NO_CACHE)
    endif()
    if(_fusionscope_nvcc)
      set(CMAKE_CUDA_COMPILER "${_fusionscope_nvcc}" CACHE FILEPATH "The CUDA compiler")
    endif()
  endif()
  if(NOT CMAKE_CUDA_COMPILER)
    include(CheckLanguage)
    check_language(CUDA)  # $CUDACXX
  endif()
endif()

if(NOT DEFINED FUSIONSCOPE_CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(_fusionscope_cuda_default ON)
    message(STATUS "fusionscope: CUDA compiler ${CMAKE_CUDA_COMPILER}: building everything")
  else()
    set(_fusionscope_cuda_default OFF)
    message(STATUS "fusionscope: no CUDA Toolkit found: building the viewer only (open, import, "
                   "export, report, screenshot). Capture, calibrate and the Lab's runs need "
                   "CUDA: install the toolkit and configure with -DFUSIONSCOPE_CUDA=ON.")
  endif()
  set(FUSIONSCOPE_CUDA ${_fusionscope_cuda_default} CACHE BOOL
      "Build the GPU half (kernels, CUPTI capture, hardware counters); OFF: the viewer only")
elseif(FUSIONSCOPE_CUDA AND NOT CMAKE_CUDA_COMPILER)
  message(FATAL_ERROR "FUSIONSCOPE_CUDA is ON but no CUDA compiler was found: pass "
                      "-DCMAKE_CUDA_COMPILER=/path/to/nvcc, or -DFUSIONSCOPE_CUDA=OFF to build "
                      "the viewer only")
endif()

# Given on the command line, the option is kept with its type and meaning like the detected one.
set_property(CACHE FUSIONSCOPE_CUDA PROPERTY TYPE BOOL)
set_property(CACHE FUSIONSCOPE_CUDA PROPERTY HELPSTRING
             "Build the GPU half (kernels, CUPTI capture, hardware counters); OFF: the viewer only")

if(FUSIONSCOPE_CUDA)
  enable_language(CUDA)
endif()

# fusionscope_build_config: fusionscope/build_config.h, what this build has (FUSIONSCOPE_HAS_CUDA)
# and the one message that says what a build without CUDA lacks.
if(FUSIONSCOPE_CUDA)
  set(FUSIONSCOPE_HAS_CUDA 1)
else()
  set(FUSIONSCOPE_HAS_CUDA 0)
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/build_config.h.in
               ${PROJECT_BINARY_DIR}/generated/fusionscope/build_config.h @ONLY)
add_library(fusionscope_build_config INTERFACE)
target_include_directories(fusionscope_build_config INTERFACE ${PROJECT_BINARY_DIR}/generated)
