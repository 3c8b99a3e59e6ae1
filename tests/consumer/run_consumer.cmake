# Run with cmake -P by the consumer_find_package test (see CMakeLists.txt).
#
# Inputs (-D): PRISM_BUILD_DIR, PRISM_CONFIG, CONSUMER_SOURCE_DIR, WORK_DIR,
# GENERATOR, CXX_COMPILER, CXX_COMPILER_LAUNCHER, BUILD_TYPE, SANITIZE.
#
# Steps: install the built Prism into WORK_DIR/prefix, configure and build
# the consumer project against it, run the consumer. Any failing step fails
# the test.

cmake_minimum_required(VERSION 3.20)

foreach(var IN ITEMS PRISM_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/build")

# Start clean so a stale install or cache cannot hide a broken rule.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# Runs one step; stops the script (and fails the test) if it fails.
function(run_step name)
  message(STATUS "consumer: ${name}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer: ${name} failed (${rc})")
  endif()
endfunction()

set(install_args --install "${PRISM_BUILD_DIR}" --prefix "${prefix}")
if(PRISM_CONFIG)
  list(APPEND install_args --config "${PRISM_CONFIG}")
endif()
run_step("install prism into ${prefix}" "${CMAKE_COMMAND}" ${install_args})

set(configure_args
  -S "${CONSUMER_SOURCE_DIR}"
  -B "${build}"
  "-DCMAKE_PREFIX_PATH=${prefix}")
if(GENERATOR)
  list(APPEND configure_args -G "${GENERATOR}")
endif()
if(CXX_COMPILER)
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
if(CXX_COMPILER_LAUNCHER)
  list(APPEND configure_args
       "-DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_COMPILER_LAUNCHER}")
endif()
if(BUILD_TYPE)
  list(APPEND configure_args "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}")
endif()
if(SANITIZE)
  # A sanitized libprism needs the sanitizer runtimes in the final link.
  set(san "-fsanitize=address,undefined -fno-omit-frame-pointer")
  string(APPEND san " -fno-sanitize-recover=undefined")
  list(APPEND configure_args
       "-DCMAKE_CXX_FLAGS=${san}"
       "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined")
endif()
run_step("configure consumer" "${CMAKE_COMMAND}" ${configure_args})

set(build_args --build "${build}")
if(PRISM_CONFIG)
  list(APPEND build_args --config "${PRISM_CONFIG}")
endif()
run_step("build consumer" "${CMAKE_COMMAND}" ${build_args})

# Single-config generators put the binary in the build dir, multi-config ones
# in a per-config subdirectory.
set(exe "${build}/consumer")
if(NOT EXISTS "${exe}" AND PRISM_CONFIG)
  set(exe "${build}/${PRISM_CONFIG}/consumer")
endif()
run_step("run consumer" "${exe}")
