# FindRocksDB.cmake -- finds RocksDB and defines the imported target
# RocksDB::rocksdb.
#
# Debian's librocksdb-dev does ship a RocksDBConfig.cmake, but its
# RocksDB::rocksdb is the static archive, whose link interface names
# gflags::gflags_shared, Snappy::snappy, lz4::lz4 and zstd::zstd: every
# project linking Prism would have to find all of them. This module picks the
# shared library instead, which carries its own dependencies.
#
# Result variables: RocksDB_FOUND, RocksDB_VERSION, RocksDB_INCLUDE_DIRS,
# RocksDB_LIBRARIES. Cache variables: RocksDB_INCLUDE_DIR, RocksDB_LIBRARY.
#
# If only a static librocksdb.a is found, its compression libraries are not
# added: link them yourself.

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_RocksDB QUIET rocksdb)
endif()

find_path(RocksDB_INCLUDE_DIR
  NAMES rocksdb/db.h
  HINTS ${PC_RocksDB_INCLUDEDIR} ${PC_RocksDB_INCLUDE_DIRS})
find_library(RocksDB_LIBRARY
  NAMES rocksdb
  HINTS ${PC_RocksDB_LIBDIR} ${PC_RocksDB_LIBRARY_DIRS})

if(RocksDB_INCLUDE_DIR AND EXISTS "${RocksDB_INCLUDE_DIR}/rocksdb/version.h")
  file(STRINGS "${RocksDB_INCLUDE_DIR}/rocksdb/version.h" _rocksdb_version_lines
       REGEX "^#define ROCKSDB_(MAJOR|MINOR|PATCH) [0-9]+")
  foreach(_part IN ITEMS MAJOR MINOR PATCH)
    string(REGEX MATCH "ROCKSDB_${_part} ([0-9]+)" _ "${_rocksdb_version_lines}")
    set(_rocksdb_${_part} "${CMAKE_MATCH_1}")
  endforeach()
  set(RocksDB_VERSION "${_rocksdb_MAJOR}.${_rocksdb_MINOR}.${_rocksdb_PATCH}")
  unset(_rocksdb_version_lines)
  unset(_rocksdb_MAJOR)
  unset(_rocksdb_MINOR)
  unset(_rocksdb_PATCH)
  unset(_part)
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(RocksDB
  REQUIRED_VARS RocksDB_LIBRARY RocksDB_INCLUDE_DIR
  VERSION_VAR RocksDB_VERSION)

if(RocksDB_FOUND)
  set(RocksDB_INCLUDE_DIRS "${RocksDB_INCLUDE_DIR}")
  set(RocksDB_LIBRARIES "${RocksDB_LIBRARY}")
  if(NOT TARGET RocksDB::rocksdb)
    find_package(Threads QUIET)
    add_library(RocksDB::rocksdb UNKNOWN IMPORTED)
    set_target_properties(RocksDB::rocksdb PROPERTIES
      IMPORTED_LOCATION "${RocksDB_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${RocksDB_INCLUDE_DIR}")
    if(TARGET Threads::Threads)
      set_property(TARGET RocksDB::rocksdb APPEND PROPERTY
        INTERFACE_LINK_LIBRARIES Threads::Threads)
    endif()
  endif()
endif()

mark_as_advanced(RocksDB_INCLUDE_DIR RocksDB_LIBRARY)
