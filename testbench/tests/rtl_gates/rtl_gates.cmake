# Gate-level co-simulation (issue 19): the tile synthesised by Yosys to generic gates, flattened,
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
# The netlist is built at configure time, like the package, because verilate() runs Verilator at
# configure time and needs its sources to exist. Yosys runs only when its inputs change (a SHA-256
# of the package, the RTL and the script is kept next to the netlist): ~1 min CPU.
#
# Flow (as testbench/synth/synth.py per unit; `synth`'s full `opt -full` after techmap takes minutes): synth's
# begin and coarse stages with -flatten (proc, opt, fsm, wreduce, alumacc, share, memory), then
# memory_map, opt -fast, techmap to generic gates, abc -fast, opt -fast; `check -assert` and no
# latch, as synth.py; write_verilog -noattr (gates as assign expressions, flops as always blocks:
# no Yosys simulation library needed).
set(KVCIM_GATES_CONFIG "hd8_t32_kv2_p8:8:32:2:8")  # name : head_dim : tokens : kv_bits : prob_bits
string(REPLACE ":" ";" fields ${KVCIM_GATES_CONFIG})
list(GET fields 0 name)
list(GET fields 1 hd)
list(GET fields 2 tokens)
list(GET fields 3 kv)
list(GET fields 4 prob)
set(gdir ${CMAKE_BINARY_DIR}/generated/gates_${name})
file(MAKE_DIRECTORY ${gdir})

file(READ ${KVCIM_TILE_PKG} pkg)
foreach(pair "HEAD_DIM=${hd}" "TOKENS=${tokens}" "KV_BITS=${kv}" "PROB_BITS=${prob}")
  string(REPLACE "=" ";" kv_pair ${pair})
  list(GET kv_pair 0 pname)
  list(GET kv_pair 1 pvalue)
  string(REGEX MATCH "localparam int ${pname} = -?[0-9]+;" found "${pkg}")
  if(NOT found)
    message(FATAL_ERROR "kvcim: rtl_gates.cmake: no 'localparam int ${pname} = N;' in ${KVCIM_TILE_PKG}")
  endif()
  string(REGEX REPLACE "localparam int ${pname} = -?[0-9]+;" "localparam int ${pname} = ${pvalue};" pkg "${pkg}")
endforeach()
file(WRITE ${gdir}/kvcim_tile_pkg.sv.tmp "${pkg}")
configure_file(${gdir}/kvcim_tile_pkg.sv.tmp ${gdir}/kvcim_tile_pkg.sv COPYONLY)

set(netlist ${gdir}/cim_attention_tile_gates.v)
set(rtl_files ${CMAKE_CURRENT_SOURCE_DIR}/rtl/cim_macro.sv ${CMAKE_CURRENT_SOURCE_DIR}/rtl/softmax_unit.sv
              ${CMAKE_CURRENT_SOURCE_DIR}/rtl/cim_attention_tile.sv)
string(JOIN " " rtl_list ${gdir}/kvcim_tile_pkg.sv ${rtl_files})
set(script "read_verilog -defer -sv ${rtl_list}
hierarchy -check -top cim_attention_tile
synth -top cim_attention_tile -flatten -run :fine
memory_map
opt -fast
techmap
opt_clean
abc -fast
opt -fast
check -assert
select -assert-none t:$dlatch t:$_DLATCH*
tee -q -o ${gdir}/gates.stat stat
tee -q -o ${gdir}/gates.ltp ltp -noff
write_verilog -noattr ${netlist}.tmp
")
file(WRITE ${gdir}/gates.ys "${script}")
set(inputs "${script}${pkg}")
foreach(f ${rtl_files})
  file(READ ${f} text)
  string(APPEND inputs "${text}")
endforeach()
string(SHA256 inputs_hash "${inputs}")
set(stamp "")
if(EXISTS ${netlist}.sha256)
  file(READ ${netlist}.sha256 stamp)
endif()
if(NOT EXISTS ${netlist} OR NOT stamp STREQUAL inputs_hash)
  message(STATUS "kvcim: Yosys synthesis of the gate-level tile ${name} (about 1 min CPU)...")
  execute_process(COMMAND ${KVCIM_YOSYS} -q -l ${gdir}/yosys.log -s ${gdir}/gates.ys
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "kvcim: Yosys failed on the gate-level tile (log ${gdir}/yosys.log):\n${out}")
  endif()
  # (written last, so that an interrupted run is redone)
  file(RENAME ${netlist}.tmp ${netlist})
  file(WRITE ${netlist}.sha256 "${inputs_hash}")
endif()

set(lib kvcim_rtl_gates_${name})
add_library(${lib} STATIC ${KVCIM_HARNESS_SOURCES})
target_link_libraries(${lib} PUBLIC kvcim_cmodel Threads::Threads)
target_compile_definitions(${lib} PUBLIC KVCIM_HAVE_RTL=1 ${KVCIM_RTL_TRACE_DEFINITION}
                           "KVCIM_RTL_TILE_CONFIG=${hd},${tokens},${kv},${prob}")
# The netlist is not RTL style: no -Wall; its wide intermediate wires make Verilator see
# bit-level loops (UNOPTFLAT), which cost speed, not correctness. No --assert: nothing to bind to.
verilate(${lib}
  PREFIX Vcim_attention_tile
  TOP_MODULE cim_attention_tile
  ${KVCIM_RTL_TRACE_ARG}
  SOURCES ${netlist}
  VERILATOR_ARGS -O3 -Wno-fatal -Wno-lint -Wno-style -Wno-UNOPTFLAT --x-assign fast --x-initial fast)
kvcim_rtl_use_shared(${lib})
set_target_properties(${lib} PROPERTIES UNITY_BUILD OFF)  # see CMakeLists.txt
# -O1: compile time (the netlist's C++ is ~23 MB) matters more than the model's speed; -O0 for
# the half Verilator marks slow (__Slow.cpp: the initial settle, run once per model).
target_compile_options(${lib} PRIVATE -O1 -Wno-unused-parameter -Wno-unused-variable
                       -Wno-unused-but-set-variable -Wno-sign-compare -Wno-missing-field-initializers
                       -Wno-maybe-uninitialized)
get_target_property(gate_sources ${lib} SOURCES)
list(FILTER gate_sources INCLUDE REGEX "__Slow\\.cpp$")
set_source_files_properties(${gate_sources} TARGET_DIRECTORY ${lib} PROPERTIES COMPILE_OPTIONS -O0)

add_executable(test_rtl_gates_${name} ${KVCIM_RTL_GATES_TEST_SOURCES}
               ${CMAKE_CURRENT_SOURCE_DIR}/testbench/tests/rtl/test_cosim_directed.cpp)
target_include_directories(test_rtl_gates_${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/testbench/tests)
target_link_libraries(test_rtl_gates_${name} PRIVATE ${lib} GTest::gtest_main)
target_compile_definitions(test_rtl_gates_${name} PRIVATE KVCIM_RTL_GATES=1
                           "KVCIM_RTL_EXPECTED=${hd},${tokens},${kv},${prob}")
gtest_discover_tests(test_rtl_gates_${name} TEST_PREFIX "rtl_gates.${name}." DISCOVERY_TIMEOUT 60
                     PROPERTIES TIMEOUT 600)
