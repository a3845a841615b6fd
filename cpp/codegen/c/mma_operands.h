// Tensor-core dots' operands as the emitter stages them in local memory (emitter_mma_staging.cpp,
// emitter_work_group_dot.cpp): the type of a dot, the C of a staged element, where an element lies
// in its array, and an operand read from registers instead.
#pragma once

#include <set>
#include <string>

#include "ir/ir.h"

namespace nt::codegen {

// The type of a tensor-core dot ("f16", "bf16", "tf32", "tf32x3": its operands and precision), or "".
std::string mma_type(const ir::Value& dot);
// The C type of a staged float16, bfloat16 or float32 element (16-bit ones as their bits), and its
// size in bytes.
std::string staged_type(DType dtype);
int staged_size(DType dtype);
// A statement storing the compute-type `value` at `at` of `array` (16-bit types rounded to nearest
// even); a staged element as the compute type.
std::string staged_store(DType dtype, const std::string& array, const std::string& at,
                         const std::string& value);
std::string staged_load(DType dtype, const std::string& array, const std::string& at);
// The degree of `e` as a polynomial in the symbols `names` together: 0 (free of them), 1 (affine in
// them), or 2 (anything else).
int degree_in(const Expr& e, const std::set<std::string>& names);
// The dot of an Assign `acc = acc + dot(a, b)` of the local's own dtype (accumulated in place), or null.
const ir::ValueNode* accumulated_dot(const ir::Stmt& s);
// The statements of `loop`'s body `acc += dot(a, b)` (accumulated_dot()) on 16-bit
// operands whose local nothing else in the body reads or assigns: the dots that go on Hopper's
// warpgroup MMAs (emitter_wgmma.cpp).
std::set<const ir::StmtNode*> accumulated_dots(const ir::Stmt& loop);
// The Let or local a 16-bit tensor-core dot's a reads, as it is or through a cast from float to the
// dot's type: one it may read from registers (Emitter::registers_of_a()); null otherwise.
const ir::Value* register_operand(const ir::Value& dot);

// Where element (r, c) of a staged operand of `rows` x `columns` lies in its array: rows `pitch`
// elements apart, or, where the C condition `swizzled` holds (dots on Hopper's warpgroup MMAs),
// in wgmma's swizzled atoms (nt_wgmma_at(), codegen/c/wgmma_ptx.cpp). All as C.
struct StagedLayout {
  std::string pitch;
  std::string swizzled;  // "": never
  std::string rows, columns;

  bool operator==(const StagedLayout&) const = default;
  std::string at(const std::string& r, const std::string& c) const {
    const std::string rowwise = r + " * (" + pitch + ") + " + c;
    if (swizzled.empty()) return rowwise;
    return "((" + swizzled + ") ? nt_wgmma_at(" + r + ", " + c + ", " + rows + ", NT_WGMMA_ATOM(" + columns +
           ")) : " + rowwise + ")";
  }
};

// A tensor-core dot's a held in registers, in the tile layout of its own shape (flash attention's
// p): Emitter::registers_of_a().
struct HeldOperand {
  std::string array;      // its slots
  std::string condition;  // C: where they are mma.sync's a fragments
  int layout = -1;        // its tile layout
};

}  // namespace nt::codegen
