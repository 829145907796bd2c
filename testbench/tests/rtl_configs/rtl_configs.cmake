# The tile at other parameters, as ggml's test-backend-ops checks every backend over a table of
# parameter sets: each configuration below is Verilated once with -G overrides of the tile's top
# parameters (assertions on), the harness compiled against it at the same TileParams
# (KVCIM_RTL_TILE_CONFIG), and test_rtl_config co-simulates it against the C model bit for bit
# (results and every event counter) over a table of token counts and back-pressures. One library
# and one executable per configuration: the harness's symbols are the model's. Included from
# testbench/tests.cmake when KVCIM_WITH_RTL=ON. EXP_FRAC stays the package's (its exponent table
# is a package constant).
# With the default build (head_dim 8, 64 tokens, 8-bit KV, 12-bit probabilities) the table holds
# head_dim 8, 16, 32, 48 (the 15M model's) and 64 (the 110M model's), tokens 8, 16, 32, 64 and 128,
# KV bits 2, 4, 6 and 8.
#   name : head_dim : tokens : kv_bits : prob_bits
set(KVCIM_RTL_CONFIGS
    "hd16_t16_kv4_p10:16:16:4:10"
    "hd32_t8_kv6_p16:32:8:6:16"
    "hd8_t32_kv2_p8:8:32:2:8"
    "hd48_t128_kv8_p16:48:128:8:16"
    "hd64_t64_kv4_p12:64:64:4:12")
foreach(cfg ${KVCIM_RTL_CONFIGS})
  string(REPLACE ":" ";" fields ${cfg})
  list(GET fields 0 name)
  list(GET fields 1 hd)
  list(GET fields 2 tokens)
  list(GET fields 3 kv)
  list(GET fields 4 prob)
  set(lib kvcim_rtl_${name})
  add_library(${lib} STATIC ${KVCIM_RTL_TILE_SOURCES})
  target_link_libraries(${lib} PUBLIC kvcim_cmodel Threads::Threads)
  target_compile_definitions(${lib} PUBLIC KVCIM_HAVE_RTL=1 ${KVCIM_RTL_TRACE_DEFINITION}
                             "KVCIM_RTL_TILE_CONFIG=${hd},${tokens},${kv},${prob}")
  verilate(${lib}
    PREFIX Vcim_attention_tile
    TOP_MODULE cim_attention_tile
    ${KVCIM_RTL_TRACE_ARG}
    SOURCES ${KVCIM_RTL_SOURCES} ${KVCIM_RTL_ASSERTIONS}
    # (the on-demand builds' arguments too: rtl/rtl.cmake)
    VERILATOR_ARGS ${KVCIM_RTL_CONFIG_VERILATOR_ARGS}
                   -GHEAD_DIM=${hd} -GTOKENS=${tokens} -GKV_BITS=${kv} -GPROB_BITS=${prob})
  kvcim_rtl_use_shared(${lib})
  # -O1: each model runs a few hundred short problems; compile time matters more than its speed.
  target_compile_options(${lib} PRIVATE -O1 -Wno-unused-parameter -Wno-unused-variable
                         -Wno-unused-but-set-variable -Wno-sign-compare -Wno-missing-field-initializers
                         -Wno-maybe-uninitialized)
  add_executable(test_rtl_${name} ${KVCIM_RTL_CONFIG_TEST_SOURCES})
  target_include_directories(test_rtl_${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/testbench/tests)
  target_link_libraries(test_rtl_${name} PRIVATE ${lib} GTest::gtest_main)
  target_compile_definitions(test_rtl_${name} PRIVATE
                             "KVCIM_RTL_EXPECTED=${hd},${tokens},${kv},${prob}")
  gtest_discover_tests(test_rtl_${name} TEST_PREFIX "rtl_config.${name}." DISCOVERY_TIMEOUT 60
                       PROPERTIES TIMEOUT 300)
  # The configuration for `kvcim run --attention-backend rtl` and kvcim.run(): a module beside the
  # program (include/kvcim/rtl/rtl_tiles.hpp) exporting kvcim_rtl_module_v1 only, its harness and model
  # hidden (--exclude-libs), so that it never meets the linked default's symbols. Not a
  # dependency of the kvcim target: `make demo` stays the default configuration's build.
  set(module kvcim_rtl_tile_${name})
  add_library(${module} MODULE ${KVCIM_RTL_MODULE_SOURCES})
  target_link_libraries(${module} PRIVATE ${lib})
  set_target_properties(${module} PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
                        CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  target_link_options(${module} PRIVATE ${KVCIM_RTL_MODULE_LINK_OPTIONS})
  list(APPEND KVCIM_RTL_MODULES ${module})
endforeach()
# The runtime's RTL tests run specs of these configurations through the modules.
if(TARGET test_runtime_rtl)
  add_dependencies(test_runtime_rtl ${KVCIM_RTL_MODULES})
endif()
# test_rtl runs `kvcim cosim`, whose default covers every configuration through the modules.
if(TARGET test_rtl)
  add_dependencies(test_rtl ${KVCIM_RTL_MODULES})
endif()
