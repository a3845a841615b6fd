// Tensor-core dot operands staged as 16-bit values (dialects with mma_16bit_staging: CUDA C).
//
// In: a float16 or bfloat16 dot operand that pitched_operand() (emitter_work_group_dot.cpp)
// stages in shared memory. Out: the C that fills its array with the operand's own 16-bit values,
// rows `pitch` elements apart, read back by ldmatrix (or, off tensor cores, converted to float).
//
// A block loaded whole from a tensor, where the block is in bounds, its rows are contiguous in
// memory and start 16 bytes apart from a 16-byte-aligned element, is copied 8 elements (16
// bytes) a thread at a time by cp.async, with no trip through registers and no conversion.
// Everything else (partial blocks, strided rows, computed operands) is converted element by
// element, rounded to nearest even. The copies are identical in value: a loaded float16 held as
// float converts back to its own bits.
#include <algorithm>
#include <functional>
#include <set>
#include <string>

#include "codegen/c/emitter.h"
#include "symbolic/substitute.h"

namespace nt::codegen {

using namespace nt::ir;

namespace {

// The degree of `e` as a polynomial in the symbols `names` together: 0 (free of them), 1
// (affine in them), or 2 (anything else: a product of two of them, or one under a division,
// a modulo, a min or a comparison).
int degree_in(const Expr& e, const std::set<std::string>& names) {
  switch (e->kind) {
    case ExprKind::Var:
      return names.count(e->name) ? 1 : 0;
    case ExprKind::Int:
    case ExprKind::Float:
    case ExprKind::Bool:
      return 0;
    default:
      break;
  }
  int most = 0, sum = 0;
  for (const Expr& o : e->operands) {
    const int d = degree_in(o, names);
    most = std::max(most, d);
    sum += d;
  }
  if (most == 0) return 0;
  if (e->kind == ExprKind::Unary && e->unary_op == UnaryOp::Neg) return most;
  if (e->kind == ExprKind::Binary) {
    switch (e->binary_op) {
      case BinaryOp::Add:
      case BinaryOp::Sub:
        return most;
      case BinaryOp::Mul:
        return std::min(sum, 2);
      default:
        break;
    }
  }
  return 2;
}

}  // namespace

std::string Emitter::staged_type(DType dtype) { return dtype == DType::float16 ? "half" : "ushort"; }

std::string Emitter::staged_store(DType dtype, const std::string& array, const std::string& at,
                                  const std::string& value) {
  if (dtype == DType::float16) return "vstore_half_rte((float)(" + value + "), " + at + ", " + array + ");";
  return array + "[" + at + "] = nt_float_to_bf16((float)(" + value + "));";
}

std::string Emitter::staged_load(DType dtype, const std::string& array, const std::string& at) {
  if (dtype == DType::float16) return "vload_half(" + at + ", " + array + ")";
  return "nt_bf16_to_float(" + array + "[" + at + "])";
}

void Emitter::copy_staged_rows(const Value& v, const std::string& array, const std::string& pitch,
                               const std::function<void(const std::vector<Expr>&)>& copy) {
  const std::vector<Expr>& shape = v->type.shape;
  const bool loaded_whole = v->kind == ValueKind::Load && shape.size() == 2 &&
                            k_.params[v->param].dtype == v->type.dtype && !access_of(v).never &&
                            access_of(v).per_element.empty();
  if (!loaded_whole) {
    loops(shape, copy);
    return;
  }
  const lower::TensorAccess& a = access_of(v);
  // Rows are copied as runs only where the element offset is affine in the block's row i and
  // column j: then its steps along either are the same everywhere, read at (0, 0).
  const Expr i = index_variable("nt_si", shape[0]), j = index_variable("nt_sj", shape[1]);
  const Expr start = a.offset_at({i, j});
  if (degree_in(start, {i->name, j->name}) > 1) {
    loops(shape, copy);
    return;
  }
  auto offset = [&](int64_t row, int64_t column) {
    return c(simplify(a.offset_at({Expr(row), Expr(column)}), env_));
  };
  const std::string origin = offset(0, 0);
  const std::string column_step = "(" + offset(0, 1) + ") - (" + origin + ")",
                    row_step = "(" + offset(1, 0) + ") - (" + origin + ")";
  const std::string ptr = "nt_p" + std::to_string(v->param);
  const std::string rows = c(simplify(shape[0], env_)), columns = c(simplify(shape[1], env_));
  loaded_params_.insert(v->param);
  line_("#ifdef NT_MMA_SYNC");
  open("if ((" + column_step + ") == 1 && (" + row_step + ") % 8 == 0 && (" + columns +
       ") % 8 == 0 && (" + pitch + ") % 8 == 0 && ((ulong)(" + ptr + " + (" + origin + ")) & 15) == 0)");
  const std::string chunk = fresh("nt_chunk");
  open("for (long " + chunk + " = NT_LANE; " + chunk + " < (" + rows + ") * ((" + columns + ") / 8); " + chunk +
       " += NT_WORK_ITEMS)");
  line_("const long " + i->name + " = " + chunk + " / ((" + columns + ") / 8), " + j->name + " = " + chunk +
        " % ((" + columns + ") / 8) * 8;");
  line_("nt_cp_async16(" + array + " + " + i->name + " * (" + pitch + ") + " + j->name + ", " + ptr + " + (" +
        c(simplify(start, env_)) + "));");
  close();
  line_("nt_cp_async_wait_all();");
  close("} else");
  line_("#endif");
  open("");
  loops(shape, copy);
  close();
}

}  // namespace nt::codegen
