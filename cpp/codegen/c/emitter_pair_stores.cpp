// Tensor-core results stored two elements a word (dialects with pair_stores: CUDA C).
//
// In: a store of a two-dimensional float16 or bfloat16 block held in a tile layout, in a program on
// a work-group. Out: its unmasked path, written where the layout is a tensor core's (NT_MMA<n>: a
// work-item holds pairs of adjacent columns) and the launch's block has unit-stride rows an even
// number of elements apart from a 4-byte-aligned start (a test of strides and pointer, the same
// for every work-item) a pair at a time, rounded and packed into one 32-bit store; elsewhere
// element by element as before. A float16 matmul's 128 x 256 tile on 8 warps took 128 stores of
// 2 bytes a work-item; it takes 64 of 4.
#include <functional>
#include <string>

#include "codegen/c/emitter.h"
#include "symbolic/substitute.h"

namespace nt::codegen {

using namespace nt::ir;

std::function<void()> Emitter::store_pairs(const Param& p, const lower::TensorAccess& a, const Value& value,
                                           const std::vector<Expr>& shape, const std::string& ptr,
                                           const std::function<void(const std::vector<Expr>&)>& element) {
  if (!d_.pair_stores || !group_ || serial_ || shape.size() != 2 || a.never || !a.per_element.empty())
    return nullptr;
  if (p.dtype != DType::float16 && p.dtype != DType::bfloat16) return nullptr;
  if (!is_compile_time(shape[0]) || !is_compile_time(shape[1])) return nullptr;
  if (!mma_shapes_.count(shape_key(shape))) return nullptr;      // never a tensor core's layout
  const std::string rows = unit_rows_test(a, shape, ptr, 2, 4);  // pairs of 2 bytes, 4-byte words
  if (rows.empty()) return nullptr;
  return [=, this] {
    const Expr i = index_variable("nt_si", shape[0]), j = index_variable("nt_sj", shape[1]);
    if (!mask_of(a, {i, j}).empty()) {  // conditions even where the block is whole
      loops(shape, element);
      return;
    }
    const int layout = tile_layout(shape);
    const std::string n = std::to_string(layout), key = shape_key(shape);
    const std::string store = p.dtype == DType::float16 ? "nt_store_half2_rte" : "nt_store_bf16x2_rte";
    line_("#ifdef NT_MMA_SYNC");
    open("if (NT_MMA" + n + " && NT_FULL" + n + " && " + rows + ")");
    // The tile layout's loops, two adjacent columns (a work-item's pair in an mma layout) a step.
    const std::string tx = fresh("nt_tx"), ty = fresh("nt_ty"), r = fresh("nt_r"), col = fresh("nt_c");
    open("");
    line_(lane_coordinates(layout, tx, ty));
    line_("NT_UNROLL");
    open("for (int " + r + " = 0; " + r + " < NT_R" + n + "; ++" + r + ")");
    const Expr row = index_variable("e", shape[0]);
    line_("const nt_index " + row->name + " = NT_ROW" + n + "(" + ty + ", " + r + ");");
    line_("NT_UNROLL");
    open("for (int " + col + " = 0; " + col + " < NT_C" + n + "; " + col + " += 2)");
    const Expr first = index_variable("e", shape[1]), second = index_variable("e", shape[1]);
    line_("const nt_index " + first->name + " = NT_COL" + n + "(" + tx + ", " + col + "), " + second->name +
          " = " + first->name + " + 1;");
    auto saved = aligned_;
    const std::string slot = "(" + r + " * NT_C" + n + " + " + col;
    aligned_ = Aligned{key, {row->name, first->name}, slot + ")", r};
    const std::string low = elem(value, {row, first});
    aligned_ = Aligned{key, {row->name, second->name}, slot + " + 1)", r};
    const std::string high = elem(value, {row, second});
    aligned_ = saved;
    line_(store + "((float)(" + low + "), (float)(" + high + "), " +
          c(simplify(a.offset_at({row, first}), env_)) + ", " + ptr + ");");
    close();
    close();
    close();
    close("} else");
    line_("#endif");
    open("");
    loops(shape, element);
    close();
  };
}

}  // namespace nt::codegen
