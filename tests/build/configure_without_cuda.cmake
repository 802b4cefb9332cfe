# Configures the project with the CUDA Toolkit hidden (a PATH without nvcc, CUDAToolkit_ROOT
# pointing nowhere, no CUDACXX) and checks that it chose the viewer alone (FUSIONSCOPE_CUDA=OFF)
# and said so. Configure only: the build without CUDA is CI's second configuration.
#   cmake -DSOURCE_DIR=<source> -DSCRATCH=<empty dir> -P configure_without_cuda.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${SCRATCH}")
execute_process(
  COMMAND env -u CUDACXX -u CUDA_PATH PATH=/usr/bin:/bin CUDAToolkit_ROOT=/nonexistent
          ${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${SCRATCH}" -DCMAKE_BUILD_TYPE=Release
  RESULT_VARIABLE result
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "configuring without CUDA failed (${result}):\n${out}\n${err}")
endif()
file(STRINGS "${SCRATCH}/CMakeCache.txt" choice REGEX "^FUSIONSCOPE_CUDA:BOOL=")
if(NOT choice STREQUAL "FUSIONSCOPE_CUDA:BOOL=OFF")
  message(FATAL_ERROR "expected FUSIONSCOPE_CUDA:BOOL=OFF in the cache, found '${choice}'")
endif()
string(FIND "${out}" "no CUDA Toolkit found: building the viewer only" said)
if(said EQUAL -1)
  message(FATAL_ERROR "configure did not say why it builds the viewer only:\n${out}")
endif()
file(REMOVE_RECURSE "${SCRATCH}")
message(STATUS "without a CUDA Toolkit, the viewer alone is configured")
