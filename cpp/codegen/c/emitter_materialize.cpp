#include <algorithm>
#include <cctype>
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

void Emitter::materialize_parts(const Value& v) {
  if (materialized_.count(v.get())) return;
  for (const Value& o : v->operands) materialize_parts(o);
  if (v->kind == ValueKind::LoadAt) access_of(v);  // its level indices, declared outside the nests
  if (v->kind == ValueKind::Reduce) emit_reduce(v);
  if (is_materialized_block_op(v->kind)) {
    distributable_ = false;
    on_first_work_item([&] { materialize_block_op(*this, v); });
  }
  if (v->kind == ValueKind::Dot) {
    std::string name = fresh("nt_dot");
    new_array(name, v->type.shape, v->type.dtype, "a dot result", node_key(v));
    emit_dot(v, name, /*accumulate=*/false);
    materialized_[v.get()] = name;
  }
}

std::string Emitter::held_array(const Value& v, DType dtype) {
  std::string found;
  auto m = materialized_.find(v.get());
  if (m != materialized_.end() && v->type.dtype == dtype) found = m->second;
  if (v->kind == ValueKind::LetRef && compute_type(v->type.dtype) == compute_type(dtype))
    found = lets_.at(v->id);
  if (v->kind == ValueKind::LocalRef && compute_type(v->type.dtype) == compute_type(dtype))
    found = locals_.at(v->id);
  if (found.empty()) return "";
  auto d = distributed_.find(found);
  if (d == distributed_.end()) return found;
  misaligned_.insert(d->second);  // read whole, not where it is held
  return "";
}

std::string Emitter::as_array(const Value& v, DType dtype, const std::string& what) {
  if (std::string found = held_array(v, dtype); !found.empty()) return found;
  std::string name = fresh("nt_op");
  new_array(name, v->type.shape, dtype, what);
  pack_into(v, dtype, name);
  return name;
}

void Emitter::pack_into(const Value& v, DType dtype, const std::string& name) {
  auto copy = [&](const std::vector<Expr>& i) {
    line_(name + "[" + c(flat_index(v->type.shape, i)) + "] = (" + compute_type(dtype) + ")(" + elem(v, i) +
          ");");
  };
  if (pack_transposed(v, dtype, name, copy)) return;
  barrier();
  nest(v->type.shape, {v}, nullptr, copy, /*hint=*/true, nullptr, /*prefetch=*/false, /*strips=*/false,
       /*reorder=*/true);
  barrier();
}

std::string Emitter::as_shared_array(const Value& v, DType dtype, const std::string& what, bool& shared) {
  shared = false;
  if (group_ || distribute_ || !d_.work_item_form || v->kind != ValueKind::Load ||
      !held_array(v, dtype).empty() || k_.own_programs.count(v->param) ||
      shared_kernel_.stored.count(v->param))
    return as_array(v, dtype, what);
  std::vector<Expr> middle;
  for (const Value& index : v->operands) middle.push_back(index_expr(index));
  const std::optional<SharedSlot> slot =
      shared_slot(access_of(v), k_.params[v->param], layout_, middle, shared_kernel_.uniform);
  if (!slot) return as_array(v, dtype, what);
  shared = true;
  const std::string type = compute_type(dtype), name = fresh("nt_op");
  new_array(name, v->type.shape, dtype, what);
  Expr elements = Expr(1);
  for (const Expr& size : v->type.shape) elements = mul(elements, size);
  const Workspace::Region region = workspace_.add(slot->count, mul(elements, Expr(c_size(type))));
  const std::string at = name + "_at", mode = fresh("nt_shared"), flag = fresh("nt_flag");
  const std::string index = c(simplify(slot->index, env_));
  // On a CPU the packed block is read through a global pointer: the slot, or the private array
  // (PoCL's CPU devices address both alike) where the block is not shared at this launch.
  line_("// " + at + ": " + name +
        ", or the block packed once for the programs that read it (shared_packs.h)");
  line_("#ifdef NT_CPU");
  line_("volatile __global int* " + flag + " = (volatile __global int*)nt_ws + (" +
        c(simplify(region.flag, env_)) + ") + (" + index + ");");
  line_("const int " + mode + " = nt_claim_slot(" + flag + ", nt_ws_on && (" +
        c(simplify(slot->shares, env_)) + "));");
  line_(std::string(kSharedSpace) + " " + type + "* " + at + " = " + mode + " ? (__global " + type +
        "*)((__global char*)nt_ws + NT_WS_SLOTS + (" + c(simplify(region.slot, env_)) + ")) + (" + index +
        ") * (" + c(simplify(elements, env_)) + ") : (__global " + type + "*)(ulong)" + name + ";");
  line_("#else");
  line_("volatile __global int* " + flag + " = 0;");
  line_("const int " + mode + " = 0;");
  line_(std::string(kSharedSpace) + " " + type + "* " + at + " = " + name + ";");
  line_("#endif");
  open("if (" + mode + " != 2)");
  pack_into(v, dtype, at);
  line_("if (" + mode + " == 1) nt_publish_slot(" + flag + ");");
  close();
  return at;
}

