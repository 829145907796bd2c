// kvcim::Error arrives in Python as kvcim.Error, with the C++ message unchanged. The class derives
// from both RuntimeError and ValueError: most kvcim errors are bad input (a file, a field, a value),
// and code written for either base catches them.
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "kvcim/error.hpp"

namespace kvcim::python {

void bind_errors(py::module_& m) {
  // Created once and kept alive by the module attribute; the translator only borrows it.
  static PyObject* error_type = nullptr;
  py::tuple bases = py::make_tuple(py::reinterpret_borrow<py::object>(PyExc_RuntimeError),
                                   py::reinterpret_borrow<py::object>(PyExc_ValueError));
  py::dict attrs;
  attrs["__module__"] = "kvcim";
  error_type = PyErr_NewExceptionWithDoc(
      "kvcim.Error",
      "A kvcim library error: the message names the file (or source), the field and the value "
      "at fault.",
      bases.ptr(), attrs.ptr());
  if (!error_type) throw py::error_already_set();
  m.attr("Error") = py::reinterpret_steal<py::object>(error_type);

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const kvcim::Error& e) {
      PyErr_SetString(error_type, e.what());
    }
  });

  // Lets tests prove that a C++ throw crosses the boundary intact.
  m.def("_raise_error", [](const std::string& message) { throw kvcim::Error(message); });
}

py::object to_python(const nlohmann::json& value) {
  const std::string text = value.dump();
  return py::module_::import("json").attr("loads")(py::str(text));
}

nlohmann::json to_json(py::handle value, const std::string& where) {
  std::string text;
  try {
    text = py::module_::import("json").attr("dumps")(value).cast<std::string>();
  } catch (const py::error_already_set& e) {
    throw kvcim::Error(where + ": value = " + std::string(py::str(py::repr(value))) +
                       ": expected dicts, lists, numbers, strings and bools (" + e.what() + ")");
  }
  return nlohmann::json::parse(text);
}

py::array_t<float> numpy_matrix(const float* data, long rows, long cols) {
  py::array_t<float> out({rows, cols});
  std::copy(data, data + rows * cols, out.mutable_data());
  return out;
}

py::array_t<float> numpy_vector(const float* data, long n) {
  py::array_t<float> out(n);
  std::copy(data, data + n, out.mutable_data());
  return out;
}

}  // namespace kvcim::python
