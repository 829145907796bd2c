// The message of the kvcim::Error a call throws: what the tests of every reader and validator
// compare against. Anything else (another exception, or no exception) is a test failure.
#pragma once
#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <string>

#include "kvcim/error.hpp"

namespace kvcim::test {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const kvcim::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected kvcim::Error, got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected kvcim::Error, nothing was thrown";
  return "";
}

}  // namespace kvcim::test
