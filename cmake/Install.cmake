# Installs fusionscope like a desktop app, by `cmake --install` or the .deb that `cpack` makes:
#   bin/fusionscope                                     the app and command line
#   lib/libfusionscope_inject.so                        the capture injection library, when built
#   share/fusionscope/sample.fsdb                       the built-in sample session (app/sample)
#   share/fusionscope/torch_mlp.py                      the Lab's PyTorch variants, with CUDA
#   share/applications/fusionscope.desktop              the desktop entry
#   share/icons/hicolor/{scalable,256x256}/apps/        the icon (assets/icon/make_icon.py)
# The app finds the sample beside its executable (<prefix>/bin/../share/fusionscope), so an
# installed tree can move.
include(GNUInstallDirs)

install(TARGETS fusionscope RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# `capture -- COMMAND` looks for the injection library at <bin>/../lib, whatever the platform's
# library directory: it is loaded by path, never linked.
if(TARGET fusionscope_inject)
  install(TARGETS fusionscope_inject LIBRARY DESTINATION lib)
endif()
if(FUSIONSCOPE_CUDA)
  # Looked for beside the executable, then in ../share/fusionscope (lab/torch_variants.h).
  install(FILES ${PROJECT_SOURCE_DIR}/scripts/torch_mlp.py
          DESTINATION ${CMAKE_INSTALL_DATADIR}/fusionscope)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/assets/fusionscope.desktop
        DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES ${PROJECT_SOURCE_DIR}/assets/icon/fusionscope.svg
        DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
install(FILES ${PROJECT_SOURCE_DIR}/assets/icon/fusionscope.png
        DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/256x256/apps)

# `cpack` in the build directory makes fusionscope_<version>_<arch>.deb.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME fusionscope)
set(CPACK_PACKAGE_VENDOR fusionscope)
set(CPACK_PACKAGE_CONTACT "fusionscope developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Desktop profiler for GPU MLPs")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
       "Runs MLP configurations on an NVIDIA GPU in unfused and fused kernel variants, captures "
       "every kernel and CUDA API call with CUPTI into a session file, and shows timelines, "
       "memory bandwidth and unfused-vs-fused comparisons. Sessions open on any machine.")
if(FUSIONSCOPE_CUDA)
  string(APPEND CPACK_PACKAGE_DESCRIPTION
         " This build uses the CUDA Toolkit's cuBLASLt and CUPTI from ${CUDAToolkit_LIBRARY_DIR}.")
else()
  string(APPEND CPACK_PACKAGE_DESCRIPTION
         " This build is the viewer alone, without CUDA: it cannot capture or run kernels.")
endif()
# Debug information stays in the build tree.
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# Debian's libraries the binary links, found by dpkg-shlibdeps; the CUDA Toolkit's own libraries
# are not Debian packages, so they count as the package's private ones.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(FUSIONSCOPE_CUDA)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CUDAToolkit_LIBRARY_DIR})
endif()
include(CPack)
