// A mask's bounds on one expression, merged.
//
// In: a mask's conditions (a conjunction, each simplified) and the names of the variables its
// element index is written in. Out: the same conjunction, where an integer expression of those
// variables compared with two or more bounds free of them is compared once on each side, with the
// greatest lower bound and the least upper bound. A padded convolution's window row h is tested
// against the padded tensor (`0 <= h`, `h < H + 2 * pad`) and the tensor itself (`pad <= h`,
// `h < H + pad`): merged, `max(0, pad) <= h` and `h < min(H + 2 * pad, H + pad)`, whose bounds the
// C compiler computes once, outside the element loop, so that an element tests two conditions, not
// four. The greatest and the least are conditional expressions (`a >= b ? a : b`), which keep
// their operands' C type (int under NT_INDEX32). Integer comparisons only (`L < s` is `L + 1 <= s`); a bound
// that divides, and any other condition, keep their form and place; a merged bound takes the place of its
// side's first.
#pragma once

#include <string>
#include <vector>

#include "symbolic/expr.h"

namespace nt::codegen {

std::vector<Expr> merge_mask_bounds(const std::vector<Expr>& conditions,
                                    const std::vector<std::string>& variables);

}  // namespace nt::codegen
