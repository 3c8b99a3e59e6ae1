# FindCAF.cmake -- locates the C++ Actor Framework (CAF) 0.17.
#
# Why this exists: CAF 0.17 as packaged by Debian (libcaf-dev) ships headers
# and shared libraries but no CMake package configuration, so
# find_package(CAF) needs a Find module. Prism installs this file next to
# prismConfig.cmake so that projects consuming Prism find CAF the same way.
#
# Usage:
#   find_package(CAF [0.17] REQUIRED COMPONENTS core io [openssl])
#
# Components: core, io (needs core), openssl (needs io). Asking for none
# means core. Hints: CAF_ROOT (or the CMAKE_PREFIX_PATH) to search elsewhere.
#
# Result variables:
#   CAF_FOUND, CAF_<component>_FOUND, CAF_VERSION ("0.17.6"),
#   CAF_INCLUDE_DIRS, CAF_LIBRARIES
# Cache variables:
#   CAF_INCLUDE_DIR, CAF_<component>_LIBRARY
# Imported targets (for each component that is found):
#   CAF::core, CAF::io (links CAF::core), CAF::openssl (links CAF::io)

include(FindPackageHandleStandardArgs)

if(NOT CAF_FIND_COMPONENTS)
  set(CAF_FIND_COMPONENTS core)
  set(CAF_FIND_REQUIRED_core TRUE)
endif()

find_path(CAF_INCLUDE_DIR
  NAMES caf/config.hpp
  DOC "Directory holding caf/config.hpp")

if(CAF_INCLUDE_DIR AND EXISTS "${CAF_INCLUDE_DIR}/caf/config.hpp")
  # CAF encodes its version as one integer, e.g. 1706 for 0.17.6.
  file(STRINGS "${CAF_INCLUDE_DIR}/caf/config.hpp" _caf_version_line
       REGEX "^#[ \t]*define[ \t]+CAF_VERSION[ \t]+[0-9]+")
  if(_caf_version_line MATCHES "CAF_VERSION[ \t]+([0-9]+)")
    math(EXPR _caf_major "${CMAKE_MATCH_1} / 10000")
    math(EXPR _caf_minor "(${CMAKE_MATCH_1} / 100) % 100")
    math(EXPR _caf_patch "${CMAKE_MATCH_1} % 100")
    set(CAF_VERSION "${_caf_major}.${_caf_minor}.${_caf_patch}")
  endif()
  unset(_caf_version_line)
  unset(_caf_major)
  unset(_caf_minor)
  unset(_caf_patch)
endif()

# The libraries form a chain: openssl needs io, io needs core. All three are
# searched (cheap), so CAF::openssl exists whenever it is installed; a
# component counts as found only if the ones below it were found too.
set(_caf_known_components core io openssl)
set(_caf_dep_io core)
set(_caf_dep_openssl io)

foreach(_caf_comp IN LISTS _caf_known_components)
  find_library(CAF_${_caf_comp}_LIBRARY
    NAMES caf_${_caf_comp}
    DOC "Path to libcaf_${_caf_comp}")
  mark_as_advanced(CAF_${_caf_comp}_LIBRARY)
  set(CAF_${_caf_comp}_FOUND FALSE)
  if(CAF_INCLUDE_DIR AND CAF_${_caf_comp}_LIBRARY)
    set(_caf_dep "${_caf_dep_${_caf_comp}}")
    if(NOT _caf_dep OR CAF_${_caf_dep}_FOUND)
      set(CAF_${_caf_comp}_FOUND TRUE)
    endif()
  endif()
endforeach()

find_package_handle_standard_args(CAF
  REQUIRED_VARS CAF_INCLUDE_DIR
  VERSION_VAR CAF_VERSION
  HANDLE_COMPONENTS)
mark_as_advanced(CAF_INCLUDE_DIR)

if(CAF_FOUND)
  set(CAF_INCLUDE_DIRS "${CAF_INCLUDE_DIR}")
  set(CAF_LIBRARIES "")

  # CAF's headers use std::thread; libcaf_core itself needs the thread library.
  if(NOT TARGET Threads::Threads)
    find_package(Threads QUIET)
  endif()

  foreach(_caf_comp IN ITEMS core io openssl)
    if(NOT CAF_${_caf_comp}_FOUND OR TARGET CAF::${_caf_comp})
      continue()
    endif()
    add_library(CAF::${_caf_comp} UNKNOWN IMPORTED)
    set_target_properties(CAF::${_caf_comp} PROPERTIES
      IMPORTED_LOCATION "${CAF_${_caf_comp}_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}")
    if(_caf_comp STREQUAL "core")
      if(TARGET Threads::Threads)
        set_property(TARGET CAF::core APPEND PROPERTY
          INTERFACE_LINK_LIBRARIES Threads::Threads)
      endif()
    else()
      set_property(TARGET CAF::${_caf_comp} APPEND PROPERTY
        INTERFACE_LINK_LIBRARIES "CAF::${_caf_dep_${_caf_comp}}")
    endif()
  endforeach()

  # The requested libraries and the ones they need, dependents first.
  set(_caf_wanted FALSE)
  foreach(_caf_comp IN ITEMS openssl io core)
    if(_caf_comp IN_LIST CAF_FIND_COMPONENTS)
      set(_caf_wanted TRUE)
    endif()
    if(_caf_wanted AND CAF_${_caf_comp}_FOUND)
      list(APPEND CAF_LIBRARIES "${CAF_${_caf_comp}_LIBRARY}")
    endif()
  endforeach()
  unset(_caf_wanted)
endif()

unset(_caf_comp)
unset(_caf_dep)
unset(_caf_dep_io)
unset(_caf_dep_openssl)
unset(_caf_known_components)
