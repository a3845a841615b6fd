// Transposed dot operands packed by register transposes (Mode::WorkItem; emitter.h,
// pack_transposed()).
//
// In: a dot operand that is a float32 or float16 block (packed as float) whose element (k, n)
// lies at base + k * s_k + n * s_n, s_k a stride symbol (1 at launch when NT_UNIT_<s_k>): `b`
// of `x @ w.T`, a linear layer's weight. Out: under `#if NT_UNIT_<s_k>`, a packing whose
// unmasked path loads 16 consecutive k of each of 16 columns with vload16 (vload_half16),
// transposes the 16 x 16 tile in registers (nt_transpose16) and stores 16 rows of the packed
// array with vstore16, instead of one strided gather per element (8 x 8 tiles, nt_transpose8,
// where the device's vector registers are 32 bytes: NT_VECTOR_BYTES); the element-wise packing in
// the `#else` and for the masked path. A k that unravels a flattened dimension (offsets with
// `//` and `%` of k, an implicit GEMM's filter) takes the register transposes where a run-time
// check finds the block's rows unit-stride (the flattened dimensions contiguous), the
// element-wise packing elsewhere.
#include <algorithm>
#include <functional>
#include <string>

#include "codegen/c/emitter.h"
#include "codegen/c/transposed_tiles.h"

namespace nt::codegen {

bool Emitter::pack_transposed(const Value& v, DType dtype, const std::string& name,
                              const std::function<void(const std::vector<Expr>&)>& copy) {
  if (group_ || distribute_ || v->type.shape.size() != 2) return false;
  // `trans(p)` of a block read along its rows (`dot(q, trans(k))`) is such a block as well.
  const bool swapped = v->kind == ValueKind::Trans;
  const Value& load = swapped ? v->operands[0] : v;
  if (load->kind != ValueKind::Load) return false;
  const Param& p = k_.params[load->param];
  if ((p.dtype != DType::float32 && p.dtype != DType::float16) || compute_type(dtype) != "float")
    return false;
  const std::string vload = p.dtype == DType::float16 ? "vload_half" : "vload";
  const std::vector<Expr>& shape = v->type.shape;
  if (!is_compile_time(shape[0]) || !is_compile_time(shape[1])) return false;
  const lower::TensorAccess& a = access_of(load);
  if (a.never || !a.per_element.empty()) return false;  // masked even where the block is in bounds
  Expr k = index_variable("nt_tk", shape[0]), n = index_variable("nt_tn", shape[1]);
  // The offset of element (row, column) of `v`.
  auto offset_of = [&](const Expr& row, const Expr& column) {
    return simplify(swapped ? a.offset_at({column, row}) : a.offset_at({row, column}), env_);
  };
  Expr offset = offset_of(k, n);
  auto row_step = coefficient(offset, k->name), column_step = coefficient(offset, n->name);
  if (!column_step) return false;
  Expr sn = simplify(*column_step, env_);
  auto column_unit = unit_macro_of(sn);
  if (sn.is_int(1)) return false;
  for (const Expr& x : collect_vars(sn)) {
    if (x->name == k->name || x->name == n->name) return false;
  }
  // The rows' step: a unit stride symbol, or (`flattened`) an offset that divides k, as a
  // flattened dimension's does (an implicit GEMM's filter steps (c, r, s)), unit-stride where
  // the flattened dimensions are contiguous: that is checked on the block's rows at run time.
  std::string test;
  if (row_step) {
    auto row_unit = unit_macro_of(simplify(*row_step, env_));
    if (!row_unit) return false;
    test = *row_unit;
  } else {
    test = "1";
  }
  const bool flattened = !row_step;
  // Where the columns are unit-stride too, the element-wise packing is a vectorised copy already.
  if (column_unit) test += " && !" + *column_unit;
  loaded_params_.insert(load->param);
  uses_transposes_ = true;
  std::string ptr = "nt_p" + std::to_string(load->param);
  std::string K = c(simplify(shape[0], env_)), N = c(simplify(shape[1], env_));
  // With `flattened`, element (row, column) lies at `base + row + column * s_n` once the check
  // below has found the rows unit-stride.
  const std::string base = flattened ? fresh("nt_kbase") : "";
  auto at = [&](const Expr& row, const Expr& column) {
    if (!flattened) return c(offset_of(row, column));
    return base + " + " + c(simplify(add(row, mul(column, sn)), env_));
  };
  // The whole w x w tiles by register transposes, then the edges element by element
  // (transposed_tiles.h).
  auto tiles = [&](int w) {
    Expr k0 = index_variable("nt_k0", shape[0]), n0 = index_variable("nt_n0", shape[1]);
    const std::string r = fresh("nt_r");
    Expr ek = index_variable("nt_ek", shape[0]), en = index_variable("nt_en", shape[1]);
    TransposedTiles t;
    t.width = w;
    t.vload = vload;
    t.pointer = ptr;
    t.array = name;
    t.rows = K;
    t.columns = N;
    t.k0 = k0->name;
    t.n0 = n0->name;
    t.registers = r;
    t.ek = ek->name;
    t.en = en->name;
    t.column_offset = [&](int i) { return at(k0, add(n0, Expr(i))); };
    t.edge = [&] { copy({ek, en}); };
    write_transposed_tiles(*this, t);
  };
  auto transposes = [&] {
    private_bytes_ = add(private_bytes_, Expr(16 * 16 * 4));  // the larger tile's registers
    if (flattened) {
      Expr ck = index_variable("nt_ck", shape[0]);
      const std::string unit = fresh("nt_kunit");
      line_("const long " + base + " = " + c(offset_of(Expr(0), Expr(0))) + ";");
      line_("int " + unit + " = 1;");
      line_("for (long " + ck->name + " = 1; " + ck->name + " < " + K + "; ++" + ck->name + ") " + unit +
            " &= " + c(offset_of(ck, Expr(0))) + " == " + base + " + " + ck->name + ";");
      open("if (!" + unit + ")");
      loops(shape, copy);
      close("} else {");
      ++indent_;
    }
    // Tiles of w x w for the device's vector registers (dot_kernel.h's NT_VECTOR_BYTES): 16 x 16
    // floats in 64-byte ones; 8 x 8 in 32-byte ones, whose 16 registers 16 float16 rows overflow.
    line_(kIfWideVectors);
    tiles(16);
    line_("#else");
    tiles(8);
    line_("#endif");
    if (flattened) close();
  };
  line_("#if " + test);
  nest(shape, {v}, nullptr, copy, /*hint=*/true, transposes, /*prefetch=*/false, /*strips=*/false,
       /*reorder=*/true);
  line_("#else");
  nest(shape, {v}, nullptr, copy, /*hint=*/true, nullptr, /*prefetch=*/false, /*strips=*/false,
       /*reorder=*/true);
  line_("#endif");
  return true;
}

}  // namespace nt::codegen
