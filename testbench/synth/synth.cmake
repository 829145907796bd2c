# Synthesis in CI: Yosys 0.23 synthesises the attention tile of every configuration the
# build Verilates (the default package's and rtl_configs.cmake's table), unit by unit, to generic
# gates: testbench/synth/synth.py. A test per configuration, `rtl.synth.<name>`, fails on a latch,
# a combinational loop, an undriven net, multiple drivers or a Yosys error, and writes cells,
# flip-flops, logic levels and an area estimate per unit and for the tile to
# <build>/rtl_synth/<name>.json (docs/attention_tile.md, "Synthesis", has the table).
#
# The gate-level co-simulation's configuration (rtl_gates.cmake) also checks the method: its
# macros are synthesised at a third column-group count (linear in the groups within 3%) and the
# sum of its units is compared with its whole flattened tile (the netlist that suite co-simulates).
# rtl.synth.area_model then checks the mapper's tile-logic area model against all of them.
# Included from testbench/tests.cmake when KVCIM_WITH_RTL=ON and Yosys is found.
set(synth_dir ${CMAKE_BINARY_DIR}/rtl_synth)
file(MAKE_DIRECTORY ${synth_dir})
# The default configuration: the generated package's parameters (TileParams{}).
file(READ ${KVCIM_TILE_PKG} pkg)
set(default_fields "")
foreach(pname HEAD_DIM TOKENS KV_BITS PROB_BITS)
  string(REGEX MATCH "localparam int ${pname} = ([0-9]+);" found "${pkg}")
  if(NOT found)
    message(FATAL_ERROR "kvcim: synth.cmake: no 'localparam int ${pname} = N;' in ${KVCIM_TILE_PKG}")
  endif()
  list(APPEND default_fields ${CMAKE_MATCH_1})
endforeach()
list(GET default_fields 0 hd)
list(GET default_fields 1 tokens)
list(GET default_fields 2 kv)
list(GET default_fields 3 prob)
set(synth_configs "hd${hd}_t${tokens}_kv${kv}_p${prob}:${hd}:${tokens}:${kv}:${prob}" ${KVCIM_RTL_CONFIGS})
foreach(cfg ${synth_configs})
  string(REPLACE ":" ";" fields ${cfg})
  list(GET fields 0 name)
  set(extra "")
  if(cfg STREQUAL KVCIM_GATES_CONFIG)
    set(extra --check-linear --whole ${KVCIM_GATES_DIR}/gates.stat,${KVCIM_GATES_DIR}/gates.ltp)
  endif()
  add_test(NAME rtl.synth.${name}
           COMMAND ${KVCIM_SYNTH_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/testbench/synth/synth.py
                   --yosys ${KVCIM_YOSYS} --pkg ${KVCIM_TILE_PKG} --rtl ${CMAKE_CURRENT_SOURCE_DIR}/rtl
                   --out ${synth_dir}/${name}.json --config ${cfg} ${extra})
  # (COST: started early, so that a minute-long Yosys run does not end the test run alone)
  set_tests_properties(rtl.synth.${name} PROPERTIES TIMEOUT 900 COST 60 FIXTURES_SETUP kvcim_synth)
  list(APPEND synth_reports ${synth_dir}/${name}.json)
endforeach()
# The mapper's tile-logic area (kTileLogic* in chip.hpp) against these syntheses: a refit of
# softmax_unit + tile_glue over tokens x prob_bits must agree with the header's constants.
add_test(NAME rtl.synth.area_model
         COMMAND ${KVCIM_SYNTH_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/testbench/synth/area_model.py
                 --header ${CMAKE_CURRENT_SOURCE_DIR}/include/kvcim/mapper/chip.hpp ${synth_reports})
set_tests_properties(rtl.synth.area_model PROPERTIES FIXTURES_REQUIRED kvcim_synth TIMEOUT 60)
