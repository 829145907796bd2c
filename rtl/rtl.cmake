# The Verilated CIM attention tile and its C++ harness: library kvcim_rtl_tile (included by the
# top CMakeLists.txt when KVCIM_WITH_RTL=ON, after find_package(verilator)).
#
# One source of truth for the parameters: include/kvcim/cmodel/cim/attention_tile.hpp. The SV
# package kvcim_tile_pkg (parameters, exponent table, counter indices) is generated from it by
# rtl/gen_tile_pkg.cpp, compiled and run here at configure time, because verilate() runs Verilator
# at configure time too and needs the package to exist.

set(KVCIM_TILE_PKG ${CMAKE_BINARY_DIR}/generated/kvcim_tile_pkg.sv)
set(KVCIM_TILE_PKG_INPUTS
    ${CMAKE_CURRENT_SOURCE_DIR}/rtl/gen_tile_pkg.cpp
    ${CMAKE_CURRENT_SOURCE_DIR}/cmodel/cim/softmax_table.cpp
    ${CMAKE_CURRENT_SOURCE_DIR}/include/kvcim/cmodel/cim/attention_tile.hpp
    ${CMAKE_CURRENT_SOURCE_DIR}/include/kvcim/rtl/rtl_tile.hpp)
# Editing any of them re-runs CMake, which regenerates the package (and Verilator re-runs).
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${KVCIM_TILE_PKG_INPUTS})

try_run(KVCIM_GEN_PKG_RUN KVCIM_GEN_PKG_COMPILE
        ${CMAKE_BINARY_DIR}/CMakeFiles/kvcim_gen_tile_pkg
        SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/rtl/gen_tile_pkg.cpp
                ${CMAKE_CURRENT_SOURCE_DIR}/cmodel/cim/softmax_table.cpp
        CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${CMAKE_CURRENT_SOURCE_DIR}/include"
        CXX_STANDARD 20
        CXX_STANDARD_REQUIRED ON
        COMPILE_OUTPUT_VARIABLE KVCIM_GEN_PKG_COMPILE_OUT
        RUN_OUTPUT_VARIABLE KVCIM_GEN_PKG_OUT)
if(NOT KVCIM_GEN_PKG_COMPILE OR NOT KVCIM_GEN_PKG_RUN EQUAL 0)
  message(FATAL_ERROR "kvcim: could not build or run rtl/gen_tile_pkg.cpp to generate "
                      "${KVCIM_TILE_PKG}:\n${KVCIM_GEN_PKG_COMPILE_OUT}\n${KVCIM_GEN_PKG_OUT}")
endif()
# Only touch the file when its content changes, so that Verilator re-runs only then.
file(WRITE ${KVCIM_TILE_PKG}.tmp "${KVCIM_GEN_PKG_OUT}")
configure_file(${KVCIM_TILE_PKG}.tmp ${KVCIM_TILE_PKG} COPYONLY)

# Yosys (generic-cell synthesis, testbench/synth/synth.cmake; the gate-level co-simulation,
# testbench/tests/rtl_gates/rtl_gates.cmake). Without it neither runs: warned here.
find_program(KVCIM_YOSYS yosys)
find_program(KVCIM_SYNTH_PYTHON NAMES python3 HINTS ${Python3_EXECUTABLE})
if(KVCIM_YOSYS)  # (its Yosys run goes on in the background while the models below are Verilated)
  include(testbench/tests/rtl_gates/netlist.cmake)
else()
  message(WARNING "kvcim: yosys not found (scripts/setup.sh installs it): no synthesis tests, no gate-level co-simulation")
endif()

set(KVCIM_RTL_SOURCES
    ${KVCIM_TILE_PKG}
    ${CMAKE_CURRENT_SOURCE_DIR}/rtl/cim_macro.sv
    ${CMAKE_CURRENT_SOURCE_DIR}/rtl/softmax_unit.sv
    ${CMAKE_CURRENT_SOURCE_DIR}/rtl/cim_attention_tile.sv)

# The assertions (bound into the tile) are compiled in the test builds only, with --assert.
set(KVCIM_RTL_ASSERTIONS ${CMAKE_CURRENT_SOURCE_DIR}/rtl/cim_attention_tile_assertions.sv)
# verilate() lists the generated C++ files at configure time and their names (DepSet hashes)
# change with the RTL: an RTL edit re-runs CMake, or a stale list fails to link.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${KVCIM_RTL_SOURCES} ${KVCIM_RTL_ASSERTIONS})

