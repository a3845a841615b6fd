#include "codegen/c/block_ops.h"

#include <stdexcept>

#include "codegen/c/c_types.h"
#include "codegen/c/math_calls.h"
#include "symbolic/simplify.h"

namespace nt::codegen {

using namespace nt::ir;

namespace {

Expr loop_var(const std::string& name) {
  SymbolAttrs attrs;
  attrs.lower_bound = 0;
  return var(name, attrs);
}

std::vector<Expr> row_major_strides(const std::vector<Expr>& shape) {
  std::vector<Expr> strides(shape.size(), Expr(1));
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = simplify(mul(strides[d], shape[d]));
  return strides;
}

// The element of `v` at `index` for a Rearrange: the operand element it comes from.
std::string rearrange_element(EmitContext& ctx, const Value& v, const std::vector<Expr>& index) {
  const auto& ops = v->operands;
  switch (static_cast<RearrangeFn>(v->op)) {
    case RearrangeFn::Reshape: {
      const std::vector<Expr>& in_shape = ops[0]->type.shape;
      Expr flat = Expr(0);
      for (size_t d = 0; d < index.size(); ++d) flat = add(mul(flat, v->type.shape[d]), index[d]);
      std::vector<Expr> strides = row_major_strides(in_shape), in(in_shape.size());
      for (size_t d = 0; d < in_shape.size(); ++d) {
        Expr i = d == 0 ? floordiv(flat, strides[d]) : mod(floordiv(flat, strides[d]), in_shape[d]);
        in[d] = simplify(i);
      }
      return ctx.element(ops[0], in);
    }
    case RearrangeFn::Permute: {
      std::vector<Expr> in(index.size());
      for (size_t d = 0; d < index.size(); ++d) in[v->ints[d]] = index[d];
      return ctx.element(ops[0], in);
    }
    case RearrangeFn::Flip: {
      std::vector<Expr> in = index;
      int d = v->ints[0];
      in[d] = sub(sub(v->type.shape[d], 1), index[d]);
      return ctx.element(ops[0], in);
    }
    case RearrangeFn::Cat: {
      const Expr& n0 = ops[0]->type.shape[0];
      std::vector<Expr> in_b = index;
      in_b[0] = sub(index[0], n0);
      return "((" + ctx.index_c(lt(index[0], n0)) + ") ? " + ctx.element(ops[0], index) + " : " +
             ctx.element(ops[1], in_b) + ")";
    }
    case RearrangeFn::Join: {
      std::vector<Expr> in(index.begin(), index.end() - 1);
      Expr k = simplify(index.back());
      if (auto known = k.as_int()) return ctx.element(ops[*known == 0 ? 0 : 1], in);
      return "((" + ctx.index_c(k) + ") == 0 ? " + ctx.element(ops[0], in) + " : " + ctx.element(ops[1], in) +
             ")";
    }
    case RearrangeFn::Take: {
      std::vector<Expr> in = index;
      in.push_back(Expr(v->ints[0]));
      return ctx.element(ops[0], in);
    }
  }
  throw std::logic_error("codegen: unknown rearrangement");
}

std::string element_of(EmitContext& ctx, const std::string& name, const Type& type,
                       const std::vector<Expr>& index) {
  if (type.is_scalar()) return name;
  return name + "[" + ctx.flat_c(type.shape, index) + "]";
}

// --- Combine: reductions and scans with a combine function -----------------------------------

void emit_combine(EmitContext& ctx, const Value& g) {
  size_t n = g->operands.size();
  bool scan = g->op == 1, reverse = !g->ints.empty() && g->ints[0];
  const std::vector<Expr>& shape = g->operands[0]->type.shape;
  int axis = g->axis;
  std::string base = ctx.fresh_name("nt_comb");
  std::vector<std::string> inputs, outputs, types;
  // The outputs' shape (the Extracts' shapes, before keep_dims).
  std::vector<Expr> out_shape;
  if (scan) out_shape = shape;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!scan && axis >= 0 && static_cast<int>(d) != axis) out_shape.push_back(shape[d]);
  }
  for (size_t k = 0; k < n; ++k) {
    const Value& x = g->operands[k];
    types.push_back(compute_type(x->type.dtype));
    inputs.push_back(ctx.array_of(x, x->type.dtype, "an input of a reduction or scan"));
    std::string name = base + "_" + std::to_string(k);
    if (out_shape.empty()) {
      ctx.declare_scalar(name, x->type.dtype);
    } else {
      ctx.declare_array(name, out_shape, x->type.dtype, "a reduction or scan result");
    }
    outputs.push_back(name);
  }
  // One fold over the combined axis (all dims when axis < 0) per kept index.
  std::vector<Expr> kept;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (axis >= 0 && static_cast<int>(d) != axis) kept.push_back(shape[d]);
  }
  Expr length = axis >= 0 ? shape[axis] : Expr(1);
  if (axis < 0) {
    for (const Expr& s : shape) length = mul(length, s);
  }
  ctx.each_index(kept, [&](const std::vector<Expr>& outer) {
    std::string r = ctx.fresh_name("nt_r"), i = ctx.fresh_name("nt_ri");
    auto full_index = [&](const Expr& along) {
      if (axis < 0) return std::vector<Expr>{along};
      std::vector<Expr> index = outer;
      index.insert(index.begin() + axis, along);
      return index;
    };
    auto input_at = [&](size_t k, const Expr& along) {
      if (axis < 0) return inputs[k] + "[" + ctx.index_c(along) + "]";
      return inputs[k] + "[" + ctx.flat_c(shape, full_index(along)) + "]";
    };
    std::vector<std::string> acc, x;
    for (size_t k = 0; k < n; ++k) {
      acc.push_back(ctx.fresh_name("nt_acc"));
      x.push_back(ctx.fresh_name("nt_x"));
      ctx.emit_line(types[k] + " " + acc[k] + ";");
    }
    std::string len = ctx.index_c(simplify(length));
    ctx.emit_open("for (nt_index " + r + " = 0; " + r + " < " + len + "; ++" + r + ")");
    ctx.emit_line("const nt_index " + i + " = " + (reverse ? len + " - 1 - " + r : r) + ";");
    Expr along = loop_var(i);
    for (size_t k = 0; k < n; ++k)
      ctx.emit_line("const " + types[k] + " " + x[k] + " = " + input_at(k, along) + ";");
    ctx.emit_open("if (" + r + " == 0)");
    for (size_t k = 0; k < n; ++k) ctx.emit_line(acc[k] + " = " + x[k] + ";");
    ctx.emit_close();
    ctx.emit_open("else");
    std::vector<std::string> args = acc;
    args.insert(args.end(), x.begin(), x.end());
    ctx.set_combine_args(args);
    std::vector<std::string> next;
    for (size_t k = 0; k < n; ++k) {
      next.push_back(ctx.fresh_name("nt_next"));
      ctx.emit_line("const " + types[k] + " " + next[k] + " = " + ctx.element(g->combine[k], {}) + ";");
    }
    ctx.set_combine_args({});
    for (size_t k = 0; k < n; ++k) ctx.emit_line(acc[k] + " = " + next[k] + ";");
    ctx.emit_close();
    if (scan) {
      for (size_t k = 0; k < n; ++k)
        ctx.emit_line(outputs[k] + "[" + ctx.flat_c(shape, full_index(along)) + "] = " + acc[k] + ";");
    }
    ctx.emit_close();
    if (!scan) {
      for (size_t k = 0; k < n; ++k) {
        std::string target =
            out_shape.empty() ? outputs[k] : outputs[k] + "[" + ctx.flat_c(out_shape, outer) + "]";
        ctx.emit_line(target + " = " + acc[k] + ";");
      }
    }
  });
  ctx.set_materialized(g, base);
}

