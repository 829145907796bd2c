# Test suites: each suite of KVCIM_TEST_SUITES (sources.cmake), testbench/tests/<suite>/, is one
# GoogleTest executable test_<suite>, its cases registered with CTest. The rtl suites need the
# Verilated tile.
foreach(suite ${KVCIM_TEST_SUITES})
  if(suite MATCHES "rtl" AND NOT KVCIM_WITH_RTL)  # rtl, runtime_rtl, ...
    continue()
  endif()
  set(suite_sources ${KVCIM_TEST_${suite}_SOURCES})
  add_executable(test_${suite} ${suite_sources})
  target_include_directories(test_${suite} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/testbench/tests)
  target_link_libraries(test_${suite} PRIVATE kvcim_runtime GTest::gtest_main)
  if(KVCIM_WITH_RTL)
    target_link_libraries(test_${suite} PRIVATE kvcim_rtl_tile)
    target_compile_definitions(test_${suite} PRIVATE KVCIM_HAVE_RTL=1)
  endif()
  target_compile_definitions(test_${suite} PRIVATE
    KVCIM_KVCIM_EXE="$<TARGET_FILE:kvcim>")
  kvcim_source_dir(test_${suite})
  # A Verilated model that hangs is stopped by the harness's cycle watchdog within seconds; the
  # CTest timeout is the last resort, tight for the RTL suites (each case runs in seconds).
  set(timeout 600)
  if(suite MATCHES "rtl")
    set(timeout 300)
  endif()
  gtest_discover_tests(test_${suite} TEST_PREFIX "${suite}." DISCOVERY_TIMEOUT 60
                       PROPERTIES TIMEOUT ${timeout})
endforeach()

include(testbench/tests/hf/tokenizer_data.cmake)

# CLI contract tests drive the installed-to-build kvcim command through a shell.
foreach(script ${KVCIM_CLI_TESTS})
  get_filename_component(name ${script} NAME_WE)
  add_test(NAME cli.${name} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/${script} $<TARGET_FILE:kvcim> ${CMAKE_CURRENT_SOURCE_DIR})
  # Each script runs the command dozens of times (over two minutes under ASan): started first, so
  # that none of them ends a test run alone on one core.
  # (TIMEOUT: the watchdog of a hung command; the slowest script takes under 3 minutes under ASan)
  set_tests_properties(cli.${name} PROPERTIES COST 30 TIMEOUT 600)
endforeach()
foreach(script ${KVCIM_CLI_DEEP_TESTS})
  get_filename_component(name ${script} NAME_WE)
  if(name MATCHES "^rtl" AND NOT KVCIM_WITH_RTL)
    continue()
  endif()
  add_test(NAME cli.${name} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/${script} $<TARGET_FILE:kvcim> ${CMAKE_CURRENT_SOURCE_DIR})
  set_tests_properties(cli.${name} PROPERTIES LABELS deep COST 60 TIMEOUT 2400)
endforeach()
# (it Verilates and runs a tile: a watchdog as the suites have)
set_tests_properties(cli.rtl_build PROPERTIES TIMEOUT 600)

if(KVCIM_WITH_RTL)
  # The RTL tile built on demand at head_dim 16 to 128 and 2-, 4- and 8-bit KV, each run through
  # `kvcim run` against the C-model tile (17 builds, ~5 min on 2 cores: `make test-deep` only).
  add_test(NAME rtl.any_geometry
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/scripts/rtl_any_geometry.py
                   --kvcim $<TARGET_FILE:kvcim> --work ${CMAKE_BINARY_DIR}/rtl_any_geometry)
  set_tests_properties(rtl.any_geometry PROPERTIES LABELS deep TIMEOUT 3600)
  include(testbench/coverage/coverage.cmake)
  include(testbench/tests/rtl_configs/rtl_configs.cmake)
  if(KVCIM_YOSYS)  # (rtl/rtl.cmake; without Yosys, no netlist: warned there)
    include(testbench/tests/rtl_gates/rtl_gates.cmake)
    include(testbench/synth/synth.cmake)
  endif()
endif()
