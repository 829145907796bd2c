# Every benchmarks/*.cpp is a Google Benchmark program. Each also runs briefly under CTest as a
# smoke test (timings are never asserted there).
file(GLOB KVCIM_BENCH_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/benchmarks/*.cpp)
foreach(src ${KVCIM_BENCH_SOURCES})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_link_libraries(${name} PRIVATE kvcim_runtime benchmark::benchmark)
  kvcim_source_dir(${name})
  if(KVCIM_WITH_RTL)
    target_link_libraries(${name} PRIVATE kvcim_rtl_harness)
    target_compile_definitions(${name} PRIVATE KVCIM_HAVE_RTL=1)
  endif()
  add_test(NAME benchmark.${name}
           COMMAND ${name} --benchmark_min_time=0.01 --benchmark_filter=${KVCIM_BENCH_SMOKE_FILTER})
  # Benchmarks read KVCIM_BENCH_SMOKE to keep to small shapes in this smoke run.
  set_tests_properties(benchmark.${name} PROPERTIES ENVIRONMENT KVCIM_BENCH_SMOKE=1)
endforeach()
