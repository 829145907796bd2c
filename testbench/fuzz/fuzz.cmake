# Reliability: fuzz targets, their replay in ordinary builds, and the CTest hooks that run the
# sanitizer build and the bounded fuzzing as part of `make test-deep` (CTest label `deep`; CI runs
# it after `make test`; see docs/reliability.md).
#
# Three ways this file is used:
#  - ordinary build (any compiler): each fuzz target is linked with a small main() that replays
#    the committed corpus (seeds and crash reproducers): CTest fuzz_replay.<target>.
#    The sanitizer build and the fuzzers run from scripts in a nested build directory
#    (<build>/asan, clang), registered as CTest tests reliability.sanitize.* and
#    reliability.fuzz.<target> when clang++ is available.
#  - -DKVCIM_FUZZ=ON (clang; scripts/sanitize.sh sets it): the targets are libFuzzer programs
#    fuzz_<target>.
#  - -DKVCIM_SANITIZE=ON without KVCIM_FUZZ: replay programs only, nothing nested.
option(KVCIM_FUZZ "Build the libFuzzer targets (clang, with -fsanitize=fuzzer-no-link code)" OFF)
option(KVCIM_WITH_SANITIZER_TESTS
       "Register the nested ASan/UBSan build, its test run and bounded fuzzing as CTest tests" ON)
set(KVCIM_FUZZ_SECONDS 10 CACHE STRING "Seconds each fuzz target runs in CTest")

set(KVCIM_FUZZ_DIR ${CMAKE_CURRENT_SOURCE_DIR}/testbench/fuzz)
# target name -> the library it needs (cmodel readers; the spec parser lives in the mapper)
# hw_spec: the spec parser; safetensors, hf_config, hf_tokenizer: Hugging Face checkpoints (the
# safetensors header, config.json, tokenizer.json); macro_file: kvcim macro's reader
# (mapper/macro_pricing.cpp); macro_model: its constants (configs/macro_model.yaml); policy: the
# policy's key table, as text and as a mapping;
# rtl_recipe: the recipe of on-demand RTL tile builds (rtl/sim/rtl_build_steps.cpp, kvcim_rtl_loader)
set(KVCIM_FUZZ_TARGETS checkpoint tokenizer encode tech_table npy hw_spec safetensors hf_config
    hf_tokenizer macro_file machine_file sram_nodes macro_model policy rtl_recipe)

foreach(t ${KVCIM_FUZZ_TARGETS})
  if(KVCIM_FUZZ)
    add_executable(fuzz_${t} ${KVCIM_FUZZ_DIR}/fuzz_${t}.cpp)
    target_link_options(fuzz_${t} PRIVATE -fsanitize=fuzzer)
  else()
    add_executable(fuzz_${t} ${KVCIM_FUZZ_DIR}/fuzz_${t}.cpp ${KVCIM_FUZZ_DIR}/replay_main.cpp)
    add_test(NAME fuzz_replay.${t} COMMAND fuzz_${t} ${KVCIM_FUZZ_DIR}/corpus/${t})
  endif()
  target_include_directories(fuzz_${t} PRIVATE ${KVCIM_FUZZ_DIR})
  target_link_libraries(fuzz_${t} PRIVATE kvcim_mapper kvcim_rtl_loader)
endforeach()

# RTL outputs independent of uninitialised state (Verilator X randomisation, several seeds).
if(KVCIM_WITH_RTL)
  include(${CMAKE_CURRENT_SOURCE_DIR}/testbench/tests/reliability_rtl/reliability_rtl.cmake)
endif()

# The nested sanitizer build and the fuzzers: only from an ordinary top-level build, so that the
# nested build does not nest again.
if(KVCIM_WITH_SANITIZER_TESTS AND NOT KVCIM_FUZZ AND NOT KVCIM_SANITIZE)
  find_program(KVCIM_CLANGXX NAMES clang++ clang++-14)
  if(NOT KVCIM_CLANGXX)
    message(STATUS "kvcim: clang++ not found; the ASan/UBSan and fuzzing tests are not registered")
  else()
    set(asan_dir ${CMAKE_CURRENT_BINARY_DIR}/asan)
    set(sanitize ${CMAKE_CURRENT_SOURCE_DIR}/scripts/sanitize.sh)
    add_test(NAME reliability.sanitize.build COMMAND bash ${sanitize} ${asan_dir} build)
    # The build uses both cores itself; ctest -j2 runs nothing else beside it.
    set_tests_properties(reliability.sanitize.build PROPERTIES
      FIXTURES_SETUP kvcim_asan PROCESSORS 2 TIMEOUT 1500 LABELS deep)
    add_test(NAME reliability.sanitize.tests COMMAND bash ${sanitize} ${asan_dir} test)
    set_tests_properties(reliability.sanitize.tests PROPERTIES
      FIXTURES_REQUIRED kvcim_asan PROCESSORS 2 TIMEOUT 1200 LABELS deep)
    foreach(t ${KVCIM_FUZZ_TARGETS})
      add_test(NAME reliability.fuzz.${t}
               COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/fuzz.sh ${asan_dir} ${t} ${KVCIM_FUZZ_SECONDS})
      set_tests_properties(reliability.fuzz.${t} PROPERTIES
        FIXTURES_REQUIRED kvcim_asan TIMEOUT 300 LABELS deep)
    endforeach()
  endif()
endif()
