# FindJemalloc.cmake -- finds jemalloc and defines the imported target
# Jemalloc::jemalloc (the shared library).
#
# Linking the shared library is enough for jemalloc to replace malloc and
# free in the whole program: its symbols come before the C library's.
#
# Result variables: Jemalloc_FOUND, Jemalloc_INCLUDE_DIRS,
# Jemalloc_LIBRARIES. Cache variables: Jemalloc_INCLUDE_DIR,
# Jemalloc_LIBRARY.

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_Jemalloc QUIET jemalloc)
endif()

find_path(Jemalloc_INCLUDE_DIR
  NAMES jemalloc/jemalloc.h
  HINTS ${PC_Jemalloc_INCLUDEDIR} ${PC_Jemalloc_INCLUDE_DIRS})
find_library(Jemalloc_LIBRARY
  NAMES jemalloc
  HINTS ${PC_Jemalloc_LIBDIR} ${PC_Jemalloc_LIBRARY_DIRS})

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Jemalloc
  REQUIRED_VARS Jemalloc_LIBRARY Jemalloc_INCLUDE_DIR)

if(Jemalloc_FOUND)
  set(Jemalloc_INCLUDE_DIRS "${Jemalloc_INCLUDE_DIR}")
  set(Jemalloc_LIBRARIES "${Jemalloc_LIBRARY}")
  if(NOT TARGET Jemalloc::jemalloc)
    add_library(Jemalloc::jemalloc UNKNOWN IMPORTED)
    set_target_properties(Jemalloc::jemalloc PROPERTIES
      IMPORTED_LOCATION "${Jemalloc_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${Jemalloc_INCLUDE_DIR}")
  endif()
endif()

mark_as_advanced(Jemalloc_INCLUDE_DIR Jemalloc_LIBRARY)