void Emitter::emit_dot(const Value& v, const std::string& result, bool accumulate) {
  if (group_ && !serial_) {
    emit_dot_group(v, result, accumulate);
    return;
  }
  const Value& a = v->operands[0];
  const Value& b = v->operands[1];
  DType dt = v->type.dtype;
  DotArrays d;
  if (held_array(a, dt).empty()) d.a = pack_row_runs(a, dt);
  d.a_k_major = !d.a.empty();
  bool shared = false;
  if (d.a.empty()) d.a = as_shared_array(a, dt, "a dot operand", shared);
  if (shared) d.a_space = kSharedSpace;
  d.b = as_shared_array(b, dt, "a dot operand", shared);
  d.result = result;
  d.M = c(simplify(a->type.shape[0], env_));
  d.K = c(simplify(a->type.shape[1], env_));
  d.N = c(simplify(b->type.shape[1], env_));
  d.type = compute_type(dt);
  d.accumulate = accumulate;
  emit_dot_kernel(*this, d);
}

void Emitter::emit_reduce(const Value& v) {
  distributable_ = false;
  if (group_ && !serial_) {
    emit_reduce_group(v);
    return;
  }
  auto fn = static_cast<ReduceFn>(v->op);
  const Value& x = v->operands[0];
  DType in = x->type.dtype;
  std::string ct = compute_type(v->type.dtype), xt = compute_type(in);
  bool f = dtype_is_float(in);
  std::string name = fresh("nt_red");
  bool arg = fn == ReduceFn::ArgMax || fn == ReduceFn::ArgMin;
  std::string init = reduce_init(fn, in);
  // Shapes: the reduced axes and the kept ones.
  const std::vector<Expr>& shape = x->type.shape;
  std::vector<Expr> kept, reduced;
  for (size_t d = 0; d < shape.size(); ++d) {
    bool r = v->axis < 0 || static_cast<int>(d) == v->axis;
    (r ? reduced : kept).push_back(shape[d]);
  }
  bool scalar = kept.empty() && v->type.is_scalar();
  if (scalar) {
    line_(ct + " " + name + ";");
  } else {
    line_(ct + " " + name + "[" + array_size(v->type.shape, "a reduction result", v->type.dtype) + "];");
  }
  auto combine = [&](const std::string& acc, const std::string& best_index, const std::string& value,
                     const std::string& flat) {
    switch (fn) {
      case ReduceFn::Sum:
      case ReduceFn::Max:
      case ReduceFn::Min:
        line_(acc + " = " + combine_c(fn, f, acc, value) + ";");
        break;
      case ReduceFn::ArgMax:
      case ReduceFn::ArgMin: {
        line_("const " + xt + " nt_v = " + value + ";");
        open(std::string("if (nt_v ") + (fn == ReduceFn::ArgMax ? ">" : "<") + " " + acc + ")");
        line_(acc + " = nt_v;");
        line_(best_index + " = " + flat + ";");
        close();
      }
    }
  };
  // Outer loops over the kept dims, inner loops over the reduced ones.
  nest(
      kept, {x}, nullptr,
      [&](const std::vector<Expr>& outer) {
        std::vector<Value> prefetch;  // a whole-block reduction's: see nest()
        prefetch.swap(prefetch_loads_);
        std::string acc = fresh("nt_acc"), best = fresh("nt_best");
        line_((arg ? xt : ct) + " " + acc + " = " + init + ";");
        if (arg) line_("int " + best + " = 0;");
        auto element = [&](const std::vector<Expr>& inner) {
          std::vector<Expr> full;
          size_t ko = 0, ri = 0;
          for (size_t d = 0; d < shape.size(); ++d) {
            bool r = v->axis < 0 || static_cast<int>(d) == v->axis;
            full.push_back(r ? inner[ri++] : outer[ko++]);
          }
          return "(" + (arg ? xt : ct) + ")(" + elem(x, full) + ")";
        };
        if (arg || reduced.empty()) {
          loops(reduced, [&](const std::vector<Expr>& inner) {
            combine(acc, best, element(inner), c(flat_index(reduced, inner)));
          });
        } else {
          // Independent partial results over lanes of the last reduced dim:
          // no chain of dependent operations, and a vectorisable inner loop.
          int lanes = ct == "double" || ct == "long" || ct == "ulong" ? 8 : 16;
          std::string parts = fresh("nt_parts"), lane_count = std::to_string(lanes);
          line_(ct + " " + parts + "[" + lane_count + "];");
          line_("for (int l = 0; l < " + lane_count + "; ++l) " + parts + "[l] = " + init + ";");
          std::vector<Expr> head(reduced.begin(), reduced.end() - 1);
          const Expr& last = reduced.back();
          loops(head, [&](const std::vector<Expr>& inner_head) {
            std::string size = c(simplify(last, env_));
            std::string block = fresh("eo"), lane = fresh("l"), rest = fresh("e");
            SymbolAttrs attrs;
            attrs.lower_bound = 0;
            env_.set(block, 0, std::nullopt);
            env_.set_symbolic(block, Expr(0), sub(last, 1));
            env_.set(lane, 0, lanes - 1);
            env_.set_symbolic(lane, Expr(0), sub(last, 1));
            env_.set(rest, 0, std::nullopt);
            env_.set_symbolic(rest, Expr(0), sub(last, 1));
            open("for (long " + block + " = 0; " + block + " + " + lane_count + " <= " + size + "; " + block +
                 " += " + lane_count + ")");
            // The lanes' elements first, in a loop the vectoriser handles whatever the element's
            // expression is; then the combine into the partial results, unrolled by the front end,
            // so the partial results stay in registers across the block loop (combined inside the
            // lane loop, they lived in a stack array, stored and reloaded every 16 elements).
            std::string values = fresh("nt_lanes");
            line_(ct + " " + values + "[" + lane_count + "];");
            std::vector<Expr> index = inner_head;
            index.push_back(add(var(block, attrs), var(lane, attrs)));
            if (fast_) {
              std::vector<Expr> full;
              size_t ko = 0, ri = 0;
              for (size_t d = 0; d < shape.size(); ++d) {
                bool r = v->axis < 0 || static_cast<int>(d) == v->axis;
                full.push_back(r ? index[ri++] : outer[ko++]);
              }
              bool wide = false;
              if (auto test = vector_hint_test({x}, nullptr, full, lane, wide)) {
                if (!wide && !prefetch.empty()) {
                  std::vector<Expr> first = full;
                  first[v->axis < 0 ? full.size() - 1 : static_cast<size_t>(v->axis)] = var(block, attrs);
                  emit_prefetches(prefetch, first, *test);
                }
                emit_vector_hint(*test, wide);
              }
            }
            open("for (int " + lane + " = 0; " + lane + " < " + lane_count + "; ++" + lane + ")");
            line_(values + "[" + lane + "] = " + element(index) + ";");
            close();
            line_("#pragma unroll");
            open("for (int " + lane + " = 0; " + lane + " < " + lane_count + "; ++" + lane + ")");
            combine(parts + "[" + lane + "]", best, values + "[" + lane + "]", "");
            close();
            close();
            open("for (long " + rest + " = " + size + " / " + lane_count + " * " + lane_count + "; " + rest +
                 " < " + size + "; ++" + rest + ")");
            index = inner_head;
            index.push_back(var(rest, attrs));
            combine(parts + "[" + rest + " % " + lane_count + "]", best, element(index), "");
            close();
          });
          line_("for (int l = 0; l < " + lane_count + "; ++l) {");
          ++indent_;
          combine(acc, best, parts + "[l]", "");
          close();
        }
        std::vector<Expr> out_index = outer;
        if (v->keep_dims) {
          out_index.clear();
          size_t ko2 = 0;
          for (size_t d = 0; d < shape.size(); ++d) {
            bool r = v->axis < 0 || static_cast<int>(d) == v->axis;
            out_index.push_back(r ? Expr(0) : outer[ko2++]);
          }
        }
        std::string result = arg ? best : acc;
        line_((scalar ? name : name + "[" + c(flat_index(v->type.shape, out_index)) + "]") + " = " + result +
              ";");
      },
      /*hint=*/true, nullptr, /*prefetch=*/kept.empty());
  materialized_[v.get()] = name;
}

