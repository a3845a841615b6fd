// Blocks over flattened rows, in runs of consecutive rows (Mode::WorkItem; emitter.h,
// pack_row_runs() and store_row_runs()).
//
// In: a 2-D float32 block whose element (m, k) lies at R(m) + C(k), R dividing m (a flattened
// dimension: an implicit GEMM's output positions (n, p, q)): a dot's `a` operand (with masks of
// its own: the padding) or the target of a store (the GEMM's output). Out: for each chunk of
// 16 rows, a run-time check that R is consecutive over the chunk (16 output positions along
// one output row); then, per k, one loop over the chunk's rows at `R(m0) + C(k) + (m - m0)`,
// which the C compiler makes one (masked) vector load or store; chunks that are not such a
// run, element by element:
//
//   for (long m0 = 0; m0 < M; m0 += 16) {
//     long nt_rbase = 0;
//     int nt_run = m0 + 16 <= M;
//     if (nt_run) for (long m = m0; m < m0 + 16; ++m) {   // R(m0) + (m - m0) == R(m)?
//       const long nt_row = R(m);
//       if (m == m0) nt_rbase = nt_row;
//       nt_run &= nt_row == nt_rbase + (m - m0);
//     }
//     if (nt_run) {
//       for (long k = 0; k < K; ++k) {
//         const long nt_base = nt_rbase + C(k);
//         for (long m = m0; m < m0 + 16; ++m) <element (m, k) at nt_base + (m - m0)>;
//       }
//     } else {
//       for (long m = m0; m < min(m0 + 16, M); ++m) for (long k = 0; k < K; ++k) <element (m, k)>;
//     }
//   }
//
// The operand is packed column-major (a[k][m], emit_dot_kernel()'s `a_k_major`), so that a
// run's 16 elements are consecutive there too. Blocks that leave the tensor take the
// element-wise nest.
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "codegen/c/emitter.h"

