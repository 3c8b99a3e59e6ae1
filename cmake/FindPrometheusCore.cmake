# FindPrometheusCore.cmake -- finds the core library of prometheus-cpp
# (Debian's prometheus-cpp-dev) and defines the imported target
# PrometheusCore::core.
#
# Prism uses the core alone (its metric families and text serializer) and
# serves the text on its own HTTP port, so this finds neither the pull
# library's civetweb nor the push library's curl, which prometheus-cpp's own
# CMake package requires.
#
# Result variables: PrometheusCore_FOUND. Cache variables:
# PrometheusCore_INCLUDE_DIR, PrometheusCore_LIBRARY.

find_path(PrometheusCore_INCLUDE_DIR NAMES prometheus/text_serializer.h)
find_library(PrometheusCore_LIBRARY NAMES prometheus-cpp-core)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(PrometheusCore
  REQUIRED_VARS PrometheusCore_LIBRARY PrometheusCore_INCLUDE_DIR)

if(PrometheusCore_FOUND AND NOT TARGET PrometheusCore::core)
  add_library(PrometheusCore::core UNKNOWN IMPORTED)
  set_target_properties(PrometheusCore::core PROPERTIES
    IMPORTED_LOCATION "${PrometheusCore_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${PrometheusCore_INCLUDE_DIR}")
endif()

mark_as_advanced(PrometheusCore_INCLUDE_DIR PrometheusCore_LIBRARY)