void Emitter::declare(const std::string& name, const Type& type, const Value& value, bool mutable_,
                      const std::string& key) {
  materialize_parts(value);
  std::string ct = compute_type(type.dtype);
  if (type.is_scalar()) {
    line_(ct + " " + name + " = " + elem(value, {}) + ";");
    return;
  }
  new_array(name, type.shape, type.dtype, mutable_ ? "a loop-carried local" : "a value used twice", key);
  int let_id = -1;
  if (!mutable_ && key.rfind("let", 0) == 0) let_id = std::stoi(key.substr(3));
  write_array(name, type, value, let_id);
}

void Emitter::collect_let_reductions() {
  struct Reductions : IRVisitor {
    using IRVisitor::visit;
    void visit(const Value& v) override {
      if (v->kind == ValueKind::Reduce && v->axis < 0 && v->type.is_scalar() &&
          v->operands[0]->kind == ValueKind::LetRef && v->operands[0]->type.shape.size() > 0 &&
          seen.insert(v.get()).second) {
        auto fn = static_cast<ReduceFn>(v->op);
        std::string ct = compute_type(v->type.dtype);  // 16 partial results (emit_reduce())
        bool narrow = ct != "double" && ct != "long" && ct != "ulong";
        if (narrow && (fn == ReduceFn::Sum || fn == ReduceFn::Max || fn == ReduceFn::Min))
          by_let[v->operands[0]->id].push_back(v);
      }
      IRVisitor::visit(v);
    }
    std::set<const ValueNode*> seen;
    std::map<int, std::vector<Value>> by_let;
  } reductions;
  reductions.visit(k_.body);
  let_reductions_ = std::move(reductions.by_let);
}