namespace nt::codegen {

namespace {

bool uses(const Expr& e, const std::string& name) {
  for (const Expr& v : collect_vars(e)) {
    if (v->name == name) return true;
  }
  return false;
}

// `e` as R + C, R free of `k` and C free of `m`; nullopt where a term uses both.
std::optional<std::pair<Expr, Expr>> split_sum(const Expr& e, const std::string& m, const std::string& k) {
  if (!uses(e, k)) return std::make_pair(e, Expr(0));
  if (!uses(e, m)) return std::make_pair(Expr(0), e);
  if (e->kind == ExprKind::Unary && e->unary_op == UnaryOp::Neg) {
    auto a = split_sum(e->operands[0], m, k);
    if (!a) return std::nullopt;
    return std::make_pair(neg(a->first), neg(a->second));
  }
  if (e->kind != ExprKind::Binary) return std::nullopt;
  const Expr &x = e->operands[0], &y = e->operands[1];
  switch (e->binary_op) {
    case BinaryOp::Add:
    case BinaryOp::Sub: {
      auto a = split_sum(x, m, k), b = split_sum(y, m, k);
      if (!a || !b) return std::nullopt;
      if (e->binary_op == BinaryOp::Add)
        return std::make_pair(add(a->first, b->first), add(a->second, b->second));
      return std::make_pair(sub(a->first, b->first), sub(a->second, b->second));
    }
    case BinaryOp::Mul: {
      // A factor free of both index variables scales each part.
      const bool x_free = !uses(x, m) && !uses(x, k);
      if (!x_free && (uses(y, m) || uses(y, k))) return std::nullopt;
      const Expr& factor = x_free ? x : y;
      auto a = split_sum(x_free ? y : x, m, k);
      if (!a) return std::nullopt;
      return std::make_pair(mul(a->first, factor), mul(a->second, factor));
    }
    default:
      return std::nullopt;
  }
}

// The loop header over the 16 rows of the chunk from row m0.
std::string chunk_loop(const Expr& m, const std::string& m0) {
  return "long " + m->name + " = " + m0 + "; " + m->name + " < " + m0 + " + 16; ++" + m->name;
}

}  // namespace

std::optional<std::pair<Expr, Expr>> Emitter::row_run_parts(const Expr& offset, const Expr& m,
                                                            const Expr& k) {
  auto parts = split_sum(offset, m->name, k->name);
  // Rows affine in m are the other paths' (row-major, or transposed where m is unit-stride).
  if (!parts || coefficient(offset, m->name)) return std::nullopt;
  return std::make_pair(simplify(parts->first, env_), simplify(parts->second, env_));
}

void Emitter::row_run_chunks(const std::vector<Expr>& shape, const Expr& m, const Expr& k,
                             const std::pair<Expr, Expr>& parts,
                             const std::function<void(const std::string& at)>& run,
                             const std::function<void()>& each) {
  with_index_tables(shape, [&] {
    tables_.set_index({m->name, k->name});
    const std::string M = c(simplify(shape[0], env_)), K = c(simplify(shape[1], env_));
    const std::string m0 = fresh("nt_m0"), rbase = fresh("nt_rbase"), ok = fresh("nt_run");
    const std::string row = fresh("nt_row");
    const std::string ks = "long " + k->name + " = 0; " + k->name + " < " + K + "; ++" + k->name;
    open("for (long " + m0 + " = 0; " + m0 + " < " + M + "; " + m0 + " += 16)");
    line_("long " + rbase + " = 0;");
    line_("int " + ok + " = " + m0 + " + 16 <= " + M + ";");
    open("if (" + ok + ") for (" + chunk_loop(m, m0) + ")");
    line_("const long " + row + " = " + c(parts.first) + ";");
    line_("if (" + m->name + " == " + m0 + ") " + rbase + " = " + row + ";");
    line_(ok + " &= " + row + " == " + rbase + " + (" + m->name + " - " + m0 + ");");
    close();
    open("if (" + ok + ")");
    open("for (" + ks + ")");
    const std::string base = fresh("nt_base");
    line_("const long " + base + " = " + rbase + " + " + c(parts.second) + ";");
    emit_vector_hint("defined(__clang__)", /*wide=*/false);
    open("for (" + chunk_loop(m, m0) + ")");
    run(base + " + (" + m->name + " - " + m0 + ")");
    close();
    close();
    close("} else {");
    ++indent_;
    // Element by element in the nest's own order (rows outer), as before the runs.
    open("for (long " + m->name + " = " + m0 + "; " + m->name + " < min(" + m0 + " + 16L, (long)(" + M +
         ")); ++" + m->name + ")");
    open("for (" + ks + ")");
    each();
    close();
    close();
    close();
    close();
  });
}

std::string Emitter::pack_row_runs(const Value& v, DType dtype) {
  if (group_ || distribute_ || v->kind != ValueKind::Load || v->type.shape.size() != 2) return "";
  const Param& p = k_.params[v->param];
  if (p.dtype != DType::float32 || compute_type(dtype) != "float") return "";
  const std::vector<Expr>& shape = v->type.shape;
  if (!is_compile_time(shape[0]) || !is_compile_time(shape[1])) return "";
  const lower::TensorAccess& a = access_of(v);
  if (a.never) return "";
  Expr m = index_variable("e", shape[0]), k = index_variable("e", shape[1]);
  auto parts = row_run_parts(simplify(a.offset_at({m, k}), env_), m, k);
  if (!parts) return "";
  loaded_params_.insert(v->param);
  const std::string name = fresh("nt_op");
  new_array(name, shape, dtype, "a dot operand");

  const std::string M = c(simplify(shape[0], env_));
  const std::string ct = compute_type(dtype), ptr = "nt_p" + std::to_string(v->param);
  auto store = [&](const std::vector<Expr>& i, const std::string& value) {
    line_(name + "[" + c(i[1]) + " * " + M + " + " + c(i[0]) + "] = (" + ct + ")(" + value + ");");
  };
  auto runs = [&] {
    row_run_chunks(
        shape, m, k, *parts,
        [&](const std::string& at) {
          std::string value = load_element(p, ptr, at);
          std::string mask = mask_of(a, {m, k});
          store({m, k}, mask.empty() ? value : "((" + mask + ") ? " + value + " : " + other_of(p) + ")");
        },
        [&] {
          store({m, k}, elem(v, {m, k}));
        });
  };
  barrier();
  nest(
      shape, {v}, nullptr, [&](const std::vector<Expr>& i) { store(i, elem(v, i)); }, /*hint=*/false, runs);
  barrier();
  return name;
}

std::function<void()> Emitter::store_row_runs(const Param& p, const lower::TensorAccess& a,
                                              const Value& value, const std::vector<Expr>& shape,
                                              const std::string& ptr) {
  if (group_ || distribute_ || shape.size() != 2 || p.dtype != DType::float32) return nullptr;
  if (!is_compile_time(shape[0]) || !is_compile_time(shape[1])) return nullptr;
  Expr m = index_variable("e", shape[0]), n = index_variable("e", shape[1]);
  auto parts = row_run_parts(simplify(a.offset_at({m, n}), env_), m, n);
  if (!parts) return nullptr;
  return [=, this] {
    auto store = [&](const std::string& offset) {
      std::string s = store_element(p, ptr, offset, elem(value, {m, n}));
      std::string mask = mask_of(a, {m, n});
      line_(mask.empty() ? s : "if (" + mask + ") " + s);
    };
    row_run_chunks(
        shape, m, n, *parts, [&](const std::string& at) { store(at); },
        [&] {
          store(c(simplify(a.offset_at({m, n}), env_)));
        });
  };
}

}  // namespace nt::codegen
