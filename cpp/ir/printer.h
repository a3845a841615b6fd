// IRPrinter: kernel IR as readable text, for debugging and tests.
//
// In: a Value, Stmt or Kernel. Out: one line per statement, values as nested
// calls with their types, e.g. `store output = cast<float16>(%let0 / %let1)`.
#pragma once

#include <string>

#include "ir/ir.h"

namespace nt::ir {

std::string type_string(const Type& type);
std::string to_string(const Value& value);
std::string to_string(const StmtList& stmts, int indent = 0);
std::string to_string(const Kernel& kernel);

}  // namespace nt::ir
