# Every program of KVCIM_BENCH_SOURCES (sources.cmake) is a Google Benchmark program. Each also runs briefly under CTest as a
# smoke test (timings are never asserted there).
foreach(src ${KVCIM_BENCH_SOURCES})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_link_libraries(${name} PRIVATE kvcim_runtime benchmark::benchmark)
  kvcim_source_dir(${name})
  if(KVCIM_WITH_RTL)
    target_link_libraries(${name} PRIVATE kvcim_rtl_tile)
    target_compile_definitions(${name} PRIVATE KVCIM_HAVE_RTL=1)
  endif()
  add_test(NAME benchmark.${name}
           COMMAND ${name} --benchmark_min_time=0.01 --benchmark_filter=${KVCIM_BENCH_SMOKE_FILTER})
  # Benchmarks read KVCIM_BENCH_SMOKE to keep to small shapes in this smoke run.
  set_tests_properties(benchmark.${name} PROPERTIES ENVIRONMENT KVCIM_BENCH_SMOKE=1 TIMEOUT 300)
endforeach()

# benchmarks/side_by_side.py --smoke (< 5 s): kvcim and llama2.c's run.c print the same greedy
# text on a small random checkpoint. Only where llama2.c's sources sit next to the checkout (see
# docs/performance.md); the timed side-by-side run is never a test.
set(KVCIM_LLAMA2C_DIR "${CMAKE_CURRENT_SOURCE_DIR}/../shared/peers/llama2.c" CACHE PATH
    "llama2.c sources (run.c) for the side-by-side smoke test")
if(EXISTS "${KVCIM_LLAMA2C_DIR}/run.c" AND Python3_EXECUTABLE)
  add_test(NAME benchmark.side_by_side_smoke
           COMMAND sh -c "cc -O2 -o side_by_side_run '${KVCIM_LLAMA2C_DIR}/run.c' -lm && '${Python3_EXECUTABLE}' '${CMAKE_CURRENT_SOURCE_DIR}/benchmarks/side_by_side.py' --run side_by_side_run --kvcim '$<TARGET_FILE:kvcim>' --smoke"
           WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
endif()
