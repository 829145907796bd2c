// kvcim._core: the compiled half of the Python package. The pure-Python package kvcim re-exports
// these names; see docs/python.md.
#include "bindings.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "kvcim: compute-in-memory co-design for Transformer inference (compiled core)";
  m.attr("__version__") = KVCIM_VERSION;
#ifdef KVCIM_HAVE_RTL
  m.attr("HAVE_RTL") = true;
#else
  m.attr("HAVE_RTL") = false;
#endif
  kvcim::python::bind_errors(m);
  kvcim::python::bind_model(m);
  kvcim::python::bind_cim(m);
  kvcim::python::bind_mapper(m);
  kvcim::python::bind_runtime(m);
}
