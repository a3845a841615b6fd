#include "codegen/c/row_runs.h"

namespace nt::codegen {

std::optional<std::pair<Expr, Expr>> split_row_run(const Expr& e, const std::string& m,
                                                   const std::string& k) {
  if (!mentions(e, k)) return std::make_pair(e, Expr(0));
  if (!mentions(e, m)) return std::make_pair(Expr(0), e);
  if (e->kind == ExprKind::Unary && e->unary_op == UnaryOp::Neg) {
    auto a = split_row_run(e->operands[0], m, k);
    if (!a) return std::nullopt;
    return std::make_pair(neg(a->first), neg(a->second));
  }
  if (e->kind != ExprKind::Binary) return std::nullopt;
  const Expr &x = e->operands[0], &y = e->operands[1];
  switch (e->binary_op) {
    case BinaryOp::Add:
    case BinaryOp::Sub: {
      auto a = split_row_run(x, m, k), b = split_row_run(y, m, k);
      if (!a || !b) return std::nullopt;
      if (e->binary_op == BinaryOp::Add)
        return std::make_pair(add(a->first, b->first), add(a->second, b->second));
      return std::make_pair(sub(a->first, b->first), sub(a->second, b->second));
    }
    case BinaryOp::Mul: {
      // A factor free of both index variables scales each part.
      const bool x_free = !mentions(x, m) && !mentions(x, k);
      if (!x_free && (mentions(y, m) || mentions(y, k))) return std::nullopt;
      const Expr& factor = x_free ? x : y;
      auto a = split_row_run(x_free ? y : x, m, k);
      if (!a) return std::nullopt;
      return std::make_pair(mul(a->first, factor), mul(a->second, factor));
    }
    default:
      return std::nullopt;
  }
}

void write_row_run_chunks(CodeWriter& out, const RowRunChunks& t) {
  const std::string &m = t.m, &k = t.k, &M = t.rows, &K = t.columns;
  const std::string m0 = t.fresh("nt_m0"), rbase = t.fresh("nt_rbase"), ok = t.fresh("nt_run");
  const std::string row = t.fresh("nt_row");
  const std::string ks = "long " + k + " = 0; " + k + " < " + K + "; ++" + k;
  // The loop header over the 16 rows of the chunk.
  const std::string chunk = "long " + m + " = " + m0 + "; " + m + " < " + m0 + " + 16; ++" + m;
  out.emit_open("for (long " + m0 + " = 0; " + m0 + " < " + M + "; " + m0 + " += 16)");
  out.emit_line("long " + rbase + " = 0;");
  out.emit_line("int " + ok + " = " + m0 + " + 16 <= " + M + ";");
  out.emit_open("if (" + ok + ") for (" + chunk + ")");
  out.emit_line("const long " + row + " = " + t.row_part() + ";");
  out.emit_line("if (" + m + " == " + m0 + ") " + rbase + " = " + row + ";");
  out.emit_line(ok + " &= " + row + " == " + rbase + " + (" + m + " - " + m0 + ");");
  out.emit_close();
  out.emit_open("if (" + ok + ")");
  out.emit_open("for (" + ks + ")");
  const std::string base = t.fresh("nt_base");
  out.emit_line("const long " + base + " = " + rbase + " + " + t.column_part() + ";");
  t.hint();
  out.emit_open("for (" + chunk + ")");
  t.run(base + " + (" + m + " - " + m0 + ")");
  out.emit_close();
  out.emit_close();
  out.emit_else();
  // Element by element in the nest's own order (rows outer), as before the runs.
  out.emit_open("for (long " + m + " = " + m0 + "; " + m + " < min(" + m0 + " + 16L, (long)(" + M + ")); ++" +
                m + ")");
  out.emit_open("for (" + ks + ")");
  t.each();
  out.emit_close();
  out.emit_close();
  out.emit_close();
  out.emit_close();
}

}  // namespace nt::codegen
