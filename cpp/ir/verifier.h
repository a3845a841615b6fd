// The IR verifier: checks the invariants every pass may rely on.
//
// In: a Kernel. Out: nothing, or std::logic_error naming the first broken
// invariant: every LetRef/LocalRef/LoopVar refers to a binding in scope and
// defined before it; params exist and loads/stores give the middle level one
// index each; Binary/Where operands have their result's shape; Store and
// Assign values have the target's shape; conditions and loop bounds are
// scalars.
#pragma once

#include "ir/ir.h"

namespace nt::ir {

void verify(const Kernel& kernel);

}  // namespace nt::ir