# The trace format every Verilated tile is built with (one per model: Verilator's --trace and
# --trace-fst give the model different trace() signatures). FST, GTKWave's compressed format, by
# default; VCD for tools that read only VCD.
set(KVCIM_RTL_TRACE fst CACHE STRING "Trace format of the Verilated tile: fst or vcd")
set_property(CACHE KVCIM_RTL_TRACE PROPERTY STRINGS fst vcd)
if(KVCIM_RTL_TRACE STREQUAL "fst")
  set(KVCIM_RTL_TRACE_ARG TRACE_FST)
elseif(KVCIM_RTL_TRACE STREQUAL "vcd")
  set(KVCIM_RTL_TRACE_ARG TRACE)
else()
  message(FATAL_ERROR "kvcim: KVCIM_RTL_TRACE = '${KVCIM_RTL_TRACE}': expected fst or vcd")
endif()
# What a harness compiled against such a model needs to know (rtl_tile.cpp picks its trace writer).
set(KVCIM_RTL_TRACE_DEFINITION "KVCIM_RTL_TRACE_FST=$<STREQUAL:${KVCIM_RTL_TRACE},fst>")

# What every Verilated model's library shares: the harness's model-independent sources and the
# Verilator runtime (verilated.cpp, the trace writer, the thread pool). verilate() adds the runtime
# to each target it is given, so the nine models of a build compiled it nine times (~13 s of CPU
# each, with the harness's shared sources ~20 s): here it is compiled once, as objects archived
# into each model's library by kvcim_rtl_use_shared(). Objects, not a library: each model's
# library stays self-contained, as the RTL modules' hidden symbols need (rtl_configs.cmake).
if(KVCIM_RTL_TRACE STREQUAL "fst")
  set(trace_writer ${VERILATOR_ROOT}/include/verilated_fst_c.cpp)
else()
  set(trace_writer ${VERILATOR_ROOT}/include/verilated_vcd_c.cpp)
endif()
# The runtime verilate() adds to each target it is given (Verilator 5.006; another version may add
# other files: look in a target's generated .cmake).
set(KVCIM_VERILATED_RUNTIME ${VERILATOR_ROOT}/include/verilated.cpp
    ${VERILATOR_ROOT}/include/verilated_threads.cpp ${trace_writer})
add_library(kvcim_rtl_shared OBJECT ${KVCIM_RTL_SHARED_SOURCES} ${KVCIM_VERILATED_RUNTIME})
target_include_directories(kvcim_rtl_shared PRIVATE ${VERILATOR_ROOT}/include ${VERILATOR_ROOT}/include/vltstd)
target_link_libraries(kvcim_rtl_shared PUBLIC kvcim_cmodel)  # (for its include directories)
# as verilate() defines them for its targets' sources
target_compile_definitions(kvcim_rtl_shared PRIVATE VM_COVERAGE=0 VM_SC=0 VM_TRACE=1
                           VM_TRACE_VCD=$<STREQUAL:${KVCIM_RTL_TRACE},vcd>
                           VM_TRACE_FST=$<STREQUAL:${KVCIM_RTL_TRACE},fst>)
set_target_properties(kvcim_rtl_shared PROPERTIES UNITY_BUILD OFF)
# (Verilator's runtime is not written for -Wextra; the harness's sources are)
set_source_files_properties(${KVCIM_VERILATED_RUNTIME} TARGET_DIRECTORY kvcim_rtl_shared PROPERTIES COMPILE_OPTIONS
                            "-Wno-unused-parameter;-Wno-sign-compare;-Wno-missing-field-initializers;-Wno-maybe-uninitialized")