void Emitter::write_array(const std::string& name, const Type& type, const Value& value, int let_id) {
  bool shared = group_ && !is_distributed(name);
  if (shared) barrier();
  std::vector<Value> folds;
  if (auto found = let_reductions_.find(let_id); found != let_reductions_.end()) folds = found->second;
  std::vector<std::string> parts;
  for (const Value& r : folds) {
    parts.push_back(fresh("nt_parts"));
    line_(compute_type(r->type.dtype) + " " + parts.back() + "[16];");
    line_("for (int l = 0; l < 16; ++l) " + parts.back() +
          "[l] = " + reduce_init(static_cast<ReduceFn>(r->op), r->operands[0]->type.dtype) + ";");
  }
  nest(
      type.shape, {value}, nullptr,
      [&](const std::vector<Expr>& i) {
        std::string element = element_of(name, type, i);
        line_(element + " = " + elem(value, i) + ";");
        for (size_t k = 0; k < folds.size(); ++k) {
          const Value& r = folds[k];
          std::string part = parts[k] + "[" + lane_of_last_ + "]";
          line_(part + " = " +
                combine_c(static_cast<ReduceFn>(r->op), dtype_is_float(r->operands[0]->type.dtype), part,
                          "(" + compute_type(r->type.dtype) + ")(" + element + ")") +
                ";");
        }
      },
      /*hint=*/true, nullptr, /*prefetch=*/true, /*strips=*/!folds.empty(), /*reorder=*/true);
  for (size_t k = 0; k < folds.size(); ++k) {
    const Value& r = folds[k];
    std::string result = fresh("nt_red"), ct = compute_type(r->type.dtype);
    line_(ct + " " + result + " = " + reduce_init(static_cast<ReduceFn>(r->op), r->operands[0]->type.dtype) +
          ";");
    open("for (int l = 0; l < 16; ++l)");
    line_(result + " = " +
          combine_c(static_cast<ReduceFn>(r->op), dtype_is_float(r->operands[0]->type.dtype), result,
                    parts[k] + "[l]") +
          ";");
    close();
    materialized_[r.get()] = result;
  }
  if (shared) barrier();
}

bool Emitter::reads_local_elsewhere(const Value& v, int id, bool remapped) {
  if (materialized_.count(v.get())) return false;
  if (v->kind == ValueKind::LocalRef) return remapped && v->id == id;
  bool r = remapped || v->kind == ValueKind::Trans || v->kind == ValueKind::Broadcast ||
           v->kind == ValueKind::ExpandDims || v->kind == ValueKind::Full || v->kind == ValueKind::Rearrange;
  for (const Value& o : v->operands) {
    if (reads_local_elsewhere(o, id, r)) return true;
  }
  return false;
}

}  // namespace nt::codegen
