# RTL reliability (included from testbench/fuzz/fuzz.cmake when KVCIM_WITH_RTL=ON): the attention
# tile Verilated a second time with --x-assign unique --x-initial unique, the RTL engineer's
# harness compiled against it (through the shim xrand/Vcim_attention_tile.h, which seeds the
# randomisation), and test_reliability_rtl comparing it with the C model for several seeds.
# Not a suite of KVCIM_TEST_SUITES: it must not link kvcim_rtl_tile, whose symbols it redefines
# (its sources: KVCIM_RTL_XRAND_SOURCES and KVCIM_RTL_XRAND_TEST_SOURCES in sources.cmake).
set(xdir ${CMAKE_CURRENT_SOURCE_DIR}/testbench/tests/reliability_rtl/xrand)
add_library(kvcim_rtl_xrand STATIC ${KVCIM_RTL_TILE_SOURCES} ${KVCIM_RTL_XRAND_SOURCES})
# the shim folder first, so that the harness's #include "Vcim_attention_tile.h" finds the shim
target_include_directories(kvcim_rtl_xrand BEFORE PUBLIC ${xdir})
target_link_libraries(kvcim_rtl_xrand PUBLIC kvcim_cmodel Threads::Threads)
target_compile_definitions(kvcim_rtl_xrand PUBLIC ${KVCIM_RTL_TRACE_DEFINITION})
verilate(kvcim_rtl_xrand
  PREFIX Vcim_attention_tile_x
  TOP_MODULE cim_attention_tile
  ${KVCIM_RTL_TRACE_ARG}
  SOURCES ${KVCIM_RTL_SOURCES}
  VERILATOR_ARGS -O3 --x-assign unique --x-initial unique)
kvcim_rtl_use_shared(kvcim_rtl_xrand)
# -O1: this model runs a few short problems; compile time matters more than its speed.
target_compile_options(kvcim_rtl_xrand PRIVATE -O1 -Wno-unused-parameter -Wno-unused-variable
                       -Wno-unused-but-set-variable -Wno-sign-compare -Wno-missing-field-initializers
                       -Wno-maybe-uninitialized)

add_executable(test_reliability_rtl ${KVCIM_RTL_XRAND_TEST_SOURCES})
target_include_directories(test_reliability_rtl PRIVATE ${xdir})
target_link_libraries(test_reliability_rtl PRIVATE kvcim_rtl_xrand GTest::gtest_main)
gtest_discover_tests(test_reliability_rtl TEST_PREFIX "reliability_rtl." DISCOVERY_TIMEOUT 60
                     PROPERTIES TIMEOUT 600)
