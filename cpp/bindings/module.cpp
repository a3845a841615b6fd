// The pybind11 module `ninetoothed._core`: conversion only, no logic.
#include <pybind11/pybind11.h>

#include "bindings/block.h"
#include "bindings/conversions.h"
#include "support/errors.h"
#include "support/interrupts.h"

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() = "NineToothed's C++ compiler core";
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const nt::TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const nt::ZeroDivisionError& e) {
      PyErr_SetString(PyExc_ZeroDivisionError, e.what());
    }
  });
  // Ctrl-C during long work in the core (tuning) raises KeyboardInterrupt there.
  nt::set_interrupt_check([] {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  });
  nt::bindings::bind_symbol(m);
  nt::bindings::bind_tensor(m);
  nt::bindings::bind_pickle(m);
  nt::bindings::bind_kernel(m);
  nt::bindings::bind_device(m);
  nt::bindings::bind_launch(m);
  nt::bindings::bind_language(m);
}
