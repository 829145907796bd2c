# The Hugging Face tokenizers of testdata/tokenizers/<family>/ (tokenizer.json packed as
# tokenizer.tar.xz, 1-11 MB unpacked) unpacked into the build folder beside a copy of their
# tokenizer_config.json, for test_hf (KVCIM_TOKENIZER_DATA). CMake unpacks the archives itself:
# no tool and no network at test time.
set(tokenizer_outputs "")
foreach(family llama3 mistral qwen3)
  set(src ${CMAKE_CURRENT_SOURCE_DIR}/testdata/tokenizers/${family})
  set(dst ${CMAKE_BINARY_DIR}/testdata/tokenizers/${family})
  add_custom_command(
    OUTPUT ${dst}/tokenizer.json ${dst}/tokenizer_config.json
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dst}
    COMMAND ${CMAKE_COMMAND} -E chdir ${dst} ${CMAKE_COMMAND} -E tar xf ${src}/tokenizer.tar.xz
    COMMAND ${CMAKE_COMMAND} -E touch ${dst}/tokenizer.json
    COMMAND ${CMAKE_COMMAND} -E copy ${src}/tokenizer_config.json ${dst}/tokenizer_config.json
    DEPENDS ${src}/tokenizer.tar.xz ${src}/tokenizer_config.json
    COMMENT "Unpacking the ${family} tokenizer test data")
  list(APPEND tokenizer_outputs ${dst}/tokenizer.json ${dst}/tokenizer_config.json)
endforeach()
add_custom_target(tokenizer_testdata DEPENDS ${tokenizer_outputs})
add_dependencies(test_hf tokenizer_testdata)
target_compile_definitions(test_hf PRIVATE KVCIM_TOKENIZER_DATA="${CMAKE_BINARY_DIR}/testdata/tokenizers")
