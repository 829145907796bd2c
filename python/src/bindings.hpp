// Shared declarations of the kvcim._core bindings: one bind_* function per part of the C++ library,
// each in its own file, and the small helpers they share. The bindings stay thin: C++ values that
// already serialise to JSON cross into Python through a JSON string and json.loads.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kvcim/cmodel/transformer.hpp"
#include "kvcim/fields.hpp"

namespace kvcim::python {

namespace py = pybind11;

// The Python Model: the C++ golden model plus a lock, because Model::forward keeps run state and
// calls release the GIL (two Python threads sharing one Model take turns instead of racing).
struct PyModel {
  std::shared_ptr<cmodel::Model> model;
  std::shared_ptr<std::mutex> lock = std::make_shared<std::mutex>();
};

void bind_errors(py::module_& m);
void bind_model(py::module_& m);
void bind_cim(py::module_& m);
void bind_mapper(py::module_& m);
void bind_runtime(py::module_& m);
void bind_macro(py::module_& m);
void bind_machine(py::module_& m);
void bind_sram_nodes(py::module_& m);

// Python value of a JSON document (dicts, lists, numbers, strings) via json.loads.
py::object to_python(const nlohmann::json& value);
// JSON of a Python value made of dicts, lists, numbers, strings and bools (via json.dumps).
// Throws kvcim::Error naming `where` when the value does not serialise.
nlohmann::json to_json(py::handle value, const std::string& where);

// A struct described by a field table (kvcim/fields.hpp) as a dict keyed by its C++ field names,
// nested structs as nested dicts.
template <Described S>
py::dict fields_dict(const S& s) {
  py::dict d;
  for_each_field<S>([&](const auto& field) {
    const auto& value = s.*field.member;
    if constexpr (Described<std::remove_cvref_t<decltype(value)>>)
      d[field.name] = fields_dict(value);
    else
      d[field.name] = value;
  });
  return d;
}

// A float32 numpy array [rows, cols] holding a copy of row-major data.
py::array_t<float> numpy_matrix(const float* data, long rows, long cols);
py::array_t<float> numpy_vector(const float* data, long n);

}  // namespace kvcim::python
