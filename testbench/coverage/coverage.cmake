# RTL coverage (included from testbench/tests.cmake when KVCIM_WITH_RTL=ON): the tile Verilated a
# third time with line, toggle and user (cover property) coverage and assertions, the harness
# compiled against it (it writes one coverage file per tile to $KVCIM_RTL_COVERAGE_DIR, as
# Verilator's make_tracing_c example does with VerilatedCov::write), and the rtl suite built
# against that as test_rtl_cov. CTest rtl.coverage runs it, merges the files and fails below the
# targets (testbench/coverage/check_coverage.py): >= 95% of the lines of rtl/ hit, every named
# cover point hit (every state of every state machine among them).
add_library(kvcim_rtl_cov STATIC ${KVCIM_RTL_TILE_SOURCES})
target_link_libraries(kvcim_rtl_cov PUBLIC kvcim_cmodel Threads::Threads)
target_compile_definitions(kvcim_rtl_cov PUBLIC KVCIM_HAVE_RTL=1 ${KVCIM_RTL_TRACE_DEFINITION})
verilate(kvcim_rtl_cov
  PREFIX Vcim_attention_tile
  TOP_MODULE cim_attention_tile
  ${KVCIM_RTL_TRACE_ARG}
  COVERAGE
  SOURCES ${KVCIM_RTL_SOURCES} ${KVCIM_RTL_ASSERTIONS}
  VERILATOR_ARGS -O3 -Wall --assert --x-assign fast --x-initial fast)
kvcim_rtl_use_shared(kvcim_rtl_cov)
# -O1: the coverage model is compiled once and run for seconds; compile time matters more.
target_compile_options(kvcim_rtl_cov PRIVATE -O1 -Wno-unused-parameter -Wno-unused-variable
                       -Wno-unused-but-set-variable -Wno-sign-compare
                       -Wno-missing-field-initializers -Wno-maybe-uninitialized)

add_executable(test_rtl_cov ${KVCIM_TEST_rtl_SOURCES})
target_include_directories(test_rtl_cov PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/testbench/tests)
target_link_libraries(test_rtl_cov PRIVATE kvcim_runtime kvcim_rtl_cov GTest::gtest_main)
target_compile_definitions(test_rtl_cov PRIVATE KVCIM_HAVE_RTL=1 KVCIM_KVCIM_EXE="$<TARGET_FILE:kvcim>")
target_compile_options(test_rtl_cov PRIVATE -O1)
kvcim_source_dir(test_rtl_cov)

find_program(KVCIM_VERILATOR_COVERAGE verilator_coverage HINTS ${VERILATOR_ROOT}/bin $ENV{VERILATOR_ROOT}/bin)
find_program(KVCIM_COV_PYTHON NAMES python3 HINTS ${Python3_EXECUTABLE})
add_test(NAME rtl.coverage
         COMMAND ${KVCIM_COV_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/testbench/coverage/check_coverage.py
                 --binary $<TARGET_FILE:test_rtl_cov>
                 --verilator-coverage ${KVCIM_VERILATOR_COVERAGE}
                 --rtl ${CMAKE_CURRENT_SOURCE_DIR}/rtl
                 --dir ${CMAKE_BINARY_DIR}/rtl_coverage
                 --line-target 95)
set_tests_properties(rtl.coverage PROPERTIES TIMEOUT 900)