# Called after verilate(target): the runtime sources verilate() added leave the target and the
# shared objects come in (fails the configure step unless verilate() added every one of them); then
# the model's generated C++ is compiled in unity batches (below). SLOW_OPTIONS: compile options for
# the batches of the code Verilator marks slow (__Slow.cpp: construction and the initial settle).
function(kvcim_rtl_use_shared target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SLOW_OPTIONS")
  get_target_property(sources ${target} SOURCES)
  list(LENGTH sources n_before)
  list(REMOVE_ITEM sources ${KVCIM_VERILATED_RUNTIME})
  list(LENGTH sources n_after)
  list(LENGTH KVCIM_VERILATED_RUNTIME n_runtime)
  math(EXPR n_removed "${n_before} - ${n_after}")
  if(NOT n_removed EQUAL n_runtime)
    message(FATAL_ERROR "kvcim: ${target}: expected verilate() to add ${KVCIM_VERILATED_RUNTIME}; "
                        "found ${n_removed} of these ${n_runtime} files")
  endif()
  set_property(TARGET ${target} PROPERTY SOURCES ${sources} $<TARGET_OBJECTS:kvcim_rtl_shared>)
  kvcim_rtl_unity(${target} "${arg_SLOW_OPTIONS}")
endfunction()

# Verilator splits a model into many .cpp files that each parse verilated.h and the model's headers
# again (~1 s of CPU per file however small: 12 files of the hd16 model took 15 s, one unity file 3).
# Here they are compiled in batches of up to ~3 MB of source, each an #include of its files in name
# order, which compiles for all nine models (CMake's own unity batches keep verilate()'s order, in
# which Verilator's C++ specialises templates after their use, and leave out any source with
# options of its own, as the gate-level model's slow half has). The generated files stay
# in the target, header-only, so that verilate()'s build-time command still regenerates them and a
# batch recompiles when one of its files changes (its depfile names them). A new Verilator file list
# reconfigures the build, as verilate() arranges, and the batches follow.
set(KVCIM_RTL_UNITY_BYTES 3000000)
function(kvcim_rtl_unity target slow_options)
  get_target_property(sources ${target} SOURCES)
  set(generated "")
  foreach(s ${sources})
    if(s MATCHES "/CMakeFiles/${target}\\.dir/[^/]+\\.dir/[^/]+\\.cpp$")
      list(APPEND generated ${s})
    endif()
  endforeach()
  if(NOT generated)
    message(FATAL_ERROR "kvcim: ${target}: found no Verilated C++ among its sources")
  endif()
  # A Verilator run that failed in the build leaves files of the model's list missing (its rule's
  # output is deleted), and verilate() runs Verilator at configure time only when its arguments
  # change: the list would name missing files until one was deleted by hand. Such a model is
  # Verilated again here with the command verilate() recorded; if that fails, the configure step
  # stops with Verilator's message, and the next one tries again.
  set(missing "")
  foreach(f ${generated})
    if(NOT EXISTS ${f})
      list(APPEND missing ${f})
    endif()
  endforeach()
  if(missing)
    list(GET generated 0 first)
    get_filename_component(vdir ${first} DIRECTORY)
    get_filename_component(prefix ${vdir} NAME_WE)  # <Mdir>/<prefix>.dir
    file(READ ${vdir}/verilator_args.txt command)
    message(STATUS "kvcim: ${target}: files of a failed Verilator run missing: Verilating it again")
    execute_process(COMMAND ${command} WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "kvcim: ${target}: Verilator failed (exit ${rc}):\n${out}")
    endif()
    # The sources may have changed the list: verilate()'s copy follows, and, being a file this
    # configure step read, makes the next build configure again with the new list.
    execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${vdir}/${prefix}.cmake ${vdir}/${prefix}_copy.cmake)
    set(present "")
    foreach(f ${generated})
      if(EXISTS ${f})
        list(APPEND present ${f})
      endif()
    endforeach()
    set(generated ${present})
  endif()
  list(SORT generated)
  set_source_files_properties(${generated} TARGET_DIRECTORY ${target} PROPERTIES HEADER_FILE_ONLY ON)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/${target}.dir/unity)
  file(MAKE_DIRECTORY ${dir})
  set(batches "")
  set(kinds all)  # slow and fast code apart only when they compile differently
  if(slow_options)
    set(kinds slow fast)
  endif()
  foreach(kind ${kinds})
    set(files ${generated})
    if(kind STREQUAL "slow")
      list(FILTER files INCLUDE REGEX "__Slow\\.cpp$")
    elseif(kind STREQUAL "fast")
      list(FILTER files EXCLUDE REGEX "__Slow\\.cpp$")
    endif()
    set(n 0)
    set(bytes 0)
    set(text "")
    foreach(f ${files} END)  # END: write the last batch
      if(text AND (f STREQUAL "END" OR bytes GREATER_EQUAL KVCIM_RTL_UNITY_BYTES))
        set(batch ${dir}/${kind}_${n}.cpp)
        file(CONFIGURE OUTPUT ${batch} CONTENT "${text}" @ONLY)
        list(APPEND batches ${batch})
        if(kind STREQUAL "slow")
          set_source_files_properties(${batch} TARGET_DIRECTORY ${target} PROPERTIES COMPILE_OPTIONS "${slow_options}")
        endif()
        math(EXPR n "${n} + 1")
        set(bytes 0)
        set(text "")
      endif()
      if(NOT f STREQUAL "END")
        file(SIZE ${f} size)
        string(APPEND text "#include \"${f}\"\n")
        math(EXPR bytes "${bytes} + ${size}")
      endif()
    endforeach()
  endforeach()
  target_sources(${target} PRIVATE ${batches})
  # The model's own batches, never CMake's unity build (see above)
  set_target_properties(${target} PROPERTIES UNITY_BUILD OFF)
