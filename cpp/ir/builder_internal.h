// What the Builder (builder.cpp) and the block-valued expressions (values.cpp) share; not part
// of the IR's interface.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace nt::ir {

inline Value make(ValueNode node) { return std::make_shared<const ValueNode>(std::move(node)); }

// The type of a scalar of `dtype` (`weak`: a Python number's, which takes its partner's dtype).
inline Type scalar_type(DType dtype, bool weak = false) { return Type{dtype, {}, weak}; }

// `axis` counted from the end when negative; IndexError (naming `what`) outside an `ndim`-d block.
int normalize_axis(int axis, size_t ndim, const char* what);

// Where the Builder being used on this thread collects the sizes it assumes equal (sizes of
// different symbols that broadcasting meets), or nullptr.
std::vector<std::pair<Expr, Expr>>*& assumed_equal_sink();

}  // namespace nt::ir
