# Every source, test and script of the build, listed by hand: a file joins a target by being named
# here, never by lying in a folder. kvcim_check_sources_listed() (below) fails the configure step
# naming any .cpp, .py test or .sh test on disk that no list holds, so a new file cannot be left
# out silently either. Paths are relative to the source directory.

# kvcim_common: generic utilities every part may use (files, text, .npy arrays, the data folder)
set(KVCIM_COMMON_SOURCES
    common/data_dir.cpp
    common/io.cpp
    common/npy.cpp
    common/text.cpp
)
# kvcim_cmodel: the golden model, the CIM C models, the energy model
set(KVCIM_CMODEL_SOURCES
    cmodel/cim/attention_tile.cpp
    cmodel/cim/attention_tile_analog.cpp
    cmodel/cim/attention_tile_combine.cpp
    cmodel/cim/macro.cpp
    cmodel/cim/macro_batch.cpp
    cmodel/cim/macro_fast.cpp
    cmodel/cim/macro_fixed_subsets.cpp
    cmodel/cim/macro_kernels.cpp
    cmodel/cim/macro_kind.cpp
    cmodel/cim/macro_merged.cpp
    cmodel/cim/macro_reference.cpp
    cmodel/cim/macro_spec.cpp
    cmodel/cim/softmax_fixed.cpp
    cmodel/cim/softmax_table.cpp
    cmodel/energy/baseline.cpp
    cmodel/energy/cim_charges.cpp
    cmodel/energy/config_reader.cpp
    cmodel/energy/events.cpp
    cmodel/energy/ledger.cpp
    cmodel/energy/scaling.cpp
    cmodel/energy/sram_nodes.cpp
    cmodel/energy/tech.cpp
    cmodel/energy/workload.cpp
    cmodel/macro_model/event_prices.cpp
    cmodel/macro_model/macro_components.cpp
    cmodel/macro_model/macro_desc.cpp
    cmodel/model/checkpoint.cpp
    cmodel/model/config.cpp
    cmodel/model/gemv.cpp
    cmodel/model/hf_checkpoint.cpp
    cmodel/model/hf_pipeline.cpp
    cmodel/model/hf_tokenizer.cpp
    cmodel/model/int8_backend.cpp
    cmodel/model/kv_cache.cpp
    cmodel/model/model_files.cpp
    cmodel/model/safetensors.cpp
    cmodel/model/sampler.cpp
    cmodel/model/token_regex.cpp
    cmodel/model/tokenizer.cpp
    cmodel/model/transformer.cpp
    cmodel/model/unicode.cpp
    cmodel/model/unicode_tables.cpp
    cmodel/model/weights.cpp
    cmodel/quant/int8_gemv.cpp
    cmodel/quant/quant.cpp
)
# kvcim_mapper
set(KVCIM_MAPPER_SOURCES
    mapper/analysis.cpp
    mapper/batch.cpp
    mapper/chip.cpp
    mapper/compare.cpp
    mapper/dies.cpp
    mapper/explore.cpp
    mapper/hardware.cpp
    mapper/kv.cpp
    mapper/macro_map.cpp
    mapper/machine.cpp
    mapper/machine_step.cpp
    mapper/machine_validation.cpp
    mapper/macro_pricing.cpp
    mapper/map_job.cpp
    mapper/placement.cpp
    mapper/policy.cpp
    mapper/report.cpp
    mapper/shape.cpp
    mapper/sizing.cpp
    mapper/weights.cpp
)
# kvcim_runtime
set(KVCIM_RUNTIME_SOURCES
    runtime/accuracy.cpp
    runtime/bootstrap.cpp
    runtime/cim_attention.cpp
    runtime/cim_linear.cpp
    runtime/cim_linear_batch.cpp
    runtime/eval_corpus.cpp
    runtime/evaluation.cpp
    runtime/explain.cpp
    runtime/hardware.cpp
    runtime/html_report.cpp
    runtime/report.cpp
    runtime/run_job.cpp
    runtime/run_summary.cpp
    runtime/session.cpp
    runtime/session_backend.cpp
)
# the kvcim command
set(KVCIM_CLI_SOURCES
    runtime/cli/cmd_convert.cpp
    runtime/cli/cmd_cosim.cpp
    runtime/cli/cmd_explain.cpp
    runtime/cli/cmd_baseline.cpp
    runtime/cli/cmd_compare.cpp
    runtime/cli/cmd_macro.cpp
    runtime/cli/cmd_map.cpp
    runtime/cli/cmd_model.cpp
    runtime/cli/cmd_rtl.cpp
    runtime/cli/cmd_run.cpp
    runtime/cli/error_flags.cpp
    runtime/cli/main.cpp
)
# the Verilator harness: rtl_tile.cpp compiled against each Verilated model (kvcim_rtl_tile and
# each configuration of the RTL table), the model-independent rest once for all of them
# (kvcim_rtl_shared, rtl/rtl.cmake)
set(KVCIM_RTL_TILE_SOURCES
    rtl/sim/port_stress.cpp
    rtl/sim/rtl_tile.cpp
)
set(KVCIM_RTL_SHARED_SOURCES
    rtl/sim/corner_problems.cpp
    rtl/sim/cosim_job.cpp
    rtl/sim/problems.cpp
)
# kvcim_rtl_loader: finds and loads the RTL tile modules, and builds the ones the table lacks into
# a cache by running Verilator and the compiler (no Verilator linked; the runtime links it)
set(KVCIM_RTL_LOADER_SOURCES
    rtl/sim/rtl_build.cpp
    rtl/sim/rtl_build_steps.cpp
    rtl/sim/rtl_tiles.cpp
)
# a configuration of the table as a loadable module (testbench/tests/rtl_configs/rtl_configs.cmake)
set(KVCIM_RTL_MODULE_SOURCES
    rtl/sim/rtl_module.cpp
)
# the Python module kvcim._core
set(KVCIM_PY_SOURCES
    python/src/cim.cpp
    python/src/errors.cpp
    python/src/machine.cpp
    python/src/macro.cpp
    python/src/mapper.cpp
    python/src/model.cpp
    python/src/module.cpp
    python/src/runtime.cpp
    python/src/sram_nodes.cpp
)
# pytest files, one CTest test each
set(KVCIM_PY_TESTS
    python/tests/test_baseline.py
    python/tests/test_constant_fields.py
    python/tests/test_cim.py
    python/tests/test_dask.py
    python/tests/test_defaults.py
    python/tests/test_examples.py
    python/tests/test_kv_token_study.py
    python/tests/test_merged_adc_study.py
    python/tests/test_experiment.py
    python/tests/test_explain_plot.py
    python/tests/test_hf.py
    python/tests/test_html_report.py
    python/tests/test_machine_fields.py
    python/tests/test_mapper.py
    python/tests/test_model.py
    python/tests/test_plot.py
    python/tests/test_run.py
    python/tests/test_stub.py
    python/tests/test_spec_fields.py
    python/tests/test_sram_node_fields.py
    python/tests/test_sweep.py
    python/tests/test_vocabulary.py
)
# Google Benchmark programs, one each
set(KVCIM_BENCH_SOURCES
    benchmarks/bench_attention_tile.cpp
    benchmarks/bench_decode.cpp
    benchmarks/bench_eval.cpp
    benchmarks/bench_macro.cpp
    benchmarks/bench_mapper.cpp
    benchmarks/bench_memory.cpp
    benchmarks/bench_rtl.cpp
)
# CLI contract tests, one CTest test each
set(KVCIM_CLI_TESTS
    testbench/cli/baseline_command.sh
    testbench/cli/compare_command.sh
    testbench/cli/dies_command.sh
    testbench/cli/explain.sh
    testbench/cli/hf_architectures.sh
    testbench/cli/hf_checkpoints.sh
    testbench/cli/html_report.sh
    testbench/cli/macro_command.sh
    testbench/cli/map_command.sh
    testbench/cli/model_commands.sh
    testbench/cli/models_checksums.sh
    testbench/cli/reliability_atomic.sh
    testbench/cli/reliability_determinism.sh
    testbench/cli/reliability_inputs.sh
    testbench/cli/rtl_build.sh
    testbench/cli/run_accuracy.sh
)
# CLI tests too slow for `make test`: CTest label deep (`make test-deep`); those named rtl_* need
# the Verilated tile
set(KVCIM_CLI_DEEP_TESTS
    testbench/cli/rtl_default_run.sh
)
# GoogleTest suites: testbench/tests/<suite>/ is test_<suite>; names with "rtl" need the RTL
set(KVCIM_TEST_SUITES
    attention_tile
    cim_macro
    energy
    explain
    hf
    mapper
    model
    perf
    quant
    reliability
    rtl
    runtime
    runtime_rtl
)
set(KVCIM_TEST_attention_tile_SOURCES
    testbench/tests/attention_tile/test_softmax_fixed.cpp
    testbench/tests/attention_tile/test_tile_accuracy.cpp
    testbench/tests/attention_tile/test_tile_analog.cpp
    testbench/tests/attention_tile/test_tile_cmodel.cpp
)
set(KVCIM_TEST_cim_macro_SOURCES
    testbench/tests/cim_macro/test_macro_adc.cpp
    testbench/tests/cim_macro/test_macro_events.cpp
    testbench/tests/cim_macro/test_macro_exact.cpp
    testbench/tests/cim_macro/test_macro_generator.cpp
    testbench/tests/cim_macro/test_macro_merged.cpp
    testbench/tests/cim_macro/test_macro_noise.cpp
    testbench/tests/cim_macro/test_macro_noise_models.cpp
    testbench/tests/cim_macro/test_macro_paths.cpp
    testbench/tests/cim_macro/test_macro_validate.cpp
)
set(KVCIM_TEST_energy_SOURCES
    testbench/tests/energy/test_baseline.cpp
    testbench/tests/energy/test_cim_charges.cpp
    testbench/tests/energy/test_config_reader.cpp
    testbench/tests/energy/test_event_fields.cpp
    testbench/tests/energy/test_ledger.cpp
    testbench/tests/energy/test_scaling.cpp
    testbench/tests/energy/test_sram_node_fields.cpp
    testbench/tests/energy/test_sram_nodes.cpp
    testbench/tests/energy/test_tech.cpp
)
set(KVCIM_TEST_explain_SOURCES
    testbench/tests/explain/test_explain.cpp
)
set(KVCIM_TEST_hf_SOURCES
    testbench/tests/hf/test_hf_checkpoint.cpp
    testbench/tests/hf/test_hf_tokenizer.cpp
    testbench/tests/hf/test_hf_tokenizer_families.cpp
    testbench/tests/hf/test_safetensors.cpp
)
set(KVCIM_TEST_mapper_SOURCES
    testbench/tests/mapper/test_analysis.cpp
    testbench/tests/mapper/test_batch.cpp
    testbench/tests/mapper/test_chip.cpp
    testbench/tests/mapper/test_compare.cpp
    testbench/tests/mapper/test_constant_fields.cpp
    testbench/tests/mapper/test_dies.cpp
    testbench/tests/mapper/test_explore.cpp
    testbench/tests/mapper/test_hardware.cpp
    testbench/tests/mapper/test_kv.cpp
    testbench/tests/mapper/test_machine.cpp
    testbench/tests/mapper/test_machine_fields.cpp
    testbench/tests/mapper/test_macro_pricing.cpp
    testbench/tests/mapper/test_map_job.cpp
    testbench/tests/mapper/test_scale.cpp
    testbench/tests/mapper/test_shape_policy.cpp
    testbench/tests/mapper/test_spec_fields.cpp
    testbench/tests/mapper/test_weights.cpp
)
set(KVCIM_TEST_model_SOURCES
    testbench/tests/model/test_checkpoint.cpp
    testbench/tests/model/test_data_dir.cpp
    testbench/tests/model/test_gemv.cpp
    testbench/tests/model/test_golden.cpp
    testbench/tests/model/test_independent_forward.cpp
    testbench/tests/model/test_int8_model.cpp
    testbench/tests/model/test_sampler.cpp
    testbench/tests/model/test_tokenizer.cpp
)
set(KVCIM_TEST_perf_SOURCES
    testbench/tests/perf/test_int8_path.cpp
)
set(KVCIM_TEST_quant_SOURCES
    testbench/tests/quant/test_quant.cpp
)
set(KVCIM_TEST_reliability_SOURCES
    testbench/tests/reliability/test_atomic_write.cpp
    testbench/tests/reliability/test_checkpoint_limits.cpp
    testbench/tests/reliability/test_config_inputs.cpp
    testbench/tests/reliability/test_error_message.cpp
    testbench/tests/reliability/test_layering.cpp
    testbench/tests/reliability/test_npy_inputs.cpp
    testbench/tests/reliability/test_sampler_limits.cpp
    testbench/tests/reliability/test_tokenizer_inputs.cpp
)
set(KVCIM_TEST_rtl_SOURCES
    testbench/harness/tile_hooks.cpp
    testbench/tests/rtl/test_cosim_directed.cpp
    testbench/tests/rtl/test_cosim_random.cpp
    testbench/tests/rtl/test_port_stress.cpp
    testbench/tests/rtl/test_runtime_backend.cpp
    testbench/tests/rtl/test_tile_lifetime.cpp
)
set(KVCIM_TEST_runtime_SOURCES
    testbench/tests/runtime/test_batched_eval.cpp
    testbench/tests/runtime/test_bootstrap.cpp
    testbench/tests/runtime/test_cim_attention_tokens.cpp
    testbench/tests/runtime/test_cim_attention_window.cpp
    testbench/tests/runtime/test_cim_linear.cpp
    testbench/tests/runtime/test_evaluation.cpp
    testbench/tests/runtime/test_html_report.cpp
    testbench/tests/runtime/test_run.cpp
    testbench/tests/runtime/test_session.cpp
)
set(KVCIM_TEST_runtime_rtl_SOURCES
    testbench/tests/runtime_rtl/test_rtl_backend.cpp
    testbench/tests/runtime_rtl/test_rtl_build.cpp
    testbench/tests/runtime_rtl/test_rtl_evaluation.cpp
)
# the RTL configuration table's test
set(KVCIM_RTL_CONFIG_TEST_SOURCES
    testbench/tests/rtl_configs/table/test_rtl_config.cpp
)

