# The gate-level tile's netlist (co-simulated by rtl_gates.cmake, compared with the sum of
# the units by synth.cmake): prepared and, when its inputs changed, synthesised by Yosys in the
# background while the other models are Verilated (included from rtl/rtl.cmake right after
# the package is generated, when Yosys is found). rtl_gates.cmake waits for it before Verilating it:
# the 40 s of Yosys no longer hold the configure step alone.
#
# The netlist is built at configure time, like the package, because verilate() runs Verilator at
# configure time and needs its sources to exist. Yosys runs only when its inputs change (a SHA-256
# of the package, the RTL and the script is kept next to the netlist): ~40 s CPU.
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
    message(FATAL_ERROR "kvcim: netlist.cmake: no 'localparam int ${pname} = N;' in ${KVCIM_TILE_PKG}")
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
set(KVCIM_GATES_DIR ${gdir})
set(KVCIM_GATES_NAME ${name})
set(KVCIM_GATES_TILE "${hd},${tokens},${kv},${prob}")
set(KVCIM_GATES_NETLIST ${netlist})
set(KVCIM_GATES_HASH ${inputs_hash})
set(KVCIM_GATES_PENDING OFF)
if(NOT EXISTS ${netlist} OR NOT stamp STREQUAL inputs_hash)
  message(STATUS "kvcim: Yosys synthesis of the gate-level tile ${name} started (about 40 s CPU)")
  file(REMOVE ${gdir}/yosys.rc ${gdir}/yosys.rc.tmp ${netlist}.tmp)
  # In the background, every descriptor redirected so that execute_process returns at once;
  # yosys.rc appears (by rename) when it ends, holding its exit status.
  execute_process(COMMAND sh -c "(\"$0\" -q -l \"$1/yosys.log\" -s \"$1/gates.ys\" >\"$1/yosys.out\" 2>&1; \
echo $? >\"$1/yosys.rc.tmp\"; mv \"$1/yosys.rc.tmp\" \"$1/yosys.rc\") </dev/null >/dev/null 2>&1 &"
                          ${KVCIM_YOSYS} ${gdir}
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "kvcim: could not start Yosys on the gate-level tile (${KVCIM_YOSYS})")
  endif()
  set(KVCIM_GATES_PENDING ON)
endif()

