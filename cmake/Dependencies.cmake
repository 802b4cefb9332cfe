# Every dependency comes from Debian's packages or the CUDA Toolkit, found the CMake way.
if(FUSIONSCOPE_CUDA)
  find_package(CUDAToolkit 12.0 REQUIRED)
endif()
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 CONFIG QUIET)
find_package(GTest REQUIRED)
find_package(benchmark QUIET)
find_package(ZLIB REQUIRED)
# The trace importer parses each event with simdjson's On-Demand API (Debian: libsimdjson-dev).
find_package(simdjson REQUIRED)
# ... and inflates gzip with Intel's ISA-L (igzip; Debian: libisal-dev), about 3x zlib's speed.
pkg_check_modules(ISAL REQUIRED IMPORTED_TARGET libisal)
find_package(OpenGL REQUIRED)
pkg_check_modules(GLFW3 REQUIRED IMPORTED_TARGET glfw3)

# libimgui-dev ships imgui with its GLFW and OpenGL3 backends compiled into libimgui.a.
find_path(IMGUI_INCLUDE_DIR imgui.h PATH_SUFFIXES imgui REQUIRED)
find_library(IMGUI_LIBRARY NAMES libimgui.a imgui REQUIRED)
find_library(STB_LIBRARY NAMES libstb.a stb REQUIRED)
find_path(STB_INCLUDE_DIR stb_image_write.h PATH_SUFFIXES stb REQUIRED)
add_library(fusionscope_imgui INTERFACE)
target_include_directories(fusionscope_imgui SYSTEM INTERFACE ${IMGUI_INCLUDE_DIR}
                           ${IMGUI_INCLUDE_DIR}/backends ${STB_INCLUDE_DIR})
target_link_libraries(fusionscope_imgui INTERFACE ${IMGUI_LIBRARY} ${STB_LIBRARY}
                      PkgConfig::GLFW3 OpenGL::GL ${CMAKE_DL_LIBS})

if(NOT TARGET CLI11::CLI11)
  find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${CLI11_INCLUDE_DIR})
endif()

# CUPTI and NVTX3 ship with the toolkit; older CMake may not name them.
if(FUSIONSCOPE_CUDA AND NOT TARGET CUDA::cupti)
  find_library(CUPTI_LIBRARY cupti HINTS ${CUDAToolkit_LIBRARY_DIR}
               ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/lib64 REQUIRED)
  add_library(CUDA::cupti SHARED IMPORTED)
  set_target_properties(CUDA::cupti PROPERTIES IMPORTED_LOCATION ${CUPTI_LIBRARY})
  target_include_directories(CUDA::cupti INTERFACE ${CUDAToolkit_INCLUDE_DIRS})
endif()
