# Installs the `prism` library, its public headers and a CMake package, so a
# user's project can write:
#
#   find_package(prism REQUIRED)
#   target_link_libraries(app PRIVATE prism::prism)
#
# Included at the end of the top-level CMakeLists.txt. Only `prism` is
# exported: it is built from the objects of prism_framework and prism_actors
# and links imported targets only, so the OBJECT libraries (whose include
# directories are BUILD_INTERFACE only) never enter the export set.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(PRISM_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/prism")

install(TARGETS prism prism_testing
  EXPORT prismTargets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")

# The public API is the whole framework/include/prism tree (with detail/);
# framework/internal stays private.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/framework/include/prism/"
  DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/prism"
  FILES_MATCHING PATTERN "*.hpp")

install(EXPORT prismTargets
  NAMESPACE prism::
  FILE prismTargets.cmake
  DESTINATION "${PRISM_INSTALL_CMAKEDIR}")

configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/prismConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/prismConfig.cmake"
  INSTALL_DESTINATION "${PRISM_INSTALL_CMAKEDIR}")

# Prism is pre-1.0: only the same minor version promises compatibility.
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/prismConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMinorVersion)

# FindCAF.cmake and FindRocksDB.cmake go next to the config: the exported
# prism target names CAF::core, CAF::io and RocksDB::rocksdb, and neither
# library ships a CMake package that defines them as Prism does.
install(FILES
    "${PROJECT_BINARY_DIR}/prismConfig.cmake"
    "${PROJECT_BINARY_DIR}/prismConfigVersion.cmake"
    "${CMAKE_CURRENT_LIST_DIR}/FindCAF.cmake"
    "${CMAKE_CURRENT_LIST_DIR}/FindRocksDB.cmake"
    "${CMAKE_CURRENT_LIST_DIR}/FindJemalloc.cmake"
    "${CMAKE_CURRENT_LIST_DIR}/FindPrometheusCore.cmake"
  DESTINATION "${PRISM_INSTALL_CMAKEDIR}")
