# Shared build settings and helpers for Harvest components.

set(HARVEST_WARNINGS -Wall -Wextra -Wpedantic -Werror -Wno-missing-field-initializers)
# Under clang the lock annotations are checked (base/thread_annotations.h): a member read or
# written without the lock that guards it is a compile error. The sanitizer build is a clang
# build (scripts/build asan), so CI checks them.
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  list(APPEND HARVEST_WARNINGS -Wthread-safety)
endif()

# The linker: mold when installed (scripts/bootstrap installs it), else lld, else the
# compiler's default. Linking the ~60 test and tool executables with GNU ld took minutes of
# the build; mold links each in well under a second. -DHARVEST_LINKER=default keeps GNU ld.
if(NOT DEFINED HARVEST_LINKER)
  find_program(HARVEST_MOLD mold)
  find_program(HARVEST_LLD NAMES ld.lld)
  if(HARVEST_MOLD)
    set(HARVEST_LINKER mold)
  elseif(HARVEST_LLD)
    set(HARVEST_LINKER lld)
  else()
    set(HARVEST_LINKER default)
  endif()
endif()
set(HARVEST_LINKER "${HARVEST_LINKER}" CACHE STRING "Linker: mold, lld or default")
if(NOT HARVEST_LINKER STREQUAL "default")
  add_link_options(-fuse-ld=${HARVEST_LINKER})
endif()

function(harvest_apply_flags target)
  target_compile_options(${target} PRIVATE ${HARVEST_WARNINGS})
  target_include_directories(${target} PUBLIC ${CMAKE_SOURCE_DIR}/src)
endfunction()

if(HARVEST_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# Under HARVEST_FUZZ every library is instrumented for coverage so libFuzzer can see into it.
if(HARVEST_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

# harvest_library(NAME SOURCES a.cc b.cc DEPS x y)
# Declares the component library harvest_NAME.
function(harvest_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(harvest_${name} STATIC ${ARG_SOURCES})
  harvest_apply_flags(harvest_${name})
  target_link_libraries(harvest_${name} PUBLIC ${ARG_DEPS})
endfunction()

# harvest_test(NAME SOURCES a_test.cc DEPS harvest_x [LABELS l])
# A GoogleTest executable registered with ctest (one ctest entry per executable).
function(harvest_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  harvest_apply_flags(${name})
  # The tests' own code at -O1 in optimised builds: the code under test is the libraries',
  # compiled as in the harvest binary. The test files were ~40% of the release build's
  # compile time (GoogleTest's macros), and compile about a quarter faster at -O1.
  if(CMAKE_BUILD_TYPE MATCHES "^(RelWithDebInfo|Release)$")
    target_compile_options(${name} PRIVATE -O1)
  endif()
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main
                        GTest::gmock)
  add_test(NAME ${name} COMMAND ${name})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT}
                       ENVIRONMENT "HARVEST_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
  if(ARG_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}")
  endif()
endfunction()

# harvest_fuzzer(NAME SOURCE f.cc DEPS harvest_x CORPUS dir)
# With HARVEST_FUZZ (clang): a libFuzzer binary. Otherwise: a replay binary that runs the
# fuzz entry point over every file of CORPUS, registered with ctest (CI replays the corpus).
function(harvest_fuzzer name)
  cmake_parse_arguments(ARG "" "SOURCE;CORPUS" "DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCE})
  harvest_apply_flags(${name})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  if(HARVEST_FUZZ)
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  else()
    target_sources(${name} PRIVATE ${CMAKE_SOURCE_DIR}/src/base/fuzz_replay_main.cc)
    add_test(NAME ${name}_replay COMMAND ${name} ${ARG_CORPUS})
    set_tests_properties(${name}_replay PROPERTIES TIMEOUT 300 LABELS fuzz)
  endif()
endfunction()

# harvest_benchmark(NAME SOURCES b.cc DEPS harvest_x) — a Google Benchmark binary (not a test).
function(harvest_benchmark name)
  if(NOT HARVEST_BENCH)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  harvest_apply_flags(${name})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} benchmark::benchmark benchmark::benchmark_main)
endfunction()
