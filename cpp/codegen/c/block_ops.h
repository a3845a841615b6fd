// OpenCL C of the Triton block operations (ir/block_ops.h, ir/math_fns.h)
// and of the statements with side effects beyond stores (atomics returning
// old values, device_print, device_assert).
//
// In: IR nodes and the kernel emitter's context (emit_context.h). Out: C.
// - elementwise (element()): Call (math_calls.h), Rearrange (the result's
//   element index mapped to the operand's: reshape by row-major flat index,
//   permute, flip, cat/join by a select, split by a fixed last index),
//   Extract (an output of a materialised Combine);
// - materialised (materialize()): Combine (a sequential fold per row of the
//   reduced or scanned axis; the combine function's C with its arguments
//   bound to the accumulators and the new elements), Sort (a stable
//   bottom-up merge sort per row, top-k keeps the first k), Gather (indices
//   clamped into the source), Histogram (out-of-range values ignored);
// - statements (emit_statement()): Atomic (per element, masked and kept
//   inside the tensor, the old value into the Let's array; float min/max and
//   exchange by compare-and-swap loops), Print (printf per element with the
//   program id and the element index), Assert (a printf for each failing
//   element).
#pragma once

#include <string>
#include <vector>

#include "codegen/c/emit_context.h"
#include "ir/ir.h"

namespace nt::codegen {

extern const char* const kAtomicPreamble;

bool is_block_op_element(ir::ValueKind kind);
std::string block_op_element(EmitContext& ctx, const ir::Value& v, const std::vector<Expr>& index);

bool is_materialized_block_op(ir::ValueKind kind);
void materialize_block_op(EmitContext& ctx, const ir::Value& v);

bool is_block_op_statement(ir::StmtKind kind);
void emit_block_op_statement(EmitContext& ctx, const ir::Stmt& s);

}  // namespace nt::codegen
