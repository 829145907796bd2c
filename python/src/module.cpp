// kvcim._core: the compiled half of the Python package. The pure-Python package kvcim re-exports
// these names; see docs/python.md.
#include "bindings.hpp"
#include "kvcim/data_dir.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "kvcim: compute-in-memory co-design for Transformer inference (compiled core)";
  m.attr("__version__") = KVCIM_VERSION;
#ifdef KVCIM_HAVE_RTL
  m.attr("HAVE_RTL") = true;
#else
  m.attr("HAVE_RTL") = false;
#endif
  kvcim::python::bind_errors(m);
  // The package passes its data folder here at import (kvcim/__init__.py), when it has one.
  m.def("data_dir", &kvcim::data_dir,
        "The data root: models/, configs/, testdata/eval/ ($KVCIM_DATA_DIR first).");
  m.def("set_data_dir", &kvcim::set_data_dir, pybind11::arg("dir"),
        "Where the data root is when $KVCIM_DATA_DIR is not set; '' clears it.");
  kvcim::python::bind_model(m);
  kvcim::python::bind_cim(m);
  kvcim::python::bind_mapper(m);
  kvcim::python::bind_macro(m);
  kvcim::python::bind_machine(m);
  kvcim::python::bind_sram_nodes(m);
  kvcim::python::bind_runtime(m);
}
