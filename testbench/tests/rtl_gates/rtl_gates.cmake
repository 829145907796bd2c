# Gate-level co-simulation: the tile synthesised by Yosys to generic gates, flattened,
# written as a Verilog netlist, Verilated with the same harness, and checked against the C model by
# the same directed suite (testbench/tests/rtl/test_cosim_directed.cpp, compiled with
# KVCIM_RTL_GATES: the assertion and kvcim-command tests left out) and 500 random problems
# (test_rtl_gates.cpp), results and every event counter bit for bit: what synthesis builds is what
# the C model says. Included from testbench/tests.cmake when KVCIM_WITH_RTL=ON and Yosys is found.
#
# One configuration, the table's smallest (rtl_configs.cmake): the default tile's synthesis takes
# far longer (docs/attention_tile.md, "Synthesis"). Its package is the generated one with the four
# TileParams fields replaced, so the netlist's top is cim_attention_tile with the default ports of
# that configuration, as the harness expects.
#
# The configuration: netlist.cmake chose it (KVCIM_GATES_CONFIG) and started Yosys on it.
set(name ${KVCIM_GATES_NAME})
set(tile ${KVCIM_GATES_TILE})  # head_dim,tokens,kv_bits,prob_bits
set(netlist ${KVCIM_GATES_NETLIST})
if(KVCIM_GATES_PENDING)
  # Wait for the background Yosys run (0.2 s steps, at most 30 min).
  set(steps 0)
  while(NOT EXISTS ${KVCIM_GATES_DIR}/yosys.rc)
    if(steps GREATER 9000)
      message(FATAL_ERROR "kvcim: Yosys on the gate-level tile did not end in 30 min (log ${KVCIM_GATES_DIR}/yosys.log)")
    endif()
    execute_process(COMMAND ${CMAKE_COMMAND} -E sleep 0.2)
    math(EXPR steps "${steps} + 1")
  endwhile()
  file(READ ${KVCIM_GATES_DIR}/yosys.rc rc)
  string(STRIP "${rc}" rc)
  if(NOT rc STREQUAL "0")
    file(READ ${KVCIM_GATES_DIR}/yosys.out out)
    message(FATAL_ERROR "kvcim: Yosys failed on the gate-level tile (exit ${rc}, log ${KVCIM_GATES_DIR}/yosys.log):\n${out}")
  endif()
  # (written last, so that an interrupted run is redone)
  file(RENAME ${netlist}.tmp ${netlist})
  file(WRITE ${netlist}.sha256 "${KVCIM_GATES_HASH}")
endif()

set(lib kvcim_rtl_gates_${name})
add_library(${lib} STATIC ${KVCIM_RTL_TILE_SOURCES})
target_link_libraries(${lib} PUBLIC kvcim_cmodel Threads::Threads)
target_compile_definitions(${lib} PUBLIC KVCIM_HAVE_RTL=1 ${KVCIM_RTL_TRACE_DEFINITION}
                           "KVCIM_RTL_TILE_CONFIG=${tile}")
# The netlist is not RTL style: no -Wall; its wide intermediate wires make Verilator see
# bit-level loops (UNOPTFLAT), which cost speed, not correctness. No --assert: nothing to bind to.
verilate(${lib}
  PREFIX Vcim_attention_tile
  TOP_MODULE cim_attention_tile
  ${KVCIM_RTL_TRACE_ARG}
  SOURCES ${netlist}
  VERILATOR_ARGS -O3 -Wno-fatal -Wno-lint -Wno-style -Wno-UNOPTFLAT --x-assign fast --x-initial fast)
kvcim_rtl_use_shared(${lib} SLOW_OPTIONS -O0)
# -O1: compile time (the netlist's C++ is ~23 MB) matters more than the model's speed; -O0 for
# the half Verilator marks slow (__Slow.cpp: the initial settle, run once per model).
target_compile_options(${lib} PRIVATE -O1 -Wno-unused-parameter -Wno-unused-variable
                       -Wno-unused-but-set-variable -Wno-sign-compare -Wno-missing-field-initializers
                       -Wno-maybe-uninitialized)

add_executable(test_rtl_gates_${name} ${KVCIM_RTL_GATES_TEST_SOURCES}
               ${CMAKE_CURRENT_SOURCE_DIR}/testbench/tests/rtl/test_cosim_directed.cpp
               ${CMAKE_CURRENT_SOURCE_DIR}/testbench/harness/tile_hooks.cpp)
target_include_directories(test_rtl_gates_${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/testbench/tests)
target_link_libraries(test_rtl_gates_${name} PRIVATE ${lib} GTest::gtest_main)
target_compile_definitions(test_rtl_gates_${name} PRIVATE KVCIM_RTL_GATES=1
                           "KVCIM_RTL_EXPECTED=${tile}")
gtest_discover_tests(test_rtl_gates_${name} TEST_PREFIX "rtl_gates.${name}." DISCOVERY_TIMEOUT 60
                     PROPERTIES TIMEOUT 600)
