// Inlining of single-use Let bindings (the fusion of elementwise trees).
//
// In: a Kernel as traced, one Let per Python assignment to a name. Out: the
// same kernel where each Let whose value is used exactly once, by a statement
// of the same block, with nothing in between writing what the value reads
// (a store to a loaded tensor, an assignment to a read local), is substituted
// into its use and removed; Lets of constants, scalar parameters and loop
// variables are substituted everywhere; Lets never read are removed (values have no side
// effects: stores, atomics and prints are statements). What remains is materialised by code
// generation: values used more than once or used inside a loop below their
// definition.
#pragma once

#include "ir/ir.h"

namespace nt::lower {

ir::Kernel inline_lets(const ir::Kernel& kernel);

}  // namespace nt::lower