# the gate-level netlist's test (testbench/tests/rtl_gates; with the directed suite of rtl)
set(KVCIM_RTL_GATES_TEST_SOURCES
    testbench/tests/rtl_gates/test_rtl_gates.cpp
)

# the tile Verilated with X randomisation and its harness (testbench/tests/reliability_rtl)
set(KVCIM_RTL_XRAND_SOURCES
    testbench/tests/reliability_rtl/xrand/xrand_seed.cpp
)
set(KVCIM_RTL_XRAND_TEST_SOURCES
    testbench/tests/reliability_rtl/xrand/xrand_test.cpp
    testbench/harness/tile_hooks.cpp
)

# Fails the configure step naming every file on disk that no list above holds.
function(kvcim_check_sources_listed)
  set(listed ${KVCIM_COMMON_SOURCES} ${KVCIM_CMODEL_SOURCES} ${KVCIM_MAPPER_SOURCES} ${KVCIM_RUNTIME_SOURCES} ${KVCIM_CLI_SOURCES}
      ${KVCIM_RTL_LOADER_SOURCES}
      ${KVCIM_RTL_TILE_SOURCES} ${KVCIM_RTL_SHARED_SOURCES} ${KVCIM_RTL_MODULE_SOURCES}
      ${KVCIM_PY_SOURCES} ${KVCIM_PY_TESTS} ${KVCIM_BENCH_SOURCES} ${KVCIM_CLI_TESTS} ${KVCIM_CLI_DEEP_TESTS}
      ${KVCIM_RTL_CONFIG_TEST_SOURCES} ${KVCIM_RTL_GATES_TEST_SOURCES} ${KVCIM_RTL_XRAND_SOURCES}
      ${KVCIM_RTL_XRAND_TEST_SOURCES})
  foreach(suite ${KVCIM_TEST_SUITES})
    list(APPEND listed ${KVCIM_TEST_${suite}_SOURCES})
  endforeach()
  file(GLOB_RECURSE on_disk RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} CONFIGURE_DEPENDS
       common/*.cpp cmodel/*.cpp mapper/*.cpp runtime/*.cpp rtl/sim/*.cpp testbench/harness/*.cpp testbench/tests/*.cpp
       python/src/*.cpp python/tests/test_*.py benchmarks/*.cpp)
  file(GLOB cli_tests RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} CONFIGURE_DEPENDS testbench/cli/*.sh)
  list(APPEND on_disk ${cli_tests})  # (testbench/cli/lib/ holds their shared functions)
  set(missing "")
  foreach(f ${on_disk})
    if(NOT f IN_LIST listed)
      list(APPEND missing ${f})
    endif()
  endforeach()
  foreach(f ${listed})
    if(NOT EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${f})
      message(FATAL_ERROR "kvcim: sources.cmake lists ${f}, which does not exist")
    endif()
  endforeach()
  if(missing)
    string(REPLACE ";" ", " missing "${missing}")
    message(FATAL_ERROR "kvcim: not in any list of sources.cmake: ${missing}")
  endif()
endfunction()
kvcim_check_sources_listed()