std::string extract_element(EmitContext& ctx, const Value& v, const std::vector<Expr>& index) {
  const Value& g = v->operands[0];
  std::string name = ctx.materialized_name(g);
  if (name.empty()) throw std::logic_error("codegen: a combine read before it was computed");
  name += "_" + std::to_string(v->op);
  if (g->op == 1) return element_of(ctx, name, v->type, index);  // scan: the input's shape
  // A reduction: drop the reduced dims kept as size 1.
  std::vector<Expr> out_index;
  if (g->axis >= 0) {
    for (size_t d = 0; d < index.size(); ++d) {
      if (!(g->keep_dims && static_cast<int>(d) == g->axis)) out_index.push_back(index[d]);
    }
    std::vector<Expr> out_shape;
    for (size_t d = 0; d < g->operands[0]->type.shape.size(); ++d) {
      if (static_cast<int>(d) != g->axis) out_shape.push_back(g->operands[0]->type.shape[d]);
    }
    if (out_shape.empty()) return name;
    return name + "[" + ctx.flat_c(out_shape, out_index) + "]";
  }
  return name;
}

// --- Sort and top-k ---------------------------------------------------------------------------

void emit_sort(EmitContext& ctx, const Value& v) {
  const Value& x = v->operands[0];
  DType dtype = x->type.dtype;
  std::string ct = compute_type(dtype);
  const std::vector<Expr>& shape = x->type.shape;
  int axis = v->axis;
  std::string in = ctx.array_of(x, dtype, "a sorted block");
  std::string out = ctx.fresh_name("nt_sorted"), a = ctx.fresh_name("nt_sort_a"),
              b = ctx.fresh_name("nt_sort_b");
  ctx.declare_array(out, v->type.shape, dtype, "a sorted block");
  ctx.declare_scratch(a, {shape[axis]}, dtype, "a sorted row");
  ctx.declare_scratch(b, {shape[axis]}, dtype, "a sorted row");
  std::vector<Expr> kept;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (static_cast<int>(d) != axis) kept.push_back(shape[d]);
  }
  std::string n = ctx.index_c(simplify(shape[axis]));
  std::string before = v->op ? ">" : "<";
  ctx.each_index(kept, [&](const std::vector<Expr>& outer) {
    auto at = [&](const std::vector<Expr>& s, const std::string& i) {
      std::vector<Expr> index = outer;
      index.insert(index.begin() + axis, loop_var(i));
      return ctx.flat_c(s, index);
    };
    ctx.emit_open("");
    const std::string priv(ctx.dialect().private_pointer);
    ctx.emit_line(priv + ct + "* nt_src = " + a + ";");
    ctx.emit_line(priv + ct + "* nt_dst = " + b + ";");
    ctx.emit_line("for (nt_index nt_i = 0; nt_i < " + n + "; ++nt_i) nt_src[nt_i] = " + in + "[" +
                  at(shape, "nt_i") + "];");
    ctx.emit_open("for (nt_index nt_w = 1; nt_w < " + n + "; nt_w *= 2)");
    ctx.emit_open("for (nt_index nt_lo = 0; nt_lo < " + n + "; nt_lo += 2 * nt_w)");
    ctx.emit_line("const nt_index nt_mid = nt_min(nt_lo + nt_w, " + n +
                  "), nt_hi = nt_min(nt_lo + 2 * nt_w, " + n + ");");
    ctx.emit_line("long nt_p = nt_lo, nt_q = nt_mid, nt_o = nt_lo;");
    ctx.emit_line("while (nt_p < nt_mid && nt_q < nt_hi) nt_dst[nt_o++] = (nt_src[nt_q] " + before +
                  " nt_src[nt_p]) ? nt_src[nt_q++] : nt_src[nt_p++];");
    ctx.emit_line("while (nt_p < nt_mid) nt_dst[nt_o++] = nt_src[nt_p++];");
    ctx.emit_line("while (nt_q < nt_hi) nt_dst[nt_o++] = nt_src[nt_q++];");
    ctx.emit_close();
    ctx.emit_line(priv + ct + "* nt_t = nt_src; nt_src = nt_dst; nt_dst = nt_t;");
    ctx.emit_close();
    std::string k = ctx.index_c(simplify(v->type.shape[axis]));
    ctx.emit_line("for (nt_index nt_i = 0; nt_i < " + k + "; ++nt_i) " + out + "[" +
                  at(v->type.shape, "nt_i") + "] = nt_src[nt_i];");
    ctx.emit_close();
  });
  ctx.set_materialized(v, out);
}

