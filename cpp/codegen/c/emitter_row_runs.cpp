// Which blocks go in runs of consecutive flattened rows (Mode::WorkItem; emitter.h, pack_row_runs()
// and store_row_runs()), and what their elements are; the runs' loops are row_runs.h's.
//
// In: a 2-D float32 block whose element (m, k) lies at R(m) + C(k), R dividing m (a flattened
// dimension: an implicit GEMM's output positions (n, p, q)): a dot's `a` operand (with masks of
// its own: the padding) or the target of a store (the GEMM's output). Out: the chunks of 16 rows of
// write_row_run_chunks(), inside index tables for the block. The operand is packed column-major
// (a[k][m], emit_dot_kernel()'s `a_k_major`), so that a run's 16 elements are consecutive there
// too. Blocks that leave the tensor take the element-wise nest.
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "codegen/c/emitter.h"
#include "codegen/c/row_runs.h"

namespace nt::codegen {

std::optional<std::pair<Expr, Expr>> Emitter::row_run_parts(const Expr& offset, const Expr& m,
                                                            const Expr& k) {
  auto parts = split_row_run(offset, m->name, k->name);
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
    RowRunChunks chunks;
    chunks.m = m->name;
    chunks.k = k->name;
    chunks.rows = c(simplify(shape[0], env_));
    chunks.columns = c(simplify(shape[1], env_));
    chunks.fresh = [&](const std::string& prefix) { return fresh(prefix); };
    chunks.row_part = [&] { return c(parts.first); };
    chunks.column_part = [&] { return c(parts.second); };
    chunks.hint = [&] { emit_vector_hint("defined(__clang__)", /*wide=*/false); };
    chunks.run = run;
    chunks.each = each;
    write_row_run_chunks(*this, chunks);
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
