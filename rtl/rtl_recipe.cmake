# The recipe of an on-demand RTL tile build (rtl/sim/rtl_build.cpp): everything the program needs
# to Verilate the tile at parameters the table lacks and build it into a module exactly as
# rtl_configs.cmake builds the table's, written into the build folder as kvcim-rtl-recipe.json and
# found beside the program at run time (no path is compiled into the product). Included from
# rtl/rtl.cmake once kvcim_rtl_shared and the Verilator arguments are known. Every list comes from
# the lists the build itself uses (sources.cmake, KVCIM_RTL_SOURCES, KVCIM_RTL_CONFIG_VERILATOR_ARGS),
# so that a source added there is in the recipe too. Paths are written as JSON strings unescaped:
# the build folder and sources must not hold '"' or '\'.
execute_process(COMMAND ${VERILATOR_BIN} --version OUTPUT_VARIABLE KVCIM_VERILATOR_VERSION
                OUTPUT_STRIP_TRAILING_WHITESPACE)
set(recipe_tile_sources ${KVCIM_RTL_TILE_SOURCES})
list(TRANSFORM recipe_tile_sources PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/)
set(recipe_module_sources ${KVCIM_RTL_MODULE_SOURCES})
list(TRANSFORM recipe_module_sources PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/)
if(KVCIM_RTL_TRACE STREQUAL "fst")
  set(recipe_trace --trace-fst)
else()
  set(recipe_trace --trace)
endif()
# compile options of the table's modules (rtl_configs.cmake): -O1, hidden symbols, the model's
# warnings off (Verilator's C++ is not written for -Wextra)
set(recipe_cxx_flags -std=c++20 -fPIC -O1 -DNDEBUG -fvisibility=hidden -fvisibility-inlines-hidden
    -Wall -Wextra -Wno-unused-parameter -Wno-unused-variable -Wno-unused-but-set-variable
    -Wno-sign-compare -Wno-missing-field-initializers -Wno-maybe-uninitialized)
if(KVCIM_NATIVE)
  list(APPEND recipe_cxx_flags -march=native)
endif()
# as verilate() and kvcim_rtl_shared define them
set(recipe_defines KVCIM_HAVE_RTL=1 KVCIM_RTL_TRACE_FST=$<STREQUAL:${KVCIM_RTL_TRACE},fst>
    KVCIM_VERSION=\\\"${PROJECT_VERSION}\\\" VM_COVERAGE=0 VM_SC=0 VM_TRACE=1
    VM_TRACE_VCD=$<STREQUAL:${KVCIM_RTL_TRACE},vcd> VM_TRACE_FST=$<STREQUAL:${KVCIM_RTL_TRACE},fst>)
set(recipe_includes ${VERILATOR_ROOT}/include ${VERILATOR_ROOT}/include/vltstd
    $<TARGET_PROPERTY:kvcim_cmodel,INTERFACE_INCLUDE_DIRECTORIES>
    $<TARGET_PROPERTY:Eigen3::Eigen,INTERFACE_INCLUDE_DIRECTORIES>
    $<TARGET_PROPERTY:nlohmann_json::nlohmann_json,INTERFACE_INCLUDE_DIRECTORIES>
    $<TARGET_PROPERTY:yaml-cpp,INTERFACE_INCLUDE_DIRECTORIES>)
# archived with the model and harness (hidden by --exclude-libs, as the table's are); then linked
set(recipe_archive $<TARGET_OBJECTS:kvcim_rtl_shared>)
set(recipe_libs $<TARGET_FILE:kvcim_cmodel> $<TARGET_FILE:kvcim_common> $<TARGET_LINKER_FILE:yaml-cpp> ${VERILATOR_MT_CFLAGS})
# hashed into the cache key besides the sources: the headers (*.hpp, *.h) of these folders, which
# hold every kvcim header the harness and module include (the loader's own sources are not hashed:
# editing the builder does not invalidate the cache)
set(recipe_hash_dirs ${CMAKE_CURRENT_SOURCE_DIR}/include ${CMAKE_CURRENT_SOURCE_DIR}/rtl/sim)

function(kvcim_json_array out)  # a CMake list (generator expressions allowed) as a JSON array
  set(${out} "[\"$<JOIN:${ARGN},\"$<COMMA> \">\"]" PARENT_SCOPE)
endfunction()
kvcim_json_array(j_sv ${KVCIM_RTL_SOURCES} ${KVCIM_RTL_ASSERTIONS})
kvcim_json_array(j_vargs ${recipe_trace} ${KVCIM_RTL_CONFIG_VERILATOR_ARGS})
kvcim_json_array(j_tile ${recipe_tile_sources})
kvcim_json_array(j_module ${recipe_module_sources})
kvcim_json_array(j_flags ${recipe_cxx_flags})
kvcim_json_array(j_defines ${recipe_defines})
kvcim_json_array(j_includes ${recipe_includes})
kvcim_json_array(j_archive ${recipe_archive})
kvcim_json_array(j_libs ${recipe_libs})
kvcim_json_array(j_hash ${recipe_hash_dirs})
string(REPLACE "," "$<COMMA>" recipe_link "-shared;${KVCIM_RTL_MODULE_LINK_OPTIONS}")  # (-Wl,a,b)
kvcim_json_array(j_link ${recipe_link})
file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/kvcim-rtl-recipe.json CONTENT "{
 \"verilator\": \"${VERILATOR_BIN}\",
 \"verilator_version\": \"${KVCIM_VERILATOR_VERSION}\",
 \"cxx\": \"${CMAKE_CXX_COMPILER}\",
 \"ar\": \"${CMAKE_AR}\",
 \"sv_sources\": ${j_sv},
 \"verilator_args\": ${j_vargs},
 \"tile_sources\": ${j_tile},
 \"module_sources\": ${j_module},
 \"cxx_flags\": ${j_flags},
 \"defines\": ${j_defines},
 \"include_dirs\": ${j_includes},
 \"archive\": ${j_archive},
 \"libs\": ${j_libs},
 \"link_flags\": ${j_link},
 \"hash_dirs\": ${j_hash}
}
")