// --- Gather and histogram ---------------------------------------------------------------------

void emit_gather(EmitContext& ctx, const Value& v) {
  const Value& src = v->operands[0];
  const Value& index = v->operands[1];
  std::string in = ctx.array_of(src, src->type.dtype, "a gathered block");
  std::string out = ctx.fresh_name("nt_gathered");
  ctx.declare_array(out, v->type.shape, v->type.dtype, "a gather result");
  const std::vector<Expr>& shape = src->type.shape;
  std::vector<Expr> strides = row_major_strides(shape);
  std::string n = ctx.index_c(simplify(shape[v->axis]));
  ctx.each_index(index->type.shape, [&](const std::vector<Expr>& i) {
    std::string g = ctx.fresh_name("nt_g");
    ctx.emit_line("const nt_index " + g + " = clamp((long)(" + ctx.element(index, i) + "), 0L, (long)(" + n +
                  ") - 1);");
    std::string flat;
    for (size_t d = 0; d < shape.size(); ++d) {
      std::string term = static_cast<int>(d) == v->axis ? g : ctx.index_c(i[d]);
      flat += (d ? " + " : "") + term + " * " + ctx.index_c(strides[d]);
    }
    ctx.emit_line(out + "[" + ctx.flat_c(v->type.shape, i) + "] = " + in + "[" + flat + "];");
  });
  ctx.set_materialized(v, out);
}

