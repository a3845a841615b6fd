#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "codegen/c/block_ops.h"
#include "codegen/c/c_expr.h"
#include "codegen/c/c_types.h"
#include "codegen/c/dot_kernel.h"
#include "codegen/c/emitter.h"
#include "codegen/c/mask_bounds.h"
#include "codegen/c/math_calls.h"
#include "ir/builder.h"
#include "ir/mutator.h"
#include "lower/program_layout.h"
#include "lower/tensor_access.h"
#include "support/errors.h"
#include "symbolic/printer.h"
#include "symbolic/substitute.h"

namespace nt::codegen {

using namespace nt::ir;

Expr Emitter::index_expr(const Value& v) {
  if (v->kind == ValueKind::Constant) return v->expr;
  if (v->kind == ValueKind::LoopVar) return var(loop_vars_.at(v->name));
  std::string name = fresh("nt_i");
  line_("const long " + name + " = (long)(" + elem(v, {}) + ");");  // a value: its int64 whole
  return var(name);
}

const lower::TensorAccess& Emitter::access_of(const Value& load) {
  auto it = accesses_.find(load.get());
  if (it != accesses_.end()) return it->second;
  std::vector<Expr> middle;
  size_t count = load->kind == ValueKind::LoadAt ? static_cast<size_t>(load->axis) : load->operands.size();
  for (size_t i = 0; i < count; ++i) middle.push_back(index_expr(load->operands[i]));
  return accesses_
      .emplace(load.get(), lower::lower_access(k_.params[load->param], layout_, middle, env_,
                                               k_.own_programs.count(load->param) > 0))
      .first->second;
}

std::string Emitter::mask_of(const lower::TensorAccess& a, const std::vector<Expr>& index) {
  if (a.never) return "0";
  // Conditions that cannot trap are joined by `&`: no branch per condition, so that a loop
  // reading a masked element still vectorises. The others follow behind `&&`, evaluated only
  // where those before hold.
  std::string safe, guarded;
  // Each condition is simplified once, here, or where it is made below (a merged bound, a join).
  std::vector<Expr> conditions = a.conditions_at(index, fast_);
  for (Expr& cond : conditions) cond = simplify(cond, env_);
  {  // one lower and one upper bound per expression of the element's index (codegen/c/mask_bounds.h)
    std::vector<std::string> variables;
    for (const Expr& i : index)
      for (const Expr& v : collect_vars(i)) variables.push_back(v->name);
    std::vector<Expr> merged = merge_mask_bounds(conditions, variables);
    for (Expr& cond : merged) {
      auto same = [&](const Expr& given) { return given.same_as(cond); };
      if (std::none_of(conditions.begin(), conditions.end(), same)) cond = simplify(cond, env_);
    }
    conditions = std::move(merged);
  }
  if (group_ && tables_.in_nest()) {
    // A staged gather's (with_group_tables()): the conditions on one index variable alone as one, so
    // that an element reads one table entry for them, not one each. Joined only where the join is read
    // from a table (which guards its divisions), at the place of its first condition; elsewhere each
    // condition keeps its place.
    std::vector<std::string> only(conditions.size());  // the one index variable a condition uses, or ""
    std::map<std::string, Expr> joined;
    std::set<std::string> joins;  // the variables of two conditions or more
    for (size_t n = 0; n < conditions.size(); ++n) {
      std::set<std::string> used;
      for (const Expr& v : collect_vars(conditions[n]))
        if (std::count(tables_.index().begin(), tables_.index().end(), v->name)) used.insert(v->name);
      if (used.size() != 1) continue;
      only[n] = *used.begin();
      auto [at, first] = joined.emplace(only[n], conditions[n]);
      if (!first) {
        at->second = logical_and(at->second, conditions[n]);
        joins.insert(only[n]);
      }
    }
    std::set<std::string> tabulable, placed;
    for (auto& [name, cond] : joined) {
      if (joins.count(name)) cond = simplify(cond, env_);
      if (tables_.tabulated(cond)->kind == ExprKind::Var) tabulable.insert(name);
    }
    std::vector<Expr> in_order;
    for (size_t n = 0; n < conditions.size(); ++n) {
      if (!tabulable.count(only[n])) {
        in_order.push_back(conditions[n]);
      } else if (placed.insert(only[n]).second) {  // the later conditions of its group are in it
        in_order.push_back(joined.at(only[n]));
      }
    }
    conditions = in_order;
  }
  for (const Expr& e : conditions) {
    std::string s = c(e);
    if (s == "1") continue;
    if (s == "0") return "0";
    if (unproved_divisors(tables_.tabulated(e), env_).empty()) {
      safe += (safe.empty() ? "" : " & ") + ("(" + s + ")");
    } else {
      guarded += " && " + s;
    }
  }
  if (safe.empty() && !guarded.empty()) return guarded.substr(4);
  return safe.find(" & ") == std::string::npos || guarded.empty() ? safe + guarded
                                                                  : "(" + safe + ")" + guarded;
}

std::string Emitter::block_positions(const std::vector<Value>& operands, size_t first,
                                     const lower::TensorAccess& a, const std::vector<Expr>& index,
                                     std::vector<Expr>& at) {
  std::string mask;
  for (size_t d = 0; first + d < operands.size(); ++d) {
    std::string name = fresh("nt_at");
    line_("const long " + name + " = " + elem(operands[first + d], index) + ";");  // data: wide, then tested
    at.push_back(var(name));
    mask += std::string(d ? " && " : "") + "(ulong)" + name + " < (ulong)(" +
            c(simplify(a.block_shape[d], env_)) + ")";
  }
  for (const Expr& cond : a.conditions_at(at, /*fast=*/false)) {
    std::string s = c(simplify(cond, env_));
    if (s != "1") mask += (mask.empty() ? "" : " && ") + s;
  }
  return mask.empty() ? "1" : mask;
}

std::string Emitter::load_element(const Param& p, const std::string& ptr, const std::string& offset) {
  switch (p.dtype) {
    case DType::float16:
      return "vload_half(" + offset + ", " + ptr + ")";
    case DType::bfloat16:
      return "nt_bf16_to_float(" + ptr + "[" + offset + "])";
    case DType::boolean:
      return "(int)" + ptr + "[" + offset + "]";
    case DType::float8_e5m2:
    case DType::float8_e4m3fn:
      return float8_decode(p.dtype, ptr + "[" + offset + "]");
    default:
      return ptr + "[" + offset + "]";
  }
}

std::string Emitter::store_element(const Param& p, const std::string& ptr, const std::string& offset,
                                   const std::string& value) {
  switch (p.dtype) {
    case DType::float16:
      return "NT_STORE_HALF_GLOBAL((float)(" + value + "), " + offset + ", " + ptr + ");";
    case DType::bfloat16:
      return ptr + "[" + offset + "] = nt_float_to_bf16((float)(" + value + "));";
    case DType::boolean:
      return ptr + "[" + offset + "] = (uchar)((" + value + ") != 0);";
    case DType::float8_e5m2:
    case DType::float8_e4m3fn:
      return ptr + "[" + offset + "] = " + float8_encode(p.dtype, value) + ";";
    default:
      return ptr + "[" + offset + "] = " + value + ";";
  }
}

std::string Emitter::in_extent(int param, const std::string& offset) {
  std::string p = "nt_p" + std::to_string(param);
  return "((ulong)(" + offset + " + " + p + "_offset) < (ulong)" + p + "_extent)";
}

std::string Emitter::atomic_add_element(const Param& p, const std::string& ptr, const std::string& offset,
                                        const std::string& value) {
  std::string address = "&" + ptr + "[" + offset + "]";
  switch (p.dtype) {
    case DType::float32:
      return "nt_atomic_add_float(" + address + ", " + value + ");";
    case DType::float64:
      return "nt_atomic_add_double(" + address + ", " + value + ");";
    case DType::int64:
    case DType::uint64:
      return "atom_add(" + address + ", " + value + ");";
    default:
      return "atomic_add(" + address + ", " + value + ");";
  }
}

std::string Emitter::other_of(const Param& p) {
  const auto& other = p.arranged->other();
  if (!other) return c_literal(Expr(0), p.dtype);
  return c_literal(*other, p.dtype);
}

std::string Emitter::elem(const Value& v, const std::vector<Expr>& index) {
  auto m = materialized_.find(v.get());
  if (m != materialized_.end()) return element_of(m->second, v->type, index);
  const auto& ops = v->operands;
  std::string ct = compute_type(v->type.dtype);
  switch (v->kind) {
    case ValueKind::Constant:
      if (v->expr->kind == ExprKind::Int || v->expr->kind == ExprKind::Float ||
          v->expr->kind == ExprKind::Bool) {
        return c_literal(v->expr, v->type.dtype);
      }
      // A 64-bit value over sizes and strides (a stride, num_programs(), a size times a constant):
      // its symbols widened where read, so that its arithmetic is 64-bit whatever the index type
      // (nt_index: int under NT_INDEX32).
      return "(" + c(simplify(v->expr, env_), ct == "long" ? ct : "") + ")";
    case ValueKind::ScalarParam:
      return k_.params[v->param].constexpr_ ? "(" + constexpr_param_macro(v->param) + ")"
                                            : "nt_s" + std::to_string(v->param);
    case ValueKind::Load: {
      if (auto held = held_.find(load_key(v)); held != held_.end())
        return element_of(held->second, v->type, index);  // hold_loads()
      const Param& p = k_.params[v->param];
      loaded_params_.insert(v->param);
      const lower::TensorAccess& a = access_of(v);
      if (a.never) return other_of(p);
      std::string ptr = "nt_p" + std::to_string(v->param);
      std::string offset = c(simplify(a.offset_at(index), env_));
      std::string value = load_element(p, ptr, offset);
      std::string mask = mask_of(a, index);
      if (mask.empty()) return value;
      return "((" + mask + ") ? " + value + " : " + other_of(p) + ")";
    }
    case ValueKind::LoadAt: {
      const Param& p = k_.params[v->param];
      loaded_params_.insert(v->param);
      const lower::TensorAccess& a = access_of(v);
      if (a.never) return other_of(p);
      std::vector<Expr> at;
      std::string mask = block_positions(v->operands, v->axis, a, index, at);
      return "((" + mask + ") ? " +
             load_element(p, "nt_p" + std::to_string(v->param), c(simplify(a.offset_at(at), env_))) + " : " +
             other_of(p) + ")";
    }
    case ValueKind::LoopVar:  // int64 values, whatever the index arithmetic's type (nt_index)
      return "((long)" + loop_vars_.at(v->name) + ")";
    case ValueKind::LetRef:
      return element_of(lets_.at(v->id), v->type, index);
    case ValueKind::LocalRef:
      return element_of(locals_.at(v->id), v->type, index);
    case ValueKind::Arange:
      return "((int)(" + c(simplify(add(v->expr, index[0]), env_)) + "))";
    case ValueKind::Full:
      return elem(ops[0], {});
    case ValueKind::Unary:
      return unary_c(static_cast<UnaryFn>(v->op), elem(ops[0], index), v->type.dtype);
    case ValueKind::Binary:
      return binary_c(static_cast<BinaryFn>(v->op), elem(ops[0], index), elem(ops[1], index),
                      ops[0]->type.dtype);
    case ValueKind::Where:
      return "((" + elem(ops[0], index) + ") ? " + elem(ops[1], index) + " : " + elem(ops[2], index) + ")";
    case ValueKind::Cast: {
      std::string x = elem(ops[0], index);
      switch (v->type.dtype) {
        case DType::float16:
          return "nt_round_half((float)(" + x + "))";
        case DType::bfloat16:
          return "nt_round_bf16((float)(" + x + "))";
        case DType::boolean:
          return "((" + x + ") != 0)";
        case DType::float8_e5m2:
          return "nt_round_f8e5m2((float)(" + x + "))";
        case DType::float8_e4m3fn:
          return "nt_round_f8e4m3((float)(" + x + "))";
        default:
          return "((" + ct + ")(" + x + "))";
      }
    }
    case ValueKind::ExpandDims: {
      std::vector<Expr> inner = index;
      inner.erase(inner.begin() + v->axis);
      return elem(ops[0], inner);
    }
    case ValueKind::Broadcast: {
      std::vector<Expr> inner = index;
      for (size_t d = 0; d < inner.size(); ++d) {
        if (ops[0]->type.shape[d].is_int(1) && !v->type.shape[d].is_int(1)) inner[d] = Expr(0);
      }
      return elem(ops[0], inner);
    }
    case ValueKind::Trans:
      return elem(ops[0], {index[1], index[0]});
    case ValueKind::Fma:
      return "fma(" + elem(ops[0], index) + ", " + elem(ops[1], index) + ", " + elem(ops[2], index) + ")";
    case ValueKind::Offsets: {
      const lower::TensorAccess& a = access_of(v);
      std::vector<Expr> at = index;
      if (v->op != -1) {  // a 1-D block along block dim `op` (or a constant)
        at.assign(a.block_shape.size(), Expr(0));
        if (v->op >= 0) at[v->op] = index[0];
      }
      Expr e = v->axis < 0 ? a.offset_at(at) : a.coordinate_at(v->axis, at);
      return "((long)(" + c(simplify(e, env_)) + "))";
    }
    case ValueKind::PointerBase:
      return "0L";
    case ValueKind::Random:
      return std::string(v->op ? "nt_randn(" : "nt_rand(") + elem(ops[0], {}) + ", " + elem(ops[1], index) +
             ")";
    case ValueKind::LoadPointer: {
      const Param& p = k_.params[v->param];
      std::string ptr = "nt_p" + std::to_string(v->param);
      std::string offset = "(" + elem(ops[0], index) + ")";
      return "((" + elem(ops[1], index) + " && " + in_extent(v->param, offset) + ") ? " +
             load_element(p, ptr, offset) + " : " + elem(ops[2], index) + ")";
    }
    case ValueKind::ProgramId:
      return "((long)nt_pid_" + std::to_string(v->axis) + ")";
    case ValueKind::Call:
    case ValueKind::Rearrange:
    case ValueKind::CombineArg:
    case ValueKind::Extract:
      return block_op_element(*this, v, index);
    case ValueKind::Reduce:
    case ValueKind::Dot:
    case ValueKind::Combine:
    case ValueKind::Sort:
    case ValueKind::Gather:
    case ValueKind::Histogram:
      throw std::logic_error("codegen: reduction or dot not materialised");
  }
  return "0";
}

std::string Emitter::unary_c(UnaryFn fn, const std::string& x, DType dtype) {
  bool f = dtype_is_float(dtype);
  std::string one = dtype == DType::float64 ? "1.0" : "1.0f";
  switch (fn) {
    case UnaryFn::Neg:
      return "(-" + x + ")";
    case UnaryFn::Not:
      return "(!" + x + ")";
    case UnaryFn::BitNot:
      return "(~" + x + ")";
    case UnaryFn::Abs:
      return f ? "fabs(" + x + ")" : "(" + x + " < 0 ? -" + x + " : " + x + ")";
    case UnaryFn::Sigmoid:
      if (compute_type(dtype) == "float") return "(1.0f / (1.0f + nt_exp_f(-" + x + ")))";
      return "(" + one + " / (" + one + " + exp(-" + x + ")))";
    default:
      break;
  }
  if (compute_type(dtype) == "float") {
    std::string fast = float_unary_c(fn, x);
    if (!fast.empty()) return fast;
  }
  std::string arg = f ? x : "(float)" + x;
  return std::string(unary_fn_name(fn)) + "(" + arg + ")";
}

namespace {

// The value of a C integer literal, as the emitter writes them (`16`, `((int)(16))`, `-3L`); nothing
// for anything else.
std::optional<long long> integer_literal(const std::string& c) {
  // Only `int` and `long` casts, of values an int holds: a narrowing cast (`(char)(256)`) is no
  // longer the literal's value. (Scanned by hand: std::regex goes through the C++ locale, which
  // crashed in processes that had loaded torch on the GPU machine.)
  size_t i = 0;
  const size_t n = c.size();
  auto space = [&](size_t at) { return c[at] == ' ' || c[at] == '\t' || c[at] == '\n'; };
  auto starts = [&](const char* word) { return c.compare(i, std::strlen(word), word) == 0; };
  auto skip_open = [&] {
    while (i < n && (c[i] == '(' || space(i)) && !starts("(int)") && !starts("(long)")) ++i;
  };
  skip_open();
  if (starts("(int)") || starts("(long)")) {
    i += starts("(int)") ? 5 : 6;
    skip_open();
  }
  const bool negative = i < n && c[i] == '-';
  if (negative) ++i;
  long long value = 0;
  size_t digits = 0;
  for (; i < n && c[i] >= '0' && c[i] <= '9'; ++i, ++digits) value = value * 10 + (c[i] - '0');
  if (digits == 0 || digits > 10) return std::nullopt;
  if (i < n && (c[i] == 'L' || c[i] == 'l')) ++i;
  for (; i < n; ++i)
    if (c[i] != ')' && !space(i)) return std::nullopt;
  if (negative) value = -value;
  if (value < INT32_MIN || value > INT32_MAX) return std::nullopt;
  return value;
}

}  // namespace

std::string Emitter::integer_division(bool remainder, const std::string& a, const std::string& b,
                                      DType operand) {
  std::string t = compute_type(operand);
  // A literal divisor other than 0 and -1 needs no guard (and a guard of constants is a compiler
  // warning: "use of logical '||' with constant operand").
  if (auto d = integer_literal(b); d && *d != 0 && *d != -1)
    return "((" + a + ")" + (remainder ? " % " : " / ") + "(" + b + "))";
  if (!dtype_is_signed(operand)) {
    return "((" + b + ") == 0 ? " + (remainder ? "(" + t + ")0" : "(" + a + ")") + " : (" + a + ")" +
           (remainder ? " % " : " / ") + "(" + b + "))";
  }
  if (remainder) return "((" + b + ") == 0 || (" + b + ") == -1 ? (" + t + ")0 : (" + a + ") % (" + b + "))";
  return "((" + b + ") == 0 ? (" + a + ") : (" + b + ") == -1 ? (" + t + ")((u" + t + ")0 - (u" + t + ")(" +
         a + ")) : (" + a + ") / (" + b + "))";
}

std::string Emitter::binary_c(BinaryFn fn, const std::string& a, const std::string& b, DType operand) {
  bool f = dtype_is_float(operand);
  switch (fn) {
    case BinaryFn::Div:
      return f ? "(" + a + " / " + b + ")" : integer_division(false, a, b, operand);
    case BinaryFn::FloorDiv:
      return f ? "floor(" + a + " / " + b + ")" : integer_division(false, a, b, operand);
    case BinaryFn::Mod:
      return f ? "fmod(" + a + ", " + b + ")" : integer_division(true, a, b, operand);
    case BinaryFn::Maximum:
      return std::string(f ? "fmax(" : "max(") + a + ", " + b + ")";
    case BinaryFn::Minimum:
      return std::string(f ? "fmin(" : "min(") + a + ", " + b + ")";
    case BinaryFn::Pow:
      return "pow(" + a + ", " + b + ")";
    case BinaryFn::LogicalAnd:
      return "(" + a + " && " + b + ")";
    case BinaryFn::LogicalOr:
      return "(" + a + " || " + b + ")";
    default:
      return "(" + a + " " + binary_fn_name(fn) + " " + b + ")";
  }
}

}  // namespace nt::codegen