endfunction()

add_library(kvcim_rtl_tile STATIC ${KVCIM_RTL_TILE_SOURCES})
target_link_libraries(kvcim_rtl_tile PUBLIC kvcim_cmodel Threads::Threads)
target_compile_definitions(kvcim_rtl_tile PUBLIC KVCIM_HAVE_RTL=1 ${KVCIM_RTL_TRACE_DEFINITION})
# Verilator -O3, no X randomisation, assertions on; tracing compiled in but only switched on by a
# trace path.
verilate(kvcim_rtl_tile
  PREFIX Vcim_attention_tile
  TOP_MODULE cim_attention_tile
  ${KVCIM_RTL_TRACE_ARG}
  SOURCES ${KVCIM_RTL_SOURCES} ${KVCIM_RTL_ASSERTIONS}
  VERILATOR_ARGS -O3 -Wall --assert --x-assign fast --x-initial fast)
kvcim_rtl_use_shared(kvcim_rtl_tile)
# Verilator's generated C++ is not written for -Wextra.
target_compile_options(kvcim_rtl_tile PRIVATE -Wno-unused-parameter -Wno-unused-variable
                       -Wno-unused-but-set-variable -Wno-sign-compare -Wno-missing-field-initializers
                       -Wno-maybe-uninitialized)

# How every configuration other than the linked default is Verilated and linked as a module: the
# table's (testbench/tests/rtl_configs/rtl_configs.cmake) and the on-demand builds (rtl_recipe.cmake).
# -fno-reloop: Verilator 5.006's reloop pass declares its loop variable (__Vilp) in another function
# than the one sampling a wide $past (the assertions at 48 x 8-bit outputs): C++ that does not
# compile. Without it the copies stay unrolled. The -G overrides of the geometry come after these.
set(KVCIM_RTL_CONFIG_VERILATOR_ARGS -O3 -Wall --assert --x-assign fast --x-initial fast -fno-reloop)
# A module exports kvcim_rtl_module_v1 only, its harness and model hidden (--exclude-libs), so that
# it never meets the linked default's symbols.
set(KVCIM_RTL_MODULE_LINK_OPTIONS -Wl,--exclude-libs,ALL -Wl,-Bsymbolic -Wl,--no-undefined)
include(rtl/rtl_recipe.cmake)

# The RTL must stay lint-clean under -Wall, as a whole and the macro on its own at the geometries
# of both tile macros.
add_test(NAME rtl.lint_tile
         COMMAND ${VERILATOR_BIN} --lint-only -Wall --assert ${KVCIM_RTL_SOURCES} ${KVCIM_RTL_ASSERTIONS}
                 --top-module cim_attention_tile)
add_test(NAME rtl.lint_k_macro
         COMMAND ${VERILATOR_BIN} --lint-only -Wall ${CMAKE_CURRENT_SOURCE_DIR}/rtl/cim_macro.sv
                 --top-module cim_macro -GROWS=8 -GN_W=64 -GIN_BITS=8)
add_test(NAME rtl.lint_v_macro
         COMMAND ${VERILATOR_BIN} --lint-only -Wall ${CMAKE_CURRENT_SOURCE_DIR}/rtl/cim_macro.sv
                 --top-module cim_macro -GROWS=64 -GN_W=8 -GIN_BITS=12 -GIN_SIGNED=0)
add_test(NAME rtl.lint_softmax
         COMMAND ${VERILATOR_BIN} --lint-only -Wall ${KVCIM_TILE_PKG}
                 ${CMAKE_CURRENT_SOURCE_DIR}/rtl/softmax_unit.sv --top-module softmax_unit)