void emit_histogram(EmitContext& ctx, const Value& v) {
  const Value& x = v->operands[0];
  const Value& mask = v->operands[1];
  std::string out = ctx.fresh_name("nt_hist");
  ctx.declare_array(out, v->type.shape, DType::int32, "a histogram");
  std::string bins = std::to_string(v->ints[0]);
  ctx.emit_line("for (nt_index nt_b = 0; nt_b < " + bins + "; ++nt_b) " + out + "[nt_b] = 0;");
  ctx.each_index(x->type.shape, [&](const std::vector<Expr>& i) {
    std::string h = ctx.fresh_name("nt_h");
    ctx.emit_line("const long " + h + " = " + ctx.element(x, i) + ";");  // data: wide, then tested
    ctx.emit_line("if ((" + ctx.element(mask, i) + ") && " + h + " >= 0 && " + h + " < " + bins + ") ++" +
                  out + "[" + h + "];");
  });
  ctx.set_materialized(v, out);
}

}  // namespace

bool is_block_op_element(ValueKind kind) {
  return kind == ValueKind::Call || kind == ValueKind::Rearrange || kind == ValueKind::CombineArg ||
         kind == ValueKind::Extract;
}

std::string block_op_element(EmitContext& ctx, const Value& v, const std::vector<Expr>& index) {
  switch (v->kind) {
    case ValueKind::Call: {
      std::vector<std::string> args;
      for (const Value& o : v->operands) args.push_back(ctx.element(o, index));
      return call_c(*v, args);
    }
    case ValueKind::Rearrange:
      return rearrange_element(ctx, v, index);
    case ValueKind::CombineArg:
      return ctx.combine_arg(v->axis);
    case ValueKind::Extract:
      return extract_element(ctx, v, index);
    default:
      throw std::logic_error("codegen: a block operation not materialised");
  }
}

bool is_materialized_block_op(ValueKind kind) {
  return kind == ValueKind::Combine || kind == ValueKind::Sort || kind == ValueKind::Gather ||
         kind == ValueKind::Histogram;
}

void materialize_block_op(EmitContext& ctx, const Value& v) {
  switch (v->kind) {
    case ValueKind::Combine:
      return emit_combine(ctx, v);
    case ValueKind::Sort:
      return emit_sort(ctx, v);
    case ValueKind::Gather:
      return emit_gather(ctx, v);
    case ValueKind::Histogram:
      return emit_histogram(ctx, v);
    default:
      throw std::logic_error("codegen: not a materialised block operation");
  }
}

}  // namespace nt::codegen
