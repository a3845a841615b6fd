// Error types of the core. The bindings turn each into the Python exception
// of the same name; C++ callers can catch them as standard exceptions.
#pragma once

#include <stdexcept>
#include <string>

namespace nt {

// Bad value of a right type (Python ValueError).
struct ValueError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Index or dimension out of range (Python IndexError).
struct IndexError : std::out_of_range {
  using std::out_of_range::out_of_range;
};

// Wrong kind of argument (Python TypeError).
struct TypeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Integer division or modulo by zero (Python ZeroDivisionError).
struct ZeroDivisionError : std::domain_error {
  using std::domain_error::domain_error;
};

// A device call (OpenCL, CUDA) failed (Python RuntimeError).
struct RuntimeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace nt
